// Long work without the GIL, stoppable from Python: the work runs on a thread of its own while the calling
// thread lets the GIL go and wakes every 50 ms to run Python's signal handlers (Ctrl+C, a notebook's
// interrupt) and a progress callback, so other Python threads run meanwhile and KeyboardInterrupt stops the
// work within a fraction of a second, leaving the interpreter usable.
#pragma once

#include <functional>

namespace maskscope::py_module {

// Runs `work` (no Python inside) to its end. `tick` (may be empty) is called with the GIL every wake and once
// at the end. On a Python exception (KeyboardInterrupt from a signal handler, or one raised by `tick`),
// `cancel` is called, the work is waited for without the GIL, and the exception propagates. An exception
// thrown by `work` is rethrown here. Call with the GIL held.
void run_interruptibly(const std::function<void()>& work, const std::function<void()>& cancel,
                       const std::function<void()>& tick);

}  // namespace maskscope::py_module
