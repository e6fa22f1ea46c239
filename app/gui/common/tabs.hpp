// The window's tabs and their names as presets, view links and the command line spell them.
#pragma once

#include <string>
#include <string_view>

#include "core/model/enum_names.hpp"

namespace maskscope::gui {

enum class Tab { attention, diagonal, h_of_j, metrics, figure, leakage, sweep, probes, histograms, training };

inline constexpr EnumTable<Tab, 10> kTabNames{{{Tab::attention, "attention"},
                                               {Tab::diagonal, "diagonal"},
                                               {Tab::h_of_j, "hofj"},
                                               {Tab::metrics, "metrics"},
                                               {Tab::figure, "figure"},
                                               {Tab::leakage, "leakage"},
                                               {Tab::sweep, "sweep"},
                                               {Tab::probes, "probes"},
                                               {Tab::histograms, "histograms"},
                                               {Tab::training, "training"}}};

inline std::string_view to_string(Tab t) { return enum_name(kTabNames, t); }
// Throws std::runtime_error naming `what` and the valid names.
inline Tab parse_tab(const std::string& text, const std::string& what) {
  return enum_value_or_throw(kTabNames, text, what);
}

}  // namespace maskscope::gui
