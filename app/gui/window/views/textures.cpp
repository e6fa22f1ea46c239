// The heatmaps on screen: panels from the newest snapshot (built here or on the builder's thread),
// their texture uploads, and the fade between a lesson step's maps and the next run's.
#include "window/views/views.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace maskscope::gui {

namespace {
constexpr double kTransitionSeconds = 0.3;
}  // namespace

void Views::refresh_textures() {
  auto snap = controller_.snapshot();
  const int restarts = controller_.restarts();
  // Panels built in the background: on screen now unless the view or the run changed since they
  // were asked for. Their texels are ready; only the upload is left for this frame.
  auto is_requested = [this](const std::shared_ptr<const Snapshot>& p) {
    return !requested_.expired() && !requested_.owner_before(p) && !p.owner_before(requested_);
  };
  if (builder_.take(built_) && built_.view == view_ && built_.tag == restarts && is_requested(built_.snap)) {
    std::swap(on_screen_, built_);
    built_.snap.reset();  // the picture before: its memory goes back as soon as nobody else holds it
    const auto begin = std::chrono::steady_clock::now();
    for (std::size_t k = 0; k < on_screen_.panels.size(); ++k)
      if (!on_screen_.panels[k].norms) renderer_.upload(int(k), on_screen_.texels[k], on_screen_.panels[k].n);
    picture_shown(on_screen_.build_time + (std::chrono::steady_clock::now() - begin));
    now_on_screen();
  }
  if (snap == on_screen_.snap && view_ == on_screen_.view) return;
  const bool new_run = shown_restart_ != restarts;
  if (snap->samples_done == 0 && !new_run) return;
  // From n 128 the panels of a picture with samples are built in the background (a new run's first
  // too): the frame keeps what it shows until they are ready, a few ms later, and stays short. A
  // change of view and a transition are built here, on this frame.
  const bool background = snap->samples_done > 0 && snap->settings.n >= kBackgroundPanelsFrom &&
                          view_ == on_screen_.view && !transition_running();
  if (background) {
    if (!is_requested(snap)) {
      requested_ = snap;
      builder_.request(snap, view_, restarts);
    }
    return;
  }
  requested_.reset();
  const auto begin = std::chrono::steady_clock::now();
  on_screen_.snap = snap;
  on_screen_.view = view_;
  build_panels(*snap, view_, on_screen_.panels);
  on_screen_.texels.resize(on_screen_.panels.size());
  for (std::size_t k = 0; k < on_screen_.panels.size(); ++k) {
    const PanelData& p = on_screen_.panels[k];
    if (p.norms) continue;  // bars, no texture
    panel_texels(p, on_screen_.texels[k]);
    renderer_.upload(int(k), on_screen_.texels[k], p.n);
  }
  on_screen_.build_time = std::chrono::steady_clock::now() - begin;
  if (snap->samples_done > 0) picture_shown(on_screen_.build_time);
  now_on_screen();
}

void Views::picture_shown(std::chrono::nanoseconds build) {
  // The frames a picture brings: the one its publication wakes and the one its panels wake (n >= 128),
  // sometimes a timeout's. A picture after a pause or an idle spell would count every frame since, so
  // at most four frames of their mean cost are counted.
  constexpr int kFramesCounted = 4;
  const std::chrono::nanoseconds frames =
      frames_ <= kFramesCounted ? frames_cost_ : frames_cost_ * kFramesCounted / frames_;
  // A new run's first picture: the frames before it showed the previous run (or nothing new).
  if (shown_restart_ == controller_.restarts()) controller_.report_picture_cost(build + frames);
  frames_cost_ = std::chrono::nanoseconds::zero();
  frames_ = 0;
}

void Views::now_on_screen() {
  const bool new_run = shown_restart_ != controller_.restarts();
  if (new_run && on_screen_.snap->samples_done > 0 && transition_pending_) {
    transition_pending_ = false;
    transition_running_ = true;
    transition_start_ = std::chrono::steady_clock::now();
  }
  if (new_run && on_screen_.snap->samples_done > 0) {
    shown_restart_ = controller_.restarts();
    first_heatmap_s_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - controller_.run_started()).count();
  }
}

void Views::blend_textures() {
  if (!transition_running_) return;
  const double t =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - transition_start_).count() / kTransitionSeconds;
  const bool done = t >= 1.0;
  const float w = done ? 1.0f : float(t * t * (3 - 2 * t));  // smoothstep
  for (std::size_t k = 0; k < on_screen_.panels.size(); ++k) {
    const PanelData& to = on_screen_.panels[k];
    if (to.norms) continue;
    const PanelData* from = k < transition_from_.size() && transition_from_[k].n == to.n && !transition_from_[k].norms
                                ? &transition_from_[k]
                                : nullptr;
    std::vector<float>& texels = blend_texels_;
    texels.resize(to.value.size());
    for (std::size_t e = 0; e < texels.size(); ++e) {
      const bool noise = e < to.noise.size() && to.noise[e];
      const double b = to.value[e];
      const double a = from ? from->value[e] : b;
      texels[e] = noise ? std::numeric_limits<float>::infinity()
                        : static_cast<float>(std::isfinite(a) && std::isfinite(b) ? (1 - w) * a + w * b : b);
    }
    renderer_.upload(int(k), texels, to.n);
  }
  if (done) {
    transition_running_ = false;
    transition_from_.clear();
  }
}

}  // namespace maskscope::gui
