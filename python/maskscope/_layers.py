"""A result's layers and heads: records whose keys are exactly the keys of the CLI's JSON layer (null read as NaN,
lists of numbers as read-only arrays), with their NumPy maps and standard errors (_results.py holds the Result)."""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Iterator, List, Optional

import numpy as np

from . import _maskscope
from ._data import Data, readonly, register, to_json

# The layer metrics, one row each (core/stats/metric_table.hpp).
_METRICS = _maskscope.metric_table()
# A head's maps: in a result made in Python or unpickled, not in the CLI's JSON (they would multiply its size
# by the heads), so neither in a loaded one nor in to_dict().
HEAD_MAPS = ("score_mean", "score_se", "weight_mean", "weight_se")


def _scalar(v: Any) -> bool:
    return isinstance(v, (int, float, bool, np.integer, np.floating)) or v is None


def _readonly_tree(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return readonly(v)
    if isinstance(v, dict):
        return {k: _readonly_tree(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_readonly_tree(x) for x in v]
    return v


class Head(Data):
    """One attention head of a random-weight or real-model layer, numbered 1..H (as the window's head slider
    and the JSON's ``head`` key): its estimates (``rp``, ``delta_r2`` with ``_se``, ``rp_ties``) and maps
    (``score_mean``, ``weight_mean`` and their ``_se``; not in the CLI's JSON, so absent from a loaded result).
    """

    _record: Dict[str, Any]

    @classmethod
    def _new(cls, record: Dict[str, Any]) -> "Head":
        return cls._made(_record=record)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._record[name]
        except KeyError:
            extra = " (a head's maps are not in the CLI's JSON: this result was loaded from it)" \
                if name in HEAD_MAPS else ""
            raise AttributeError(f"maskscope.Head has no field '{name}'{extra}; its fields: "
                                 f"{', '.join(self.keys())}") from None

    @property
    def number(self) -> int:
        """The head's number, 1..H."""
        return int(self._record["head"])

    def keys(self) -> List[str]:
        """The head's fields: the keys of its JSON entry, and its maps where the result has them."""
        return list(self._record)

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._record))

    def _state(self) -> Any:
        return self._record

    @classmethod
    def _from_state(cls, state: Any) -> "Head":
        return cls._new(_readonly_tree(state))

    def to_dict(self) -> Dict[str, Any]:
        """The head's entry of the CLI's JSON (its maps left out, as the CLI leaves them out)."""
        return to_json({k: v for k, v in self._record.items() if k not in HEAD_MAPS})

    def __repr__(self) -> str:
        return f"<maskscope.Head {self.number}: rp {self._record.get('rp', math.nan):.6g}>"


register("head", lambda doc: False)(Head)


class Heads:
    """A layer's heads, indexed by number 1..H like the layers (heads[1] is the first); iterating gives them
    in order."""

    def __init__(self, heads: List[Head]) -> None:
        self._heads = heads

    def __getitem__(self, number: int) -> Head:
        if isinstance(number, (int, np.integer)) and not isinstance(number, bool) and 1 <= number <= len(self._heads):
            return self._heads[int(number) - 1]
        raise IndexError(f"no head {number!r}: heads are numbered 1..{len(self._heads)}, as in the window and "
                         "the JSON's 'head' key")

    def __iter__(self) -> Iterator[Head]:
        return iter(self._heads)

    def __len__(self) -> int:
        return len(self._heads)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Heads) and self._heads == other._heads

    __hash__ = None  # type: ignore[assignment]

    @property
    def numbers(self) -> List[int]:
        return [h.number for h in self._heads]

    def __repr__(self) -> str:
        return f"<maskscope.Heads {self.numbers}>"


class Layer(Data):
    """One layer of a result, numbered 1..L as in the CLI's JSON and the window; 0 is the random-weight
    family's embeddings (and a real model's, with hidden states).

    Its fields are the keys of the layer in the CLI's JSON (``keys()`` lists them), null read as NaN and
    lists of numbers as read-only NumPy arrays: the metric table's estimates (``rp``, ``adjacency``,
    ``norm_adjacency`` (random weights), ``delta_r2``, ``weight_delta_r2``, ``sink_weight``, each with
    ``_se``, and ``_ties`` where it counts ties), ``r2_base``, ``delta_r2_mean_map``, ``delta_r2_bins``,
    ``score_diag_normalized_q01`` / ``_q99``, the maps (n x n, row i the query, column j the key, NaN where
    masked) ``score_mean``, ``weight_mean``, ``cosine_mean`` with their ``_se`` and
    ``score_diag_normalized``, the vectors ``norm_mean`` and ``norm_se`` (n), ``histograms`` and
    ``stage_grams`` when the run made them, and ``heads``. Derived (not in the JSON): ``number``, ``ties``,
    ``h`` and ``h_se``, ``stage_gram()``.
    """

    _record: Dict[str, Any]
    _fill: Optional[Callable[[], Dict[str, Any]]]

    @classmethod
    def _new(cls, record: Dict[str, Any], fill: Optional[Callable[[], Dict[str, Any]]] = None) -> "Layer":
        layer = cls.__new__(cls)
        layer._record, layer._fill = record, fill
        return layer

    def _full(self) -> Dict[str, Any]:
        """The record with its arrays (a result made in Python reads them from the core on first use)."""
        if self._fill is not None:
            arrays = self._fill()
            self._fill = None
            head_maps = arrays.pop("heads", [])
            for key, value in arrays.items():
                self._record[key] = _readonly_tree(value)
            for head, maps in zip(self._record.get("heads", []), head_maps):
                head.update({k: readonly(v) for k, v in maps.items()})
        return self._record

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        record = self._record if name in self._record else self._full()
        if name == "heads":
            return self._heads()
        try:
            return record[name]
        except KeyError:
            raise AttributeError(f"maskscope.Layer {self.number} has no field '{name}' (its fields are the keys "
                                 f"of the CLI's JSON layer: {', '.join(self.keys())})") from None

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self.keys()))

    def keys(self) -> List[str]:
        """The layer's fields: exactly the keys of this layer in the CLI's JSON."""
        return list(self._full())

    def _heads(self) -> Heads:
        cached = self.__dict__.get("_heads_cache")
        if cached is None:
            cached = Heads([Head._new(h) for h in self._full().get("heads", [])])
            self.__dict__["_heads_cache"] = cached
        return cached

    @property
    def number(self) -> int:
        """The layer's number: 1..L, 0 for the embeddings."""
        return int(self._record.get("layer", 0))

    @property
    def ties(self) -> Dict[str, float]:
        """The tie shares of the metrics that count ties (rp, adjacency, ...; a collapsed representation has
        many), of those this layer has."""
        r = self._record
        return {m["key"]: r[m["key"] + "_ties"] for m in _METRICS if m["ties"] and m["key"] + "_ties" in r}

    @property
    def h(self) -> np.ndarray:
        """h(j) as LN-recency plots it: 1 / mean ||x_j|| (n; NaN where the norm is 0); compare with
        h_of_j_theory."""
        m = self._full()["norm_mean"]
        with np.errstate(divide="ignore", invalid="ignore"):
            return readonly(np.where(m > 0, 1.0 / m, np.nan))

    @property
    def h_se(self) -> np.ndarray:
        """Standard errors of h by the delta method: norm_se / norm_mean^2."""
        r = self._full()
        m = r["norm_mean"]
        with np.errstate(divide="ignore", invalid="ignore"):
            return readonly(np.where(m > 0, r["norm_se"] / (m * m), np.nan))

    def stage_gram(self, stage: str, cosine: bool = False, se: bool = False) -> np.ndarray:
        """The Gram matrix of one stage of the layer's forward pass (docs/model.md section 12).

        Parameters
        ----------
        stage : str
            input, normalized, query, key, mix, attention, residual or mlp (those the model has).
        cosine : bool
            The mean cosines instead of the mean inner products <s_i, s_j>.
        se : bool
            Their standard errors instead.

        Returns
        -------
        numpy.ndarray
            n x n, symmetric, read-only.

        Raises
        ------
        KeyError
            The run was made without stage_grams=True, or its model has no such stage.
        """
        grams = self._full().get("stage_grams")
        if grams is None:
            raise KeyError("no stage Gram matrices: run with stage_grams=True")
        if stage not in grams:
            raise KeyError(f"no stage '{stage}'; this result's stages: {', '.join(grams)}")
        return grams[stage][("cosine" if cosine else "gram") + ("_se" if se else "_mean")]

    def _state(self) -> Any:
        return self._full()

    @classmethod
    def _from_state(cls, state: Any) -> "Layer":
        return cls._new(_readonly_tree(state))

    def _comparable(self) -> Any:
        return self.to_dict()

    def to_dict(self) -> Dict[str, Any]:
        """This layer as the CLI's JSON writes it (heads without their maps)."""
        r = dict(self._full())
        if "heads" in r:
            r["heads"] = [{k: v for k, v in h.items() if k not in HEAD_MAPS} for h in r["heads"]]
        return to_json(r)

    def _scalars(self) -> Dict[str, Any]:
        return {k: v for k, v in self._record.items() if _scalar(v)}

    def _html_rows(self) -> List[Any]:
        return [(k, f"{v:.6g}" if isinstance(v, float) else str(v)) for k, v in self._scalars().items()]

    def __repr__(self) -> str:
        r = self._record
        if self.number == 0:
            return f"<maskscope.Layer 0 (the embeddings): adjacency {r.get('adjacency', math.nan):.6g}>"
        return f"<maskscope.Layer {self.number}: rp {r.get('rp', math.nan):.6g} +- {r.get('rp_se', math.nan):.2g}>"


register("layer", lambda doc: False)(Layer)


class Layers:
    """A result's layers, indexed by their numbers as the papers, the CLI's JSON and the window number them
    (layers[1] is layer 1; an analysis of some layers keeps the model's numbers; layers[0] the embeddings
    where the result has them). Iterating gives the layers 1..L in order, without the embeddings."""

    def __init__(self, layers: List[Layer], embeddings: Optional[Layer]) -> None:
        self._layers = layers
        self._by_number = {layer.number: layer for layer in layers}
        self._embeddings = embeddings

    def __getitem__(self, number: int) -> Layer:
        if number == 0 and self._embeddings is not None:
            return self._embeddings
        try:
            return self._by_number[number]
        except (KeyError, TypeError):
            raise IndexError(f"no layer {number!r}; the layers are {self.numbers}"
                             + (" (0: the embeddings)" if self._embeddings else "")) from None

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._layers)

    def __len__(self) -> int:
        return len(self._layers)

    @property
    def numbers(self) -> List[int]:
        """The layers' numbers in order (without 0)."""
        return [layer.number for layer in self._layers]

    def __repr__(self) -> str:
        return f"<maskscope.Layers {self.numbers}>"
