// The Figure tab (rows, columns, difference mode, export, live preview of the exported figure)
// and the Presets menu.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/result_json.hpp"
#include "views.hpp"

namespace maskscope::gui {

namespace {

ImU32 to_u32(const Rgba& c) { return ImGui::ColorConvertFloat4ToU32(ImVec4(c.r, c.g, c.b, c.a)); }

// Draws the scene into `dl` with its origin at `o` and `s` screen pixels per scene unit.
void draw_scene(ImDrawList* dl, const Scene& scene, ImVec2 o, float s) {
  auto P = [&](float x, float y) { return ImVec2(o.x + x * s, o.y + y * s); };
  dl->AddRectFilled(P(0, 0), P(scene.width, scene.height), to_u32(scene.background));
  ImFont* font = ImGui::GetFont();
  for (const SceneItem& item : scene.items) {
    if (const auto* r = std::get_if<SceneRect>(&item)) {
      if (r->fill.a > 0) dl->AddRectFilled(P(r->x0, r->y0), P(r->x1, r->y1), to_u32(r->fill));
      if (r->stroke_width > 0) dl->AddRect(P(r->x0, r->y0), P(r->x1, r->y1), to_u32(r->stroke), 0, 0, std::max(1.0f, r->stroke_width * s));
    } else if (const auto* h = std::get_if<SceneHeatmap>(&item)) {
      for (int i = 0; i < h->n; ++i) {
        const float y0 = h->y0 + (h->y1 - h->y0) * float(i) / float(h->n), y1 = h->y0 + (h->y1 - h->y0) * float(i + 1) / float(h->n);
        for (int j = 0; j < h->n; ++j) {
          const float x0 = h->x0 + (h->x1 - h->x0) * float(j) / float(h->n), x1 = h->x0 + (h->x1 - h->x0) * float(j + 1) / float(h->n);
          // Snap to whole pixels so that neighbouring cells meet without seams.
          const ImVec2 a = P(x0, y0), b = P(x1, y1);
          dl->AddRectFilled(ImVec2(std::round(a.x), std::round(a.y)), ImVec2(std::round(b.x), std::round(b.y)),
                            to_u32(h->cells[std::size_t(i) * std::size_t(h->n) + std::size_t(j)]));
        }
      }
    } else if (const auto* b = std::get_if<SceneColorbar>(&item)) {
      const std::size_t k = b->stops.size();
      for (std::size_t m = 0; m + 1 < k; ++m) {
        const float y1 = b->y1 - (b->y1 - b->y0) * float(m) / float(k - 1), y0 = b->y1 - (b->y1 - b->y0) * float(m + 1) / float(k - 1);
        const ImU32 lo = to_u32(b->stops[m]), hi = to_u32(b->stops[m + 1]);
        dl->AddRectFilledMultiColor(P(b->x0, y0), P(b->x1, y1), hi, hi, lo, lo);
      }
    } else if (const auto* t = std::get_if<SceneText>(&item)) {
      const float size = t->size * s;
      const ImVec2 ext = font->CalcTextSizeA(size, FLT_MAX, 0.0f, t->text.c_str());
      const float shift = t->anchor == Anchor::start ? 0 : t->anchor == Anchor::middle ? ext.x / 2 : ext.x;
      const float ascent = font->Ascent * size / font->FontSize;
      const ImVec2 at = P(t->x, t->y);
      if (!t->vertical) {
        dl->AddText(font, size, ImVec2(at.x - shift, at.y - ascent), to_u32(t->color), t->text.c_str());
        continue;
      }
      // Vertical: lay the text out horizontally about the clip rectangle's centre (so no glyph is
      // culled), then turn the glyph quads by -90 degrees onto the anchor point.
      const ImVec4 clip = dl->GetClipRectMin().x < dl->GetClipRectMax().x
                              ? ImVec4(dl->GetClipRectMin().x, dl->GetClipRectMin().y, dl->GetClipRectMax().x, dl->GetClipRectMax().y)
                              : ImVec4(0, 0, 0, 0);
      const ImVec2 c((clip.x + clip.z) / 2, (clip.y + clip.w) / 2);
      const int first = dl->VtxBuffer.Size;
      dl->AddText(font, size, ImVec2(c.x - shift, c.y - ascent), to_u32(t->color), t->text.c_str());
      for (int v = first; v < dl->VtxBuffer.Size; ++v) {
        ImVec2& p = dl->VtxBuffer[v].pos;
        const float dx = p.x - c.x, dy = p.y - c.y;
        p = ImVec2(at.x + dy, at.y - dx);
      }
    } else if (const auto* p = std::get_if<ScenePath>(&item)) {
      std::vector<ImVec2> pts;
      for (const auto& q : p->points) pts.push_back(P(q[0], q[1]));
      dl->AddPolyline(pts.data(), int(pts.size()), to_u32(p->color), 0, std::max(1.0f, p->width * s));
    } else if (const auto* m = std::get_if<SceneMarker>(&item)) {
      dl->AddCircleFilled(P(m->x, m->y), std::max(1.5f, m->radius * s), to_u32(m->fill));
    }
  }
}

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
    if (end == item.c_str() || l < Limits::layers_min || l > Limits::layers_max) return false;
    v.push_back(int(l));
  }
  if (v.empty()) return false;
  out = v;
  return true;
}

bool input_string(const char* label, std::string& s, float width) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s", s.c_str());
  ImGui::SetNextItemWidth(width);
  if (ImGui::InputText(label, buf, sizeof buf)) {
    s = buf;
    return true;
  }
  return false;
}

}  // namespace

void Views::apply_preset(const Preset& p) {
  controller_.edit(p.settings);
  controller_.commit_undo_point();
  const bool light = view_.light_theme;
  view_ = p.view;
  view_.light_theme = light;  // the theme is the user's, not the figure's
  requested_tab_ = true;
  figure_ = p.figure;
  layers_text_ = layers_to_text(figure_.layers);
  export_ = p.export_options;
  preset_name_ = p.name.empty() ? "untitled" : p.name;
  preset_description_ = p.description;
  refresh_figure(true);
}

Preset Views::current_preset() const {
  Preset p;
  p.name = preset_name_;
  p.description = preset_description_;
  p.settings = controller_.settings();
  p.view = view_;
  p.figure = figure_;
  p.export_options = export_;
  return p;
}

bool Views::load_preset(const std::string& path, std::string& error) {
  Preset p;
  if (const Preset* shipped = find_shipped_preset(path)) p = *shipped;
  else if (!load_preset_file(path, p, error)) return false;
  apply_preset(p);
  return true;
}

bool Views::figure_complete() const { return figure_runs_.all_done(); }

void Views::refresh_figure(bool force) {
  if (!(figure_ == running_figure_)) {
    figure_runs_.update(figure_);
    running_figure_ = figure_;
    force = true;
  }
  figure_runs_.poll();
  const auto now = std::chrono::steady_clock::now();
  // While runs refine, rebuild the figure ten times a second; at once after any edit.
  if (force || (!figure_data_.complete && now - figure_built_ > std::chrono::milliseconds(100))) {
    figure_data_ = figure_runs_.build(figure_);
    figure_scene_ = layout_figure(figure_data_);
    figure_built_ = now;
  }
}

ExportResult Views::export_figure_now(const std::string& dir) {
  refresh_figure(true);
  ExportResult r = export_figure(figure_data_, current_preset(), dir, export_);
  char buf[256];
  if (r.ok)
    std::snprintf(buf, sizeof buf, "exported %zu files to %s (PNG %dx%d)%s", r.files.size(), dir.c_str(), r.png_width,
                  r.png_height, figure_data_.complete ? "" : " - runs not finished yet");
  else
    std::snprintf(buf, sizeof buf, "export failed: %s", r.error.c_str());
  message_ = buf;
  message_error_ = !r.ok;
  return r;
}

std::string Views::next_screenshot_path() {
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

void Views::draw_menu() {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("Presets")) {
    for (const Preset& p : shipped_presets()) {
      if (ImGui::MenuItem(p.name.c_str())) apply_preset(p);
      if (ImGui::IsItemHovered() && !p.description.empty()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
        ImGui::TextUnformatted(p.description.c_str());
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
      }
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Load preset file...")) open_load_ = true;
    if (ImGui::MenuItem("Save preset as...")) open_save_ = true;
    ImGui::EndMenu();
  }
  ImGui::TextDisabled("  %s", preset_name_.c_str());
  ImGui::EndMenuBar();

  if (open_load_) ImGui::OpenPopup("Load preset");
  if (open_save_) ImGui::OpenPopup("Save preset");
  open_load_ = open_save_ = false;
  for (const bool save : {false, true}) {
    if (!ImGui::BeginPopupModal(save ? "Save preset" : "Load preset", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) continue;
    ImGui::TextUnformatted(save ? "Write the settings, view and figure to a JSON preset:" : "Preset file (JSON) or a shipped preset's name:");
    input_string("##path", preset_path_, ImGui::GetFontSize() * 28);
    if (ImGui::Button(save ? "Save" : "Load")) {
      std::string error;
      bool ok;
      if (save) {
        Preset p = current_preset();
        p.name = std::filesystem::path(preset_path_).stem().string();
        ok = save_preset_file(preset_path_, p, error);
        if (ok) preset_name_ = p.name;
      } else {
        ok = load_preset(preset_path_, error);
      }
      message_ = ok ? (save ? "saved " : "loaded ") + preset_path_ : error;
      message_error_ = !ok;
      if (ok) ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    if (message_error_ && !message_.empty()) ImGui::TextColored(ImVec4(0.9f, 0.3f, 0.25f, 1), "%s", message_.c_str());
    ImGui::EndPopup();
  }
}

void Views::draw_figure_rows() {
  const float fh = ImGui::GetFontSize();
  if (ImGui::Button("Add current settings as a row")) {
    figure_.rows.push_back({"", controller_.settings(), view_.quantity,
                            view_.tab == Tab::diagonal ? Transform::diagonal_normalized : Transform::raw});
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fh * 5);
  char lbuf[64];
  std::snprintf(lbuf, sizeof lbuf, "%s", layers_text_.c_str());
  if (ImGui::InputText("layers", lbuf, sizeof lbuf)) {
    layers_text_ = lbuf;
    parse_layers(layers_text_, figure_.layers);
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Columns: layers separated by commas, e.g. 1,2 or 1,2,3,4");
  ImGui::SameLine();
  ImGui::BeginDisabled(figure_.rows.size() < 2 || figure_.kind != FigureKind::heatmaps);
  ImGui::Checkbox("difference B - A", &figure_.difference);
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Rows 2.. minus row 1 on a symmetric diverging scale; same seed = same random draws");
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::Checkbox("one range", &figure_.shared_range);
  ImGui::SameLine();
  ImGui::Checkbox("hide diagonal", &figure_.hide_diagonal);
  ImGui::SameLine();
  ImGui::Checkbox("metric", &figure_.show_metric);

  if (figure_.rows.empty()) {
    ImGui::TextDisabled("No rows yet: set up a configuration and press \"Add current settings as a row\", or pick a preset.");
    return;
  }
  const float table_h = std::min(float(figure_.rows.size() + 1) * ImGui::GetFrameHeightWithSpacing() + fh * 0.5f, fh * 9.5f);
  if (!ImGui::BeginTable("##rows", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY,
                         ImVec2(0, table_h)))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed, fh * 1.5f);
  ImGui::TableSetupColumn("label", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("settings", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("show", ImGuiTableColumnFlags_WidthFixed, fh * 6);
  ImGui::TableSetupColumn("map", ImGuiTableColumnFlags_WidthFixed, fh * 8);
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, fh * 6.5f);
  ImGui::TableHeadersRow();
  int move_from = -1, move_to = -1, remove = -1;
  for (std::size_t r = 0; r < figure_.rows.size(); ++r) {
    FigureRow& row = figure_.rows[r];
    ImGui::PushID(int(r));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%s", figure_.difference ? (r == 0 ? "A" : "B") : std::to_string(r + 1).c_str());
    ImGui::TableNextColumn();
    std::string label = row.label.empty() ? short_label(row.settings) : row.label;
    if (input_string("##label", label, -1)) row.label = label == short_label(row.settings) ? "" : label;
    ImGui::TableNextColumn();
    ImGui::Text("n=%d d=%d %s", row.settings.n, row.settings.d, short_label(row.settings).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", settings_to_json(row.settings).dump().c_str());
    ImGui::TableNextColumn();
    int q = static_cast<int>(row.quantity);
    ImGui::SetNextItemWidth(-1);
    if (ImGui::Combo("##show", &q, "S\0A\0cos\0")) row.quantity = static_cast<Quantity>(q);
    ImGui::TableNextColumn();
    int t = static_cast<int>(row.transform);
    ImGui::SetNextItemWidth(-1);
    if (ImGui::Combo("##map", &t, "raw\0diag.-normalized\0")) row.transform = static_cast<Transform>(t);
    ImGui::TableNextColumn();
    if (ImGui::ArrowButton("##up", ImGuiDir_Up) && r > 0) move_from = int(r), move_to = int(r) - 1;
    ImGui::SameLine(0, 2);
    if (ImGui::ArrowButton("##down", ImGuiDir_Down) && r + 1 < figure_.rows.size()) move_from = int(r), move_to = int(r) + 1;
    ImGui::SameLine(0, 2);
    if (ImGui::SmallButton("x")) remove = int(r);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Delete this row");
    ImGui::PopID();
  }
  ImGui::EndTable();
  if (move_from >= 0) std::swap(figure_.rows[std::size_t(move_from)], figure_.rows[std::size_t(move_to)]);
  if (remove >= 0) figure_.rows.erase(figure_.rows.begin() + remove);
  if (figure_.rows.size() < 2) figure_.difference = false;
}

void Views::draw_figure() {
  const float fh = ImGui::GetFontSize();
  draw_figure_rows();
  for (const auto& e : validate(figure_)) ImGui::TextColored(ImVec4(0.9f, 0.3f, 0.25f, 1), "%s: %s", e.setting.c_str(), e.message.c_str());

  // Export line: folder, size, button, last result.
  input_string("folder", export_dir_, fh * 14);
  ImGui::SameLine();
  int size_mode = export_.width > 0 ? 3 : export_.scale >= 3.5 ? 2 : export_.scale >= 1.5 ? 1 : 0;
  ImGui::SetNextItemWidth(fh * 6.5f);
  if (ImGui::Combo("PNG size", &size_mode, "1x\0002x\0004x\0width px\0")) {
    if (size_mode < 3) export_ = {size_mode == 0 ? 1.0 : size_mode == 1 ? 2.0 : 4.0, 0};
    else export_.width = std::max(export_.width, int(std::lround(figure_scene_.width * 2)));
  }
  if (size_mode == 3) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 5);
    ImGui::InputInt("##width", &export_.width, 100, 500);
    export_.width = std::clamp(export_.width, 64, 16384);
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(figure_.rows.empty());
  if (ImGui::Button("Export figure")) export_figure_now(export_dir_);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("figure.png, figure.svg, one CSV per panel, figure.json and preset.json. F12: window screenshot.");
  if (!message_.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(message_error_ ? ImVec4(0.9f, 0.3f, 0.25f, 1) : ImVec4(0.5f, 0.8f, 0.5f, 1), "%s", message_.c_str());
  }
  if (figure_data_.samples_target > 0) {
    ImGui::SameLine();
    ImGui::TextDisabled("  %zu runs, %.0f%%", figure_runs_.run_count(),
                        100.0 * double(figure_data_.samples_done) / double(figure_data_.samples_target));
  }

  // Preview: the export's own layout on a white page, fitted into the remaining space.
  if (figure_.rows.empty() || figure_scene_.width <= 0) return;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float s = std::min(avail.x / figure_scene_.width, avail.y / figure_scene_.height);
  if (s <= 0) return;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  draw_scene(ImGui::GetWindowDrawList(), figure_scene_, origin, s);
  ImGui::Dummy(ImVec2(figure_scene_.width * s, figure_scene_.height * s));
}

}  // namespace maskscope::gui
