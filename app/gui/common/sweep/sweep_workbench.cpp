// The Sweep tab's model (sweep_workbench.hpp).
#include "common/sweep/sweep_workbench.hpp"

#include "core/model/settings_text.hpp"
#include "core/run/sweep_output.hpp"

namespace maskscope::gui {

namespace {

// Two plans sweep the same points when every point simulates the same thing to the same cap.
bool same_points(const std::vector<Settings>& a, const std::vector<Settings>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!a[k].same_simulation(b[k]) || a[k].samples != b[k].samples) return false;
  return true;
}

}  // namespace

SweepWorkbench::~SweepWorkbench() {
  if (sweep_) sweep_->cancel();
  for (auto& r : retired_) r->cancel();
}

void SweepWorkbench::retire() {
  if (!sweep_) return;
  sweep_->cancel();  // returns at once; its threads stop within a sample
  retired_.push_back(std::move(sweep_));
}

void SweepWorkbench::start() {
  retire();
  SweepOptions o;
  o.metric = plan_.metric;
  o.target_se = view_.target_se;
  o.threads = planned_live_.threads;
  o.low_priority = true;  // the window's UI thread stays fluid; the live run shares the cores
  if (wake_) o.on_publish = [wake = wake_](const std::shared_ptr<const SweepState>&) { wake(); };
  try {
    sweep_ = std::make_unique<Sweep>(plan_.points, o);
    ++restarts_;
  } catch (const std::exception& e) {
    plan_.error = e.what();
    plan_.points.clear();
  }
  picture_stale_ = true;  // the last state stays on screen until the new sweep's first one
}

void SweepWorkbench::refresh(const Settings& live, bool active) {
  // Destroy the cancelled sweeps whose threads are done (joining them then costs nothing).
  std::erase_if(retired_, [](const std::unique_ptr<Sweep>& s) { return s->done(); });
  if (!planned_ || view_ != planned_view_ || live != planned_live_) {
    SweepPlan next = plan_sweep(view_, live);
    const bool restart = !next.error.empty() || !same_points(next.points, plan_.points) ||
                         view_.target_se != planned_view_.target_se || view_.metric != planned_view_.metric ||
                         planned_live_.threads != live.threads;
    plan_ = std::move(next);
    planned_view_ = view_;
    planned_live_ = live;
    planned_ = true;
    picture_stale_ = true;
    if (restart) {
      retire();
      state_.reset();
    }
  }
  if (!active) {
    retire();  // the picture so far stays; the sweep goes on when the tab is shown again
    return;
  }
  if (!sweep_ && !plan_.points.empty() && !(state_ && state_->finished)) start();
  if (sweep_) {
    auto s = sweep_->snapshot();
    if (s && s != state_) {
      state_ = std::move(s);
      picture_stale_ = true;
      if (!state_->error.empty()) message = state_->error, message_error = true;
    }
  }
  if (picture_stale_) {
    picture_ = layout_sweep(view_, plan_, state_.get());
    picture_stale_ = false;
  }
}

std::optional<Settings> SweepWorkbench::live_settings_at(int id, const Settings& live) const {
  if (id < 0) return std::nullopt;
  const std::size_t p = std::size_t(id / kSweepLayerSlots);
  if (p >= plan_.points.size()) return std::nullopt;
  Settings s = live;
  for (const SweepAxis& a : plan_.axes) setting_from_text(a.key, axis_value_text(plan_.points[p], a.key), s);
  if (s.model != live.model) s.gamma = plan_.points[p].gamma;  // the family's default gamma, as the point had
  return s;
}

std::string SweepWorkbench::csv() const {
  if (!state_) return "";
  return sweep_csv(plan_.axes, plan_.metric, *state_);
}

ExportResult SweepWorkbench::export_now(const std::string& dir, const Preset& preset) {
  ExportResult res;
  if (!state_) {
    res.error = "nothing to export yet: the sweep has no points computed";
  } else {
    ExportFolder folder(dir, res);
    folder.png("sweep.png", picture_.scene, export_);
    folder.text("sweep.svg", scene_to_svg(picture_.scene));
    folder.text("sweep.csv", csv());
    folder.text("preset.json", preset_to_json(preset).dump(2) + "\n");
  }
  res.ok = res.error.empty();
  message = res.ok ? "exported " + std::to_string(res.files.size()) + " files to " + dir : res.error;
  message_error = !res.ok;
  return res;
}

}  // namespace maskscope::gui
