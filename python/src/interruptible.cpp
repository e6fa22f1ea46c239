// Work on its own thread, the caller polling Python's signals without the GIL between polls (interruptible.hpp).
#include "interruptible.hpp"

#include <pybind11/pybind11.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace maskscope::py_module {

namespace py = pybind11;

void run_interruptibly(const std::function<void()>& work, const std::function<void()>& cancel,
                       const std::function<void()>& tick) {
  // 50 ms: Ctrl+C answers within a tenth of a second, and a wake costs microseconds against the work's cores.
  constexpr auto kPoll = std::chrono::milliseconds(50);
  std::mutex mutex;
  std::condition_variable cv;
  bool finished = false;
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      work();
    } catch (...) { error = std::current_exception(); }
    std::lock_guard lock(mutex);
    finished = true;
    cv.notify_all();
  });
  auto join = [&] {
    py::gil_scoped_release nogil;
    worker.join();
  };
  try {
    for (;;) {
      bool done = false;
      {
        py::gil_scoped_release nogil;
        std::unique_lock lock(mutex);
        done = cv.wait_for(lock, kPoll, [&] { return finished; });
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (tick) tick();
      if (done) break;
    }
  } catch (...) {
    cancel();
    join();
    throw;
  }
  join();
  if (error) std::rethrow_exception(error);
}

}  // namespace maskscope::py_module
