// Starting, sharing and retiring the runs of a figure.
#include "common/figure/figure_runs.hpp"

#include <algorithm>

#include "core/model/threading.hpp"
#include "core/run/position_probes.hpp"

namespace maskscope::gui {

ProbeRequest figure_probe_request(const Settings& s) {
  ProbeRequest r;
  r.train = s.samples / 2;
  r.test = s.samples - r.train;
  r.probe.seed = s.seed;
  return r;
}

FigureRuns::~FigureRuns() {
  for (auto& r : runs_) r->cancel();
  for (auto& r : retired_) r->cancel();
  for (auto* jobs : {&probes_, &retired_probes_})
    for (auto& j : *jobs) j->cancel = true;
  for (auto* jobs : {&probes_, &retired_probes_})
    for (auto& j : *jobs)
      if (j->thread.joinable()) j->thread.join();
}

void FigureRuns::start_probes(const Settings& s) {
  auto job = std::make_unique<ProbeJob>();
  job->settings = s;
  ProbeJob* j = job.get();
  const auto errors = validate_probe(s, figure_probe_request(s));
  if (!errors.empty() || !kThreadsAvailable) {
    j->error = errors.empty() ? std::string(kNeedsThreads) : errors[0].setting + ": " + errors[0].message;
    j->done = true;
  } else {
    j->thread = std::thread([j, wake = options_.on_publish] {
      try {
        if (auto t = run_position_probes(j->settings, figure_probe_request(j->settings), &j->cancel))
          j->table = std::make_shared<const ProbeTable>(std::move(*t));
      } catch (const std::exception& e) { j->error = e.what(); }
      j->done.store(true, std::memory_order_release);
      if (wake) wake();  // the idle window waits for events: draw the probes now
    });
  }
  probes_.push_back(std::move(job));
  ++started_;
}

void FigureRuns::update(const FigureSpec& spec) {
  std::vector<Settings> wanted, probes;
  for (const Settings& s : figure_simulations(spec))
    if (validate(s).empty() && !stored(s)) (spec.kind == FigureKind::probes ? probes : wanted).push_back(s);
  // Probes: one job per distinct cell, retired (cancelled) when no cell needs it.
  for (auto it = probes_.begin(); it != probes_.end();) {
    if (std::any_of(probes.begin(), probes.end(),
                    [&](const Settings& s) { return (*it)->settings.same_simulation(s); })) {
      ++it;
    } else {
      (*it)->cancel = true;
      retired_probes_.push_back(std::move(*it));
      it = probes_.erase(it);
    }
  }
  for (const Settings& s : probes)
    if (std::none_of(probes_.begin(), probes_.end(), [&](const auto& j) { return j->settings.same_simulation(s); }))
      start_probes(s);
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

std::shared_ptr<const ProbeTable> FigureRuns::probe_table(const Settings& s) const {
  for (const auto& j : probes_)
    if (j->settings.same_simulation(s)) return j->done.load(std::memory_order_acquire) ? j->table : nullptr;
  return nullptr;
}

FigureData FigureRuns::build(const FigureSpec& spec) const {
  FigureData data = build_figure(
      spec, [this](const Settings& s) { return snapshot(s); }, [this](const Settings& s) { return probe_table(s); });
  for (const auto& j : probes_)
    if (j->done.load(std::memory_order_acquire) && !j->error.empty())
      data.note += (data.note.empty() ? "probes: " : "; ") + j->error;
  return data;
}

bool FigureRuns::all_done() const {
  return std::all_of(runs_.begin(), runs_.end(), [](const auto& r) { return r->done(); }) &&
         std::all_of(probes_.begin(), probes_.end(), [](const auto& j) { return j->done.load(); });
}

void FigureRuns::set_paused(bool paused) {
  paused_ = paused;
  for (auto& r : runs_) r->set_paused(paused);
}

void FigureRuns::poll() {
  retired_.erase(std::remove_if(retired_.begin(), retired_.end(), [](const auto& r) { return r->done(); }),
                 retired_.end());
  for (auto it = retired_probes_.begin(); it != retired_probes_.end();) {
    if (!(*it)->done.load()) {
      ++it;
      continue;
    }
    if ((*it)->thread.joinable()) (*it)->thread.join();
    it = retired_probes_.erase(it);
  }
}

}  // namespace maskscope::gui
