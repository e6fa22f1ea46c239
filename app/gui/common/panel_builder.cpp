// The background panel builder (see panel_builder.hpp).
#include "common/panel_builder.hpp"

#include <limits>
#include <utility>

#include "core/model/threading.hpp"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace maskscope::gui {

void panel_texels(const PanelData& p, std::vector<float>& out) {
  out.resize(p.value.size());
  for (std::size_t e = 0; e < out.size(); ++e)  // +inf marks noise cells for the shader
    out[e] = e < p.noise.size() && p.noise[e] ? std::numeric_limits<float>::infinity() : static_cast<float>(p.value[e]);
}

PanelBuilder::PanelBuilder(std::function<void()> wake) : wake_(std::move(wake)) {
  // The browser's one-thread page builds each request at once, on the caller's thread (threading.hpp).
  if (kThreadsAvailable) thread_ = std::thread([this] { main(); });
}

PanelBuilder::~PanelBuilder() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PanelBuilder::request(std::shared_ptr<const Snapshot> snap, const ViewOptions& view, int tag) {
  std::shared_ptr<const Snapshot> dropped;  // a request not started: let go outside the lock
  {
    std::lock_guard lock(mutex_);
    dropped = std::move(request_snap_);
    request_snap_ = std::move(snap);
    request_view_ = view;
    request_tag_ = tag;
    has_request_ = true;
  }
  cv_.notify_all();
  if (!kThreadsAvailable) build_request();
}

bool PanelBuilder::take(Result& out) {
  std::shared_ptr<const Snapshot> old;
  {
    std::lock_guard lock(mutex_);
    if (!has_ready_) return false;
    std::swap(out, ready_);
    has_ready_ = false;
    old = std::move(ready_.snap);  // ready_ keeps out's old arrays for a later build, not its snapshot
  }
  return true;
}

bool PanelBuilder::idle() const {
  std::lock_guard lock(mutex_);
  return !has_request_ && !building_ && !has_ready_;
}

void PanelBuilder::main() {
#if defined(__linux__)
  // Below the renderer's threads (Mesa's llvmpipe draws at the default priority): a frame that
  // shows the last picture goes first, the next picture's panels after it.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 5);
#endif
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return stop_ || has_request_; });
      if (stop_) return;
    }
    build_request();
  }
}

void PanelBuilder::build_request() {
  std::shared_ptr<const Snapshot> snap;
  ViewOptions view;
  int tag = 0;
  {
    std::lock_guard lock(mutex_);
    if (!has_request_) return;
    snap = std::move(request_snap_);
    view = request_view_;
    tag = request_tag_;
    has_request_ = false;
    building_ = true;
  }
  // spare_ is this thread's alone until it is swapped with ready_ below.
  const auto begin = std::chrono::steady_clock::now();
  build_panels(*snap, view, spare_.panels);
  spare_.texels.resize(spare_.panels.size());
  for (std::size_t k = 0; k < spare_.panels.size(); ++k) {
    if (spare_.panels[k].norms) spare_.texels[k].clear();
    else panel_texels(spare_.panels[k], spare_.texels[k]);
  }
  spare_.build_time = std::chrono::steady_clock::now() - begin;
  spare_.snap = std::move(snap);
  spare_.view = view;
  spare_.tag = tag;
  {
    std::lock_guard lock(mutex_);
    std::swap(ready_, spare_);  // a result nobody took goes to spare_, to be written over
    has_ready_ = true;
    building_ = false;
  }
  spare_.snap.reset();
  if (wake_) wake_();
}

}  // namespace maskscope::gui
