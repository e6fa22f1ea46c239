"""Results as data: what every result class shares (pickling, equality, the CLI's JSON in and out, a notebook
table), the conversion between the CLI's JSON and NumPy (null is NaN; lists of numbers are read-only arrays),
and maskscope.load, which reads any JSON maskscope-cli writes back into its result class.

A result class registers its kind with @register(kind, detect): detect(doc) says whether a JSON document is
of that kind, and the class builds itself from it with _from_json(doc). Pickling stores (kind, state) and
calls _from_state(state) back, so a class defines _state(), _from_state() and _comparable() (what __eq__
compares: the data, not the seconds a run took).
"""

from __future__ import annotations

import html
import json
import math
import os
from typing import Any, Callable, ClassVar, Dict, List, Optional, Tuple, Type, TypeVar

import numpy as np

# Keys that say how long something took or on how many threads, not what it found: left out of equality
# (two runs of the same settings and seed differ only there), as tools/json_outputs.sh leaves them out.
_VOLATILE = ("elapsed_s", "samples_per_s", "threads_used", "seconds", "elapsed")


def _volatile(key: str) -> bool:
    return key in _VOLATILE or key.endswith("_s")


def readonly(a: np.ndarray) -> np.ndarray:
    """`a` as a read-only array: a view of a read-only owner, so that no caller can make it writable again
    (NumPy refuses WRITEABLE on a view whose base is read-only) and a cached array is never changed."""
    a = np.asarray(a)
    owner = a if a.base is None else a.copy()
    owner.flags.writeable = False
    view = owner.view()
    view.flags.writeable = False
    return view


def _is_number(x: Any) -> bool:
    return x is None or (isinstance(x, (int, float)) and not isinstance(x, bool))


def from_json(v: Any) -> Any:
    """A JSON value as data: a list of numbers (null: NaN) or a list of such lists a read-only float array,
    a lone null NaN, dicts and other lists element by element."""
    if v is None:
        return math.nan
    if isinstance(v, list) and v:
        if all(_is_number(x) for x in v):
            return readonly(np.array([math.nan if x is None else x for x in v], dtype=float))
        if all(isinstance(x, list) and x and all(_is_number(y) for y in x) for x in v) and \
                len({len(x) for x in v}) == 1:
            return readonly(np.array([[math.nan if y is None else y for y in x] for x in v], dtype=float))
        return [from_json(x) for x in v]
    if isinstance(v, dict):
        return {k: from_json(x) for k, x in v.items()}
    return v


def to_json(v: Any) -> Any:
    """The inverse of from_json: arrays as nested lists, non-finite numbers as null (as the CLI writes them)."""
    if isinstance(v, np.ndarray):
        return to_json(v.tolist())
    if isinstance(v, (float, np.floating)):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, dict):
        return {k: to_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_json(x) for x in v]
    return v


def same(a: Any, b: Any) -> bool:
    """Deep equality of data: arrays and numbers equal where finite, non-finite (null in JSON) alike; the
    keys that say how long something took (_volatile) left out."""
    if isinstance(a, dict) and isinstance(b, dict):
        ka = {k for k in a if not _volatile(k)}
        kb = {k for k in b if not _volatile(k)}
        return ka == kb and all(same(a[k], b[k]) for k in ka)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if x.shape != y.shape:
            return False
        fx, fy = np.isfinite(x), np.isfinite(y)
        return bool(np.array_equal(fx, fy) and np.array_equal(x[fx], y[fy]))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if _is_float(a) and _is_float(b):
        fa, fb = float(a), float(b)  # type: ignore[arg-type]
        return fa == fb or (not math.isfinite(fa) and not math.isfinite(fb))
    if a is None or b is None:  # null in one, NaN in the other
        other = b if a is None else a
        return other is None or (_is_float(other) and not math.isfinite(float(other)))
    return bool(a == b)


def _is_float(x: Any) -> bool:
    return isinstance(x, (float, np.floating))


D = TypeVar("D", bound="Data")
_KINDS: Dict[str, Tuple[Type["Data"], Callable[[Dict[str, Any]], bool]]] = {}


def register(kind: str, detect: Callable[[Dict[str, Any]], bool]) -> Callable[[Type[D]], Type[D]]:
    """A class decorator: the class reads JSON documents of `kind`, those for which detect(doc) is true."""
    def add(cls: Type[D]) -> Type[D]:
        cls._kind = kind
        _KINDS[kind] = (cls, detect)
        return cls
    return add


def _restore(kind: str, state: Any) -> "Data":
    return _KINDS[kind][0]._from_state(state)


class Data:
    """What every result shares: pickling, ==, to_dict() / to_json() (the CLI's JSON), a notebook table."""

    _kind: ClassVar[str] = ""
    __hash__ = None  # type: ignore[assignment]  # results are compared by value and are not constant keys

    @classmethod
    def _made(cls: Type[D], **fields: Any) -> D:
        """An instance holding `fields` as attributes: results are made by the calls and load(), not constructed."""
        obj = cls.__new__(cls)
        for name, value in fields.items():
            setattr(obj, name, value)
        return obj

    # A subclass defines these three, and _from_json when it is registered.
    def _state(self) -> Any:
        raise NotImplementedError

    @classmethod
    def _from_state(cls: Type[D], state: Any) -> D:
        raise NotImplementedError

    @classmethod
    def _from_json(cls: Type[D], doc: Dict[str, Any]) -> D:
        return cls._from_state(doc)

    def _comparable(self) -> Any:
        return self.to_dict()

    def to_dict(self) -> Dict[str, Any]:
        """The JSON maskscope-cli writes for this result, as Python objects (null for NaN)."""
        raise NotImplementedError

    def to_json(self) -> str:
        """The same as JSON text (one-space indent, as the CLI writes it)."""
        return json.dumps(self.to_dict(), indent=1) + "\n"

    def __reduce__(self) -> Tuple[Any, ...]:
        return (_restore, (self._kind, self._state()))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return same(self._comparable(), other._comparable())  # type: ignore[attr-defined]

    def _html_rows(self) -> List[Tuple[str, str]]:
        d = self.to_dict()
        return [(k, html.escape(_short(v))) for k, v in d.items() if not isinstance(v, (list, dict))]

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{v}</td></tr>"
                       for k, v in self._html_rows())
        return f"<div><b>{html.escape(repr(self))}</b><table>{rows}</table></div>"


def _short(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def kind_of(doc: Dict[str, Any]) -> Optional[str]:
    for kind, (_, detect) in _KINDS.items():
        if detect(doc):
            return kind
    return None


def load(path: "str | os.PathLike[str]") -> Data:
    """Reads a JSON file that maskscope-cli (or a result's to_json()) wrote back into its result.

    Parameters
    ----------
    path : str or os.PathLike
        The file: the JSON of ``maskscope-cli run``, ``analyze``, ``merge``, ``sweep``, ``leakage``,
        ``probe`` or ``theory``; or a training run's folder, or its log.jsonl (``maskscope-cli train``,
        ``maskscope.train``).

    Returns
    -------
    Result, SweepResult, LeakageResult, ProbeResult, TheoryResult or TrainLog
        The result class of that command (``kinds()`` lists them); it equals (==) the result of the same
        call made in Python, whose pickle it can also be made from.

    Raises
    ------
    ValueError
        The file is not JSON, or not a document maskscope-cli writes.
    OSError
        The file cannot be read.

    Examples
    --------
    >>> import maskscope, os, tempfile
    >>> r = maskscope.run(n=6, layers=2, samples=200, seed=1)
    >>> path = os.path.join(tempfile.mkdtemp(), "run.json")
    >>> with open(path, "w") as f:
    ...     _ = f.write(r.to_json())
    >>> maskscope.load(path) == r
    True
    """
    p = os.fspath(path)
    if (os.path.isdir(p) or p.endswith(".jsonl")) and "train_log" in _KINDS:
        if os.path.isdir(p) and not os.path.isfile(os.path.join(p, "log.jsonl")):
            raise ValueError(f"{p}: a folder is read as a training run's, but it holds no log.jsonl")
        return _KINDS["train_log"][0]._of_path(p)  # type: ignore[attr-defined, no-any-return]
    with open(p, encoding="utf-8") as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{os.fspath(path)}: not JSON ({e})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{os.fspath(path)}: a JSON object was expected, got {type(doc).__name__}")
    kind = kind_of(doc)
    if kind is None:
        raise ValueError(f"{os.fspath(path)}: not a JSON document maskscope-cli writes (top-level keys "
                         f"{sorted(doc)}); the kinds: {', '.join(_KINDS)}")
    return _KINDS[kind][0]._from_json(doc)


def kinds() -> List[str]:
    """The kinds of JSON document load() reads, one result class each."""
    return list(_KINDS)
