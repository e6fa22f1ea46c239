"""The calls: run, sweep, analyze and analyze_folder, each a thin layer over the core (_maskscope) that checks
Python types, turns values into the CLI's text and wraps the result. Docstrings are filled in __init__.py."""

import inspect
import numbers
import warnings

import numpy as np

from . import _maskscope as _core
from . import _progress, _settings
from ._data import readonly
from ._results import Result
from ._sweep import SweepResult


def _call(function, bar, *args):
    try:
        return function(*args, bar)
    finally:
        _progress.close(bar)



def run(*, progress=False, **settings):
    bar = _progress.make(progress, "samples")
    return Result._of_snapshot(_call(_core._run, bar, _settings.texts(settings, "run")))


_PROGRESS = inspect.Parameter("progress", inspect.Parameter.KEYWORD_ONLY, default=False)
run.__signature__ = _settings.signature([_PROGRESS])


def _list_text(name, values):
    """A swept setting's values as the CLI's LIST: a str is the LIST itself ("0:1:11", "none,layernorm")."""
    if isinstance(values, str):
        return values
    if isinstance(values, (bytes, dict)) or not hasattr(values, "__iter__"):
        raise TypeError(f"vary['{name}']: expected a list of values or a LIST text such as '0:1:11', "
                        f"got {type(values).__name__}")
    key = _core.setting_key_of(name) or name
    return ",".join(_settings.value_text(key, v) for v in values)


def sweep(vary, metric="rp", se=None, *, progress=False, **fixed):
    if not isinstance(vary, dict):
        raise TypeError(f"vary: expected a dict {{setting: values}}, got {type(vary).__name__}")
    if not isinstance(metric, str):
        raise TypeError(f"metric: expected a name (str), got {type(metric).__name__}")
    se_text = ""
    if se is not None:
        if isinstance(se, bool) or not isinstance(se, numbers.Real):
            raise TypeError(f"se: expected a number, got {type(se).__name__}")
        se_text = _settings.value_text("alpha", se)  # a real number's text
    pairs = [(str(name), _list_text(str(name), values)) for name, values in vary.items()]
    bar = _progress.make(progress, "points")
    return SweepResult._of_core(_call(_core._sweep, bar, pairs, _settings.texts(fixed, "sweep"), metric, se_text))


_POSITIONAL = inspect.Parameter.POSITIONAL_OR_KEYWORD
sweep.__signature__ = _settings.signature([_PROGRESS], first=[
    inspect.Parameter("vary", _POSITIONAL), inspect.Parameter("metric", _POSITIONAL, default="rp"),
    inspect.Parameter("se", _POSITIONAL, default=None)])


def _as_array(x, name):
    """(x as a C-order, native-endian array, bfloat16?), copying only when it is not one already. A bfloat16
    array (torch.bfloat16, or a NumPy array of ml_dtypes' bfloat16) is passed as its 16-bit integer view, read
    by the core as bfloat16 (no copy)."""
    if x is None:
        return None, False
    if hasattr(x, "detach") and callable(x.detach):  # a torch tensor: no gradient record (no copy)
        x = x.detach()
        if str(getattr(x, "dtype", "")) == "torch.bfloat16":
            import torch

            return np.ascontiguousarray(np.asarray(x.contiguous().view(torch.int16))), True
    a = np.asarray(x)
    if a.dtype.name == "bfloat16" and a.dtype.itemsize == 2:
        return np.ascontiguousarray(a).view(np.uint16), True
    if a.dtype.kind != "f":
        raise TypeError(f"{name}: dtype {a.dtype} is not supported; expected float16, bfloat16, float32 or float64")
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return np.ascontiguousarray(a), False


def _layers_text(layers):
    if layers is None:
        return ""
    if isinstance(layers, str):
        return layers
    if isinstance(layers, numbers.Integral) and not isinstance(layers, bool):
        return str(int(layers))
    if hasattr(layers, "__iter__"):
        return ",".join(_layers_text(l) for l in layers)
    raise TypeError(f"layers: expected layer numbers (1, [1, 2] or '1,5-8'), got {type(layers).__name__}")


def _analysis(function, bar, *args):
    snap, left_out = _call(function, bar, *args)
    if left_out is not None:
        warnings.warn(left_out["text"], RuntimeWarning, stacklevel=3)
    return Result._of_snapshot(snap, left_out)


def _check_flag(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected True or False, got {type(value).__name__}")
    return bool(value)


def analyze(logits, weights=None, hidden=None, mask="causal", *, layers=None, allow_nonfinite=False, progress=False):
    if not isinstance(mask, str):
        raise TypeError(f"mask: expected 'causal', 'bidirectional' or 'window:W', got {type(mask).__name__}")
    converted = [_as_array(logits, "logits"), _as_array(weights, "weights"), _as_array(hidden, "hidden")]
    if converted[0][0] is None:
        raise TypeError("logits: expected an array [P, L, H, T, T], got None")
    bar = _progress.make(progress, "prompts")
    # The arrays live in this frame until the analysis ends (the core reads them in place).
    return _analysis(_core._analyze, bar, *[a for a, _ in converted], mask, _layers_text(layers),
                     _check_flag(allow_nonfinite, "allow_nonfinite"), [bf16 for _, bf16 in converted])


def analyze_folder(path, *, layers=None, allow_nonfinite=False, progress=False):
    import os

    bar = _progress.make(progress, "prompts")
    return _analysis(_core._analyze_folder, bar, os.fspath(path), _layers_text(layers),
                     _check_flag(allow_nonfinite, "allow_nonfinite"))


def h_of_j_theory(n, d, alpha, gamma=0.0, with_inv_sqrt_d=True):
    texts = [(key, _settings.value_text(key, value)) for key, value in (("n", n), ("d", d), ("alpha", alpha),
                                                                         ("gamma", gamma))]
    return readonly(_core.h_of_j_theory(texts, _check_flag(with_inv_sqrt_d, "with_inv_sqrt_d")))
