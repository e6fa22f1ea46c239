#include "common/view_link.hpp"

#include <algorithm>
#include <cstdio>

#include "core/model/input_file.hpp"
#include "core/model/settings_text.hpp"
#include "common/figure/figure.hpp"
#include "common/lesson/lesson.hpp"

namespace maskscope::gui {

namespace {

// The window's options a link may carry (app_options.cpp reads them), by their link names.
constexpr const char* kViewKeys[] = {"preset",  "tab",    "show", "range",   "theme",
                                     "samples", "lesson", "step", "present", "hide-diagonal"};

std::string percent_encode(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
        c == '~' || c == '-') {
      out += char(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", unsigned(c));
      out += hex;
    }
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A setting's value as `--set` reads it (numbers in JSON's shortest form, which reads back exactly).
std::string setting_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  return v.dump();
}

}  // namespace

std::string percent_decode(const std::string& text) {
  std::string out;
  for (std::size_t k = 0; k < text.size(); ++k) {
    if (text[k] == '+') {
      out += ' ';
    } else if (text[k] == '%' && k + 2 < text.size() && hex_value(text[k + 1]) >= 0 && hex_value(text[k + 2]) >= 0) {
      out += char(hex_value(text[k + 1]) * 16 + hex_value(text[k + 2]));
      k += 2;
    } else {
      out += text[k];
    }
  }
  return out;
}

LinkQuery parse_query(const std::string& query) {
  LinkQuery out;
  std::size_t k = !query.empty() && query[0] == '?' ? 1 : 0;
  while (k < query.size()) {
    std::size_t end = query.find('&', k);
    if (end == std::string::npos) end = query.size();
    const std::string part = query.substr(k, end - k);
    if (!part.empty()) {
      const std::size_t eq = part.find('=');
      if (eq == std::string::npos) out.emplace_back(percent_decode(part), "");
      else out.emplace_back(percent_decode(part.substr(0, eq)), percent_decode(part.substr(eq + 1)));
    }
    k = end + 1;
  }
  return out;
}

std::vector<std::string> link_arguments(const LinkQuery& query, const std::vector<std::string>& page_keys,
                                        std::vector<std::string>& errors) {
  std::vector<std::string> args;
  const auto& keys = setting_keys();
  for (const auto& [name, value] : query) {
    if (std::find(page_keys.begin(), page_keys.end(), name) != page_keys.end()) continue;
    if (name == "present") {
      if (value == "1" || value == "true" || value.empty()) args.push_back("--present");
      else if (value != "0" && value != "false")
        errors.push_back("link: present: '" + printable(value) + "'; valid: 0, 1");
    } else if (name == "preset" && !find_shipped_preset(value)) {
      // A link names only what ships with maskscope: never a path (?preset=/dev/urandom) or a URL.
      std::string valid;
      for (const Preset& p : shipped_presets()) valid += (valid.empty() ? "" : ", ") + p.name;
      errors.push_back("link: preset '" + printable(value) + "' is not a shipped preset; valid: " + valid);
    } else if (name == "lesson" && !find_shipped_lesson(value)) {
      std::string valid;
      for (const Lesson& l : shipped_lessons()) valid += (valid.empty() ? "" : ", ") + l.name;
      errors.push_back("link: lesson '" + printable(value) + "' is not a shipped lesson; valid: " + valid);
    } else if (name == "tokens" && value.rfind("builtin:", 0) != 0 && !value.empty()) {
      errors.push_back("link: tokens '" + printable(value) +
                       "' is not a built-in token file; a link names only builtin:... files");
    } else if (std::find(std::begin(kViewKeys), std::end(kViewKeys), name) != std::end(kViewKeys)) {
      // (samples too: --samples also sets a preset's figure rows and caps a lesson's steps)
      args.push_back("--" + name);
      args.push_back(value);
    } else if (std::find(keys.begin(), keys.end(), name) != keys.end()) {
      args.push_back("--set");
      args.push_back(name + "=" + value);
    } else {
      std::string valid;
      for (const char* v : kViewKeys) valid += std::string(valid.empty() ? "" : ", ") + v;
      errors.push_back("link: unknown name '" + printable(name) + "'; valid: " + valid + " and the settings " +
                       setting_keys_text());
    }
  }
  return args;
}

std::string view_query(const Settings& s, const ViewOptions& v) {
  std::string out;
  auto add = [&](const std::string& key, const std::string& value) {
    out += (out.empty() ? "" : "&") + percent_encode(key) + "=" + percent_encode(value);
  };
  const nlohmann::json now = settings_to_json(s), defaults = settings_to_json(Settings{});
  for (const std::string& key : setting_keys()) {
    if (!now.contains(key) || now[key].is_null()) continue;
    if (key == "threads") continue;  // the page's own thread count, not the view
    if (defaults.contains(key) && defaults[key] == now[key]) continue;
    // Only the settings of this model family (--set refuses the other family's).
    if (const auto family = setting_family(key); family && *family != s.model) continue;
    add(key, setting_text(now[key]));
  }
  const ViewOptions d;
  add("tab", std::string(to_string(v.tab)));
  if (v.quantity != d.quantity) add("show", std::string(to_string(v.quantity)));
  if (v.range != d.range) add("range", std::string(to_string(v.range)));
  if (v.light_theme != d.light_theme) add("theme", v.light_theme ? "light" : "dark");
  if (v.hide_diagonal != d.hide_diagonal) add("hide-diagonal", v.hide_diagonal ? "1" : "0");
  return out;
}

}  // namespace maskscope::gui
