// Links that open a view (issue 37): the browser build reads its settings from the page's URL query
// (?preset=behind-rope-fig4&tab=diagonal, ?alpha=0.5&d=16&layers=4&tab=attention) with the window's
// command-line names and checks, and its "Copy link" writes the current view's query. Window-free, so
// that the desktop's tests check both directions.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/model/settings.hpp"
#include "common/view_options.hpp"

namespace maskscope::gui {

using LinkQuery = std::vector<std::pair<std::string, std::string>>;

// The window's command line for a link's query: a setting key (n, alpha, norm, ...) gives
// `--set key=value`; preset, tab, show, range, theme, samples, lesson, step and hide-diagonal give
// their own option; present=1 gives --present. The parser of the command line (app_options.hpp) then
// checks every value as it checks the desktop's. `page_keys` (such as "json") belong to the page
// and are skipped. An unknown name is an error naming the valid ones (added to `errors`).
std::vector<std::string> link_arguments(const LinkQuery& query, const std::vector<std::string>& page_keys,
                                        std::vector<std::string>& errors);

// The query of a view: every setting that differs from its default (in the order of setting_keys()),
// then the tab, and show / range / theme where they differ from the defaults. Values are as
// `--set` reads them; the characters outside [A-Za-z0-9._~-] percent-encoded.
std::string view_query(const Settings& s, const ViewOptions& v);

// Percent-decoding of one query component ('+' is a space); malformed escapes stay as typed.
std::string percent_decode(const std::string& text);
// Splits "a=1&b=2" (a leading '?' is skipped) into decoded pairs; "flag" alone gives ("flag", "").
LinkQuery parse_query(const std::string& query);

}  // namespace maskscope::gui
