// Whether this build can start threads. Every build can, except the browser's one-thread page
// (Emscripten without -pthread, for servers that do not send the headers SharedArrayBuffer needs;
// docs/web.md): there a Run computes in slices its owner asks for (Run::step, step_runs), a snapshot
// and a picture are built on the calling thread, and what needs a pool of its own (a sweep, probes)
// says it is unavailable. The numbers do not depend on it.
#pragma once

#include <thread>
#include <utility>
#include <vector>

namespace maskscope {

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
inline constexpr bool kThreadsAvailable = false;
#else
inline constexpr bool kThreadsAvailable = true;
#endif

// What a part that needs threads of its own says in the one-thread page.
inline constexpr const char* kNeedsThreads =
    "This page runs on one thread (its server does not send the headers that Web Workers sharing memory "
    "need), and this part needs threads of its own. A page served with them has it (docs/web.md).";

// The processor's threads (at least 1), or 1 where no thread can be started.
inline unsigned hardware_threads() {
  if constexpr (!kThreadsAvailable) return 1;
  const unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : hc;
}

// Threads joined when the pool goes out of scope, also when an exception leaves that scope (a joinable
// std::thread would call std::terminate). std::jthread does this too, but Emscripten's libc++ has none.
class JoiningThreads {
 public:
  JoiningThreads() = default;
  JoiningThreads(const JoiningThreads&) = delete;
  JoiningThreads& operator=(const JoiningThreads&) = delete;
  ~JoiningThreads() {
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }
  template <class F>
  void start(F&& f) {
    threads_.emplace_back(std::forward<F>(f));
  }

 private:
  std::vector<std::thread> threads_;
};

}  // namespace maskscope
