"""Results as Python objects: a run's or an analysis's layers and heads with their numbers, NumPy maps and
standard errors. Each layer is a record whose keys are exactly the keys of the CLI's JSON layer (null read as
NaN, lists of numbers as read-only arrays): a result made in Python, one loaded from the CLI's JSON and one
unpickled hold the same fields, compare equal, and give the same to_dict()."""


from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional

import numpy as np

from ._data import Data, from_json, register, to_json
# Head, Heads, Layer and Layers live in _layers.py; imported here also so that results pickled when they lived
# here still load.
from ._layers import Head, Heads, Layer, Layers, _scalar  # noqa: F401


def _need_pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError("to_dataframe() needs pandas, which is not installed: `sudo apt install python3-pandas` "
                          "(Debian) or `pip install pandas`") from None
    return pandas


def _need_xarray() -> Any:
    try:
        import xarray
    except ImportError:
        raise ImportError("to_xarray() needs xarray, which is not installed: `sudo apt install python3-xarray` "
                          "(Debian) or `pip install xarray`") from None
    return xarray



def _is_run(doc: Dict[str, Any]) -> bool:
    return "layers" in doc and "config" in doc and not any(k in doc for k in ("points", "ablations", "probe"))


@register("run", _is_run)
class Result(Data):
    """A run's or an analysis's result (``run()``, ``analyze()``, ``load()`` of the CLI's ``run``,
    ``merge`` or ``analyze`` JSON).

    ``layers`` (by number), ``embeddings`` (layer 0 of the random-weight family and of models with hidden
    states, else None), ``samples`` done, ``elapsed_s``, ``samples_per_s``, ``finished``, ``settings`` (the
    JSON's ``config``), ``left_out`` (analyze with allow_nonfinite), ``to_dict()`` (the CLI's JSON),
    ``to_json()``, ``to_dataframe()``, ``to_xarray()``. Picklable; ``==`` compares the data (every field but
    the seconds taken and the threads used).
    """

    _header: Dict[str, Any]
    _snap: Any
    layers: Layers
    embeddings: Optional[Layer]
    left_out: Optional[Dict[str, Any]]

    @classmethod
    def _new(cls, header: Dict[str, Any], layers: List[Layer], embeddings: Optional[Layer],
             left_out: Optional[Dict[str, Any]] = None, snap: Any = None) -> "Result":
        r = cls.__new__(cls)
        r._header, r._snap, r.left_out = header, snap, left_out
        r.layers = Layers(layers, embeddings)
        r.embeddings = embeddings
        return r

    @classmethod
    def _of_snapshot(cls, snap: Any, left_out: Optional[Dict[str, Any]] = None) -> "Result":
        """A result of the core: its JSON without the maps now, each layer's arrays on first use."""
        doc = json.loads(snap.json(False))
        layers = [Layer._new(from_json(l), (lambda i=i: snap.arrays(i))) for i, l in enumerate(doc.pop("layers"))]
        emb = doc.pop("embeddings", None)
        embeddings = Layer._new(from_json(emb), lambda: snap.arrays(-1)) if emb is not None else None
        return cls._new(doc, layers, embeddings, left_out, snap)

    @classmethod
    def _from_json(cls, doc: Dict[str, Any]) -> "Result":
        header = {k: v for k, v in doc.items() if k not in ("layers", "embeddings")}
        layers = [Layer._new(from_json(l)) for l in doc["layers"]]
        embeddings = Layer._new(from_json(doc["embeddings"])) if "embeddings" in doc else None
        return cls._new(header, layers, embeddings)

    def _state(self) -> Any:
        return {"header": self._header, "layers": [l._state() for l in self.layers],
                "embeddings": self.embeddings._state() if self.embeddings is not None else None,
                "left_out": self.left_out}

    @classmethod
    def _from_state(cls, state: Any) -> "Result":
        emb = state["embeddings"]
        return cls._new(state["header"], [Layer._from_state(l) for l in state["layers"]],
                        Layer._from_state(emb) if emb is not None else None, state["left_out"])

    def _comparable(self) -> Any:
        return {"header": self._header, "layers": [l.to_dict() for l in self.layers],
                "embeddings": self.embeddings.to_dict() if self.embeddings is not None else None}

    @property
    def samples(self) -> int:
        """Samples (prompts, in an analysis) done."""
        return int(self._header["samples"])

    @property
    def elapsed_s(self) -> float:
        """Seconds the core took."""
        return float(self._header.get("elapsed_s", math.nan))

    @property
    def samples_per_s(self) -> float:
        """Samples per second (a run)."""
        return float(self._header.get("samples_per_s", math.nan))

    @property
    def finished(self) -> bool:
        """Whether the run reached its samples."""
        return bool(self._header.get("finished", True))

    @property
    def settings(self) -> Dict[str, Any]:
        """The settings as the CLI's JSON ``config`` spells them (a copy)."""
        return json.loads(json.dumps(self._header["config"]))

    def to_dict(self) -> Dict[str, Any]:
        """Exactly the JSON ``maskscope-cli run`` (or ``analyze``) writes for this result, as Python objects."""
        if self._snap is not None:
            return json.loads(self._snap.json())
        out = json.loads(json.dumps(self._header))
        out["layers"] = [l.to_dict() for l in self.layers]
        if self.embeddings is not None:
            out["embeddings"] = self.embeddings.to_dict()
        return out

    def to_json(self) -> str:
        """The same as JSON text, as the CLI writes it."""
        if self._snap is not None:
            return str(self._snap.json())
        return super().to_json()

    def _all_layers(self) -> List[Layer]:
        return ([self.embeddings] if self.embeddings is not None else []) + list(self.layers)

    def to_dataframe(self) -> Any:
        """The layers' numbers as a table.

        Returns
        -------
        pandas.DataFrame
            One row per layer (index ``layer``; 0 the embeddings where the result has them), one column per
            number of the JSON layer (``rp``, ``rp_se``, ``rp_ties``, ``r2_base``, ...); NaN where a layer
            lacks it. The maps are in to_xarray().

        Raises
        ------
        ImportError
            pandas is not installed.

        Examples
        --------
        >>> import maskscope
        >>> df = maskscope.run(n=6, layers=2, samples=200, seed=1).to_dataframe()
        >>> list(df.index), "rp_se" in df.columns
        ([1, 2], True)
        """
        pd = _need_pandas()
        rows = [l._scalars() for l in self._all_layers()]
        for row in rows:
            row.setdefault("layer", 0)
        return pd.DataFrame(rows).set_index("layer")

    def to_xarray(self) -> Any:
        """The layers' numbers, maps and vectors as one labelled dataset.

        Returns
        -------
        xarray.Dataset
            Dimensions ``layer`` (0 the embeddings where the result has them), ``i`` (query) and ``j`` (key
            position, 0..n-1): each number of the JSON layer over ``layer``, each map (``weight_mean``,
            ``score_mean``, ...) over ``(layer, i, j)``, each vector (``norm_mean``, ``norm_se``) over
            ``(layer, j)``; NaN where a layer lacks one. ``attrs`` holds the settings as JSON text.

        Raises
        ------
        ImportError
            xarray is not installed.

        Examples
        --------
        >>> import maskscope
        >>> ds = maskscope.run(n=6, layers=2, samples=200, seed=1).to_xarray()
        >>> ds["weight_mean"].dims, ds["weight_mean"].shape
        (('layer', 'i', 'j'), (2, 6, 6))
        """
        xr = _need_xarray()
        layers = self._all_layers()
        return xr.Dataset(_layer_variables(layers, int(self._header["config"]["n"])),
                          coords={"layer": [l.number for l in layers]},
                          attrs={"settings": json.dumps(self._header["config"])})

    def _html_rows(self) -> List[Any]:
        rows = [("samples", str(self.samples)), ("elapsed_s", f"{self.elapsed_s:.3g}")]
        for l in self._all_layers():
            s = l._scalars()
            shown = ", ".join(f"{k} {s[k]:.4g}" for k in ("rp", "adjacency", "delta_r2", "sink_weight") if k in s)
            rows.append((f"layer {l.number}", shown))
        return rows

    def __repr__(self) -> str:
        rps = ", ".join(f"{l.number}: {l._record.get('rp', math.nan):.4g}" for l in self.layers)
        return f"<maskscope.Result {self.samples} samples; rp by layer {{{rps}}}>"


def _layer_variables(layers: List[Layer], n: int) -> Dict[str, Any]:
    """xarray variables (dims, array) of layers' scalars over layer, maps over (layer, i, j) and vectors over
    (layer, j); NaN where a layer lacks one."""
    scalars: Dict[str, np.ndarray] = {}
    maps: Dict[str, np.ndarray] = {}
    vectors: Dict[str, np.ndarray] = {}
    L = len(layers)
    for k, layer in enumerate(layers):
        for key, v in layer._full().items():
            if _scalar(v) and key != "layer":
                scalars.setdefault(key, np.full(L, np.nan))[k] = float(v)
            elif isinstance(v, np.ndarray) and v.ndim == 2 and v.shape[0] == v.shape[1]:
                maps.setdefault(key, np.full((L, n, n), np.nan))[k, :v.shape[0], :v.shape[1]] = v
            elif isinstance(v, np.ndarray) and v.ndim == 1 and key in ("norm_mean", "norm_se"):
                vectors.setdefault(key, np.full((L, n), np.nan))[k, :v.shape[0]] = v
    out: Dict[str, Any] = {}
    out.update({k: (("layer",), v) for k, v in scalars.items()})
    out.update({k: (("layer", "i", "j"), v) for k, v in maps.items()})
    out.update({k: (("layer", "j"), v) for k, v in vectors.items()})
    return out
