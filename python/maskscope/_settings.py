"""Keywords to settings: every setting of `maskscope-cli run`, from the core's one table (settings.hpp).

Python values become the text the CLI would read (ints as digits, floats as their shortest repr, names as
given, booleans as 0/1) and the core converts and checks that text, so names, ranges and messages are the
CLI's. A value of the wrong type is a TypeError here; a wrong value is the core's ValueError.
"""

import inspect
import numbers

from . import _maskscope as _core

# The core's settings table (core/model/settings.hpp), one tuple per setting in the CLI's order:
# (flag, key, help, kind, default text, family, sweepable, enum names); kind is "real", "whole", "u64",
# "optional_real", "boolean", "enumeration", "text" or "mask".
TABLE = [tuple(f) for f in _core.setting_table()]
KEYS = [f[1] for f in TABLE]
_KIND = {f[1]: f[3] for f in TABLE}
_NAMES = {f[1]: list(f[7]) for f in TABLE}
_NUMBER = ("real", "whole", "u64", "optional_real")


def _default(kind, text):
    if text == "":
        return None  # an optional std follows another (init_std, the embedding std); no token file
    if kind == "boolean":
        return text == "1"
    if kind == "real":
        return float(text)
    if kind in ("whole", "u64"):
        return int(text)
    return text


DEFAULTS = {f[1]: _default(f[3], f[4]) for f in TABLE}


def key_of(name, caller):
    """The setting key of a keyword ("init_std"; the flag spelling "init-std" too); TypeError if none."""
    key = _core.setting_key_of(name)
    if not key:
        raise TypeError(f"{caller}() got an unexpected keyword argument '{name}'; the settings are: " + ", ".join(KEYS))
    return key


def value_text(key, value):
    """A Python value as the CLI's text for setting `key`; TypeError for a wrong type."""
    kind = _KIND.get(key)
    if kind is None:  # not a setting: the core names it with the valid ones; any plain value as text
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "1" if value else "0"
        if isinstance(value, numbers.Integral):
            return str(int(value))
        if isinstance(value, numbers.Real):
            return repr(float(value))
        raise TypeError(f"{key}: expected a number or a name, got {type(value).__name__}")
    if kind == "boolean":
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            return "1" if value else "0"
        if isinstance(value, numbers.Integral):
            return str(int(value))
        if isinstance(value, str):
            return value
        raise TypeError(f"{key}: expected True/False or 0/1, got {type(value).__name__} {value!r}")
    if kind not in _NUMBER:
        if isinstance(value, str):
            return value
        raise TypeError(f"{key}: expected a name (str), got {type(value).__name__} {value!r}")
    if isinstance(value, bool) or type(value).__name__ == "bool_" or not isinstance(value, numbers.Real):
        raise TypeError(f"{key}: expected a number, got {type(value).__name__} {value!r}")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return repr(float(value))


def texts(settings, caller):
    """{keyword: value} to [(key, text)], each key once; None for a setting whose default is None (an optional
    std that follows another, no token file) means that default."""
    out, seen = [], {}
    for name, value in settings.items():
        key = key_of(name, caller)
        if key in seen:
            raise TypeError(f"{caller}() got the setting '{key}' twice ('{seen[key]}' and '{name}')")
        seen[key] = name
        if value is None and DEFAULTS[key] is None:
            continue
        out.append((key, value_text(key, value)))
    return out


def signature(extra, first=(), keys=None):
    """`first` (inspect.Parameter list), then a keyword-only parameter for every setting (or `keys`) with its
    default, then `extra`."""
    params = [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=DEFAULTS[k]) for k in (keys or KEYS)]
    return inspect.Signature(list(first) + params + list(extra))


def annotation(key):
    """The Python type of a setting's keyword, as stub text (tools/gen_python_stubs.py writes it into the .pyi):
    an enumeration's names as a Literal, None for an optional one (an optional std, no token file)."""
    kind, names = _KIND[key], _NAMES[key]
    base = {"real": "float", "whole": "int", "u64": "int", "optional_real": "float", "boolean": "bool",
            "text": "str", "mask": "str"}.get(kind)
    if kind == "enumeration":
        base = "Literal[" + ", ".join(repr(n) for n in names) + "]"
    return base + " | None" if DEFAULTS[key] is None else base


def numpydoc_type(key):
    """A setting's type as a numpydoc Parameters line shows it."""
    kind, names = _KIND[key], _NAMES[key]
    text = {"real": "float", "whole": "int", "u64": "int", "optional_real": "float or None", "boolean": "bool",
            "text": "str or None", "mask": "str"}.get(kind, "str")
    if kind == "enumeration":
        text = "{" + ", ".join(repr(n) for n in names) + "}"
    return f"{text}, default {DEFAULTS[key]!r}"


def settings_doc(keys=None):
    """numpydoc Parameters entries of the settings (all, or `keys`): the key, its type and default, the CLI's
    help (the valid range) and, for a family's setting, the family."""
    lines = []
    for flag, key, help_text, kind, default, family, *_ in TABLE:
        if keys is not None and key not in keys:
            continue
        only = f" (--model {family} only)" if family else ""
        lines.append(f"{key} : {numpydoc_type(key)}\n    {help_text}{only}.")
    return "\n".join(lines)
