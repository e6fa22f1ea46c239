// The figure workflow's state and its export (see figure_workbench.hpp).
#include "common/figure/figure_workbench.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>

namespace maskscope::gui {

std::string layers_to_text(const std::vector<int>& layers) {
  std::string out;
  for (int l : layers) out += (out.empty() ? "" : ",") + std::to_string(l);
  return out;
}

bool parse_layers(const std::string& text, std::vector<int>& out) {
  std::vector<int> v;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long l = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str() || *end != '\0' || l < 0 || l > Limits::layers_max) return false;  // 0: the embeddings
    v.push_back(int(l));
  }
  if (v.empty()) return false;
  out = v;
  return true;
}

void FigureWorkbench::load(const Preset& p) {
  spec_ = p.figure;
  layers_text_ = layers_to_text(spec_.layers);
  export_ = p.export_options;
  preset_name_ = p.name.empty() ? "untitled" : p.name;
  preset_description_ = p.description;
  refresh(true);
}

Preset FigureWorkbench::preset(const Settings& live, const ViewOptions& view) const {
  Preset p;
  p.name = preset_name_;
  p.description = preset_description_;
  p.settings = live;
  p.view = view;
  p.figure = spec_;
  p.export_options = export_;
  return p;
}

void FigureWorkbench::refresh(bool force) {
  if (!(spec_ == running_spec_)) {
    runs_.update(spec_);
    running_spec_ = spec_;
    force = true;
  }
  runs_.poll();
  const auto now = std::chrono::steady_clock::now();
  // Once every run has finished, the final picture at once: a screenshot or export taken when the runs are
  // done must not show a build from up to 100 ms before (97-98% of the rows' samples; issue 48).
  if (force || (!data_.complete && (runs_.all_done() || now - built_ > std::chrono::milliseconds(100)))) {
    data_ = runs_.build(spec_);
    scene_ = layout_figure(data_);
    built_ = now;
  }
}

ExportResult FigureWorkbench::export_now(const std::string& dir, const Preset& preset) {
  refresh(true);
  ExportResult r = export_figure(data_, preset, dir, export_);
  char buf[256];
  if (r.ok)
    std::snprintf(buf, sizeof buf, "exported %zu files to %s (PNG %dx%d)%s", r.files.size(), dir.c_str(), r.png_width,
                  r.png_height, data_.complete ? "" : " - runs not finished yet");
  else std::snprintf(buf, sizeof buf, "export failed: %s", r.error.c_str());
  message = buf;
  message_error = !r.ok;
  return r;
}

std::string FigureWorkbench::next_screenshot_path() const {
  std::error_code ec;
  std::filesystem::create_directories(export_dir_, ec);
  for (int k = 1; k < 100000; ++k) {
    char name[64];
    std::snprintf(name, sizeof name, "maskscope-screenshot-%03d.png", k);
    const auto p = std::filesystem::path(export_dir_) / name;
    if (!std::filesystem::exists(p)) return p.string();
  }
  return (std::filesystem::path(export_dir_) / "maskscope-screenshot.png").string();
}

}  // namespace maskscope::gui
