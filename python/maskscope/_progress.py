"""Progress of long calls (progress=True): a line on stderr in a terminal, or one updated output line in a
notebook; progress=callable receives the raw numbers instead."""

import sys
import time


def _in_notebook():
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class Bar:
    """Shows `describe(*numbers)` at most every 0.2 s; close() shows the last state once more."""

    def __init__(self, describe):
        self._describe = describe
        self._last = 0.0
        self._numbers = None
        self._start = time.monotonic()
        self._handle = None
        self._notebook = _in_notebook()

    def __call__(self, *numbers):
        self._numbers = numbers
        now = time.monotonic()
        if now - self._last >= 0.2:
            self._last = now
            self._show()

    def elapsed(self):
        return time.monotonic() - self._start

    def _show(self, end=False):
        if self._numbers is None:
            return
        text = self._describe(self, *self._numbers)
        if self._notebook:
            from IPython.display import Pretty, display

            if self._handle is None:
                self._handle = display(Pretty(text), display_id=True)
            else:
                self._handle.update(Pretty(text))
        else:
            sys.stderr.write("\r" + text + ("\n" if end else "   "))
            sys.stderr.flush()

    def close(self):
        self._show(end=True)


def _eta(seconds):
    if seconds is None or seconds != seconds or seconds < 0:
        return "--"
    return f"{seconds:.1f}s" if seconds < 60 else f"{int(seconds) // 60}m{int(seconds) % 60:02d}s"


def _samples(bar, done, total):
    t = bar.elapsed()
    rate = done / t if t > 0 else 0.0
    eta = (total - done) / rate if rate > 0 else None
    return f"{done} / {total} samples  {rate:.0f} samples/s  ETA {_eta(eta)}"


def _prompts(bar, done, total):
    return f"{done} / {total} prompts  {bar.elapsed():.1f} s"


def _points(bar, done, total, samples, stages):
    return f"stage {stages + 1}: {done} / {total} points done, {samples} samples, {bar.elapsed():.1f} s"


def _steps(bar, step, steps, loss, accuracy, tokens_per_s):
    shown = "--" if accuracy != accuracy else f"{accuracy:.3f}"
    return f"step {step} / {steps}  loss {loss:.4f}  accuracy {shown}  {tokens_per_s:.0f} tokens/s  {bar.elapsed():.1f} s"


_DESCRIBE = {"samples": _samples, "prompts": _prompts, "points": _points, "steps": _steps}


def make(progress, unit):
    """None (no progress), the caller's callable, or a Bar for `unit` ("samples", "prompts", "points", "steps")."""
    if progress is None or progress is False:
        return None
    if callable(progress):
        return progress
    if progress is True:
        return Bar(_DESCRIBE[unit])
    raise TypeError(f"progress: expected True, False or a callable, got {type(progress).__name__}")


def close(bar):
    if isinstance(bar, Bar):
        bar.close()
