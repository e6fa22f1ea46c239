// Whether this build can start threads. Every build can, except the browser's one-thread page
// (Emscripten without -pthread, for servers that do not send the headers SharedArrayBuffer needs;
// docs/web.md): there a Run computes in slices its owner asks for (Run::step, step_runs), a snapshot
// and a picture are built on the calling thread, and what needs a pool of its own (a sweep, probes)
// says it is unavailable. The numbers do not depend on it.
#pragma once

#include <thread>

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

}  // namespace maskscope
