// The view options as JSON (presets' and lessons' "view").
#include "common/view_options.hpp"

#include <stdexcept>

#include "core/model/settings.hpp"  // Limits
#include "core/model/strict_number.hpp"

namespace maskscope::gui {

std::string_view to_string(RangeMode r) { return enum_name(kRangeModeNames, r); }
RangeMode parse_range_mode(const std::string& text, const std::string& what) {
  return enum_value_or_throw(kRangeModeNames, text, what);
}

nlohmann::json view_to_json(const ViewOptions& v) {
  return {{"tab", to_string(v.tab)},
          {"show", to_string(v.quantity)},
          {"colormap", enum_name(kColormapNames, v.sequential)},
          {"diverging", enum_name(kColormapNames, v.diverging)},
          {"hide_diagonal", v.hide_diagonal},
          {"range", to_string(v.range)},
          {"grey_noise", v.grey_noise},
          {"shared_range", v.shared_range},
          {"theme", v.light_theme ? "light" : "dark"},
          {"head", v.head}};
}

void view_from_json(const nlohmann::json& j, ViewOptions& out) {
  if (!j.is_object()) throw std::runtime_error("view: expected an object");
  ViewOptions v = out;
  auto text = [&](const char* key) -> std::string {
    const auto& x = j.at(key);
    if (!x.is_string()) throw std::runtime_error(std::string("view.") + key + ": expected a string");
    return x.get<std::string>();
  };
  auto flag = [&](const char* key) {
    const auto& x = j.at(key);
    if (!x.is_boolean()) throw std::runtime_error(std::string("view.") + key + ": expected true or false");
    return x.get<bool>();
  };
  for (const auto& [key, value] : j.items()) {
    if (key == "tab") v.tab = parse_tab(text("tab"), "view.tab");
    else if (key == "show") v.quantity = parse_quantity(text("show"), "view.show");
    else if (key == "colormap") {
      v.sequential = parse_colormap(text("colormap"), "view.colormap");
      if (colormap(v.sequential).diverging) throw std::runtime_error("view.colormap: valid: rocket, viridis, magma");
    } else if (key == "diverging") {
      v.diverging = parse_colormap(text("diverging"), "view.diverging");
      if (!colormap(v.diverging).diverging) throw std::runtime_error("view.diverging: valid: rdbu, coolwarm");
    } else if (key == "hide_diagonal") v.hide_diagonal = flag("hide_diagonal");
    else if (key == "shared_range") v.shared_range = flag("shared_range");
    else if (key == "range") v.range = parse_range_mode(text("range"), "view.range");
    else if (key == "grey_noise") v.grey_noise = flag("grey_noise");
    else if (key == "head") v.head = int(whole_number("view.head", value, -1, Limits::heads_max - 1));
    else if (key == "theme") {
      const std::string t = text("theme");
      if (t != "dark" && t != "light") throw std::runtime_error("view.theme: '" + t + "'; valid: dark, light");
      v.light_theme = t == "light";
    } else {
      throw std::runtime_error(
          "view: unknown key '" + key +
          "'; valid: tab, show, colormap, diverging, hide_diagonal, range, grey_noise, shared_range, theme, head");
    }
  }
  out = v;
}

}  // namespace maskscope::gui
