// Builds a snapshot's panels and their texels on a thread of its own, so that the window's frame
// while a large run refines holds only the texture upload. At n 512 building four panels (copies,
// robust ranges, noise, texels) is 8-10 ms of the UI thread's time per snapshot; under a software
// renderer a frame is already 12-25 ms.
//
// The newest request wins: one that has not started when another comes is dropped. Results are
// those of build_panels and panel_texels, bit for bit.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/panels.hpp"

namespace maskscope::gui {

// The values a heatmap texture holds for panel p: its values as floats, +inf where p.noise greys a cell.
void panel_texels(const PanelData& p, std::vector<float>& out);

class PanelBuilder {
 public:
  struct Result {
    std::shared_ptr<const Snapshot> snap;
    ViewOptions view;
    int tag = 0;                             // the caller's, given back (a run's restart count)
    std::vector<PanelData> panels;           // build_panels(*snap, view)
    std::vector<std::vector<float>> texels;  // panel_texels of each panel (empty for norms)
    std::chrono::nanoseconds build_time{0};  // the builder's wall time for panels and texels
  };

  // `wake` is called from the builder's thread when a result is ready (a window posts an event).
  explicit PanelBuilder(std::function<void()> wake = {});
  ~PanelBuilder();
  PanelBuilder(const PanelBuilder&) = delete;
  PanelBuilder& operator=(const PanelBuilder&) = delete;

  void request(std::shared_ptr<const Snapshot> snap, const ViewOptions& view, int tag);
  // The newest finished result, swapped into `out` (whose old arrays the builder reuses). False
  // when none is ready.
  bool take(Result& out);
  // No request pending or being built, and no result waiting (tests).
  bool idle() const;

 private:
  void main();
  // Builds the pending request (if any) into ready_: on the builder thread, or in request() where
  // no thread can be started.
  void build_request();

  std::function<void()> wake_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false, has_request_ = false, building_ = false, has_ready_ = false;
  std::shared_ptr<const Snapshot> request_snap_;
  ViewOptions request_view_;
  int request_tag_ = 0;
  Result ready_, spare_;  // spare_: the arrays the next build writes into
  std::thread thread_;
};

}  // namespace maskscope::gui
