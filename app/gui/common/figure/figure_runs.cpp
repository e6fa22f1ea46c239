// Starting, sharing and retiring the runs of a figure.
#include "common/figure/figure_runs.hpp"

#include <algorithm>

namespace maskscope::gui {

FigureRuns::~FigureRuns() {
  for (auto& r : runs_) r->cancel();
  for (auto& r : retired_) r->cancel();
}

void FigureRuns::update(const FigureSpec& spec) {
  std::vector<Settings> wanted;
  for (const Settings& s : figure_simulations(spec))
    if (validate(s).empty() && !stored(s)) wanted.push_back(s);
  // Retire runs nobody needs.
  for (auto it = runs_.begin(); it != runs_.end();) {
    const bool needed = std::any_of(wanted.begin(), wanted.end(),
                                    [&](const Settings& s) { return (*it)->settings().same_simulation(s); });
    if (needed) {
      ++it;
    } else {
      (*it)->abandon();
      retired_.push_back(std::move(*it));
      it = runs_.erase(it);
    }
  }
  for (const Settings& s : wanted) {
    const bool running =
        std::any_of(runs_.begin(), runs_.end(), [&](const auto& r) { return r->settings().same_simulation(s); });
    if (running) continue;
    runs_.push_back(std::make_unique<Run>(s, options_));
    if (paused_) runs_.back()->set_paused(true);
    ++started_;
  }
}

namespace {
// A stored result serves a cell with the same settings and at most its layers (layer l's numbers
// do not depend on the layers after it).
bool serves(const Settings& stored, const Settings& cell) {
  Settings a = stored;
  a.layers = cell.layers;
  return stored.layers >= cell.layers && a.same_simulation(cell);
}
}  // namespace

const Snapshot* FigureRuns::stored(const Settings& s) const {
  for (const auto& [settings, snap] : stored_)
    if (serves(settings, s)) return snap.get();
  return nullptr;
}

std::shared_ptr<const Snapshot> FigureRuns::snapshot(const Settings& s) const {
  for (const auto& [settings, snap] : stored_)
    if (serves(settings, s)) return snap;
  for (const auto& r : runs_)
    if (r->settings().same_simulation(s)) return r->snapshot();
  return nullptr;
}

FigureData FigureRuns::build(const FigureSpec& spec) const {
  return build_figure(spec, [this](const Settings& s) { return snapshot(s); });
}

bool FigureRuns::all_done() const {
  return std::all_of(runs_.begin(), runs_.end(), [](const auto& r) { return r->done(); });
}

void FigureRuns::set_paused(bool paused) {
  paused_ = paused;
  for (auto& r : runs_) r->set_paused(paused);
}

void FigureRuns::poll() {
  retired_.erase(std::remove_if(retired_.begin(), retired_.end(), [](const auto& r) { return r->done(); }),
                 retired_.end());
}

}  // namespace maskscope::gui
