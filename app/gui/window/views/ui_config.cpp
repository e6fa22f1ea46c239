// The window's remembered settings file (see ui_config.hpp).
#include "window/views/ui_config.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/formats/atomic_file.hpp"
#include "core/model/input_file.hpp"

namespace maskscope::gui {

namespace {

// The presentation scale is remembered across sessions in $XDG_CONFIG_HOME/maskscope/ui.json
// (or ~/.config/maskscope/ui.json).
std::filesystem::path ui_config_path() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "maskscope" / "ui.json";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".config" / "maskscope" / "ui.json";
  return {};
}

}  // namespace

float load_presentation_scale(float fallback) {
  const auto path = ui_config_path();
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return fallback;
  try {
    const auto j = nlohmann::json::parse(read_input_file(path.string(), kMaxTextInputBytes, "the window settings"));
    if (j.contains("presentation_scale") && j.at("presentation_scale").is_number())
      return std::clamp(j.at("presentation_scale").get<float>(), kPresentationScaleMin, kPresentationScaleMax);
  } catch (const std::exception&) {
    // a damaged settings file is ignored: the default scale applies
  }
  return fallback;
}

void save_presentation_scale(float scale) {
  const auto path = ui_config_path();
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::string error;
  write_file_atomic(path.string(), nlohmann::json{{"presentation_scale", scale}}.dump() + "\n", error);
}

}  // namespace maskscope::gui
