"""A sweep's result: the metric as arrays shaped by the swept settings, each point's dict as in the CLI's
sweep file, each point as a Result, to_dict() (the CLI's sweep file), a long table and a labelled dataset."""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _maskscope
from ._data import Data, from_json, readonly, register
from ._results import Layer, Result, _need_pandas, _need_xarray

# The metric table's keys, in its order (core/stats/metric_table.hpp).
_METRIC_KEYS = [m["key"] for m in _maskscope.metric_table()]


@register("sweep", lambda doc: "points" in doc and "vary" in doc)
class SweepResult(Data):
    """A metric over one or two swept settings (``sweep()``, or ``load()`` of the CLI's sweep file).

    ``axes``: [(name, values)] in the order given (the first outermost). ``value``, ``se``, ``ties``:
    read-only arrays of shape (len(values_1)[, len(values_2)], L), the metric per point and layer (layer k at
    index k - 1; NaN past a point's layers when layers is swept); ``samples``, ``stopped_early``: shape
    (len(values_1)[, len(values_2)]). ``points``: each point's dict as the CLI's sweep file has it;
    ``point(i[, j])`` that point as a Result. ``to_dict()``: the CLI's sweep file; ``to_dataframe()`` and
    ``to_xarray()``: every metric of every point and layer. Picklable; ``==`` compares the data.
    """

    axes: List[Tuple[str, List[Any]]]
    metric: str
    se_target: Optional[float]
    value: np.ndarray
    se: np.ndarray
    ties: np.ndarray
    samples: np.ndarray
    stopped_early: np.ndarray
    layers: List[int]
    stages: Optional[int]
    _elapsed_s: Optional[float]
    _core: Any
    _doc: Optional[Dict[str, Any]]

    @classmethod
    def _of_core(cls, core: Any) -> "SweepResult":
        s = cls.__new__(cls)
        s._core, s._doc = core, None
        s.axes = [(a["name"], a["values"]) for a in json.loads(core.vary_json())]
        s.metric = core.metric
        s.se_target = core.se
        s._elapsed_s = core.elapsed_s
        s.stages = core.stages
        value, se, ties, samples, early = core.metric_table()
        s._shape_arrays(value, se, ties, samples, early)
        return s

    @classmethod
    def _from_json(cls, doc: Dict[str, Any]) -> "SweepResult":
        s = cls.__new__(cls)
        s._core, s._doc = None, doc
        s.axes = [(a["name"], a["values"]) for a in doc["vary"]]
        s.metric = doc["metric"]
        s.se_target = doc.get("se")
        s._elapsed_s = doc.get("elapsed_s", math.nan)
        s.stages = doc.get("stages")
        points = doc["points"]
        L = max((len(p["layers"]) for p in points), default=0)
        value, se, ties = (np.full((len(points), L), np.nan) for _ in range(3))
        for i, p in enumerate(points):
            for k, layer in enumerate(p["layers"]):
                for arr, key in ((value, s.metric), (se, s.metric + "_se"), (ties, s.metric + "_ties")):
                    v = layer.get(key)
                    arr[i, k] = math.nan if v is None else v
        samples = np.array([p["samples"] for p in points], dtype=np.int64)
        early = np.array([p["stopped_early"] for p in points], dtype=bool)
        s._shape_arrays(value, se, ties, samples, early)
        return s

    def _shape_arrays(self, value: np.ndarray, se: np.ndarray, ties: np.ndarray, samples: np.ndarray,
                      early: np.ndarray) -> None:
        shape = tuple(len(v) for _, v in self.axes)
        layers = value.shape[1]
        self.value = readonly(value.reshape(shape + (layers,)))
        self.se = readonly(se.reshape(shape + (layers,)))
        self.ties = readonly(ties.reshape(shape + (layers,)))
        self.samples = readonly(samples.reshape(shape))
        self.stopped_early = readonly(early.reshape(shape))
        self.layers = list(range(1, layers + 1))

    @property
    def elapsed_s(self) -> float:
        """Seconds the sweep took (NaN for a loaded sweep file, which leaves its time out)."""
        return float(self._elapsed_s) if self._elapsed_s is not None else math.nan

    def _state(self) -> Any:
        return self.to_dict()

    @classmethod
    def _from_state(cls, state: Any) -> "SweepResult":
        return cls._from_json(state)

    def _flat(self, index: Sequence[int]) -> int:
        shape = self.samples.shape
        if len(index) != len(shape):
            raise IndexError(f"a point of this sweep has {len(shape)} indices, got {len(index)}")
        flat = 0
        for i, n in zip(index, shape):
            if not -n <= i < n:
                raise IndexError(f"index {i} out of range for {n} values")
            flat = flat * n + (i % n)
        return flat

    def point(self, *index: int) -> Result:
        """The point at these indices into the axes' values, as a Result (its layers, maps and to_dict()).

        A sweep made in Python gives the point's run (its to_dict() is ``maskscope-cli run``'s JSON); a loaded
        sweep file gives the point's entry (``settings`` as the config, ``samples``, ``stopped_early``,
        ``kernel`` and its layers).
        """
        flat = self._flat(index)
        if self._core is not None:
            return Result._of_snapshot(self._core.point_snapshot(flat))
        p = dict(self._points()[flat])
        p["config"] = p.pop("settings")
        return Result._from_json(p)

    def _points(self) -> List[Dict[str, Any]]:
        if self._doc is not None:
            return list(self._doc["points"])
        return [json.loads(self._core.point_json(i)) for i in range(self._core.point_count)]

    @property
    def points(self) -> List[Dict[str, Any]]:
        """Each point's dict as the CLI's sweep file has it, in the sweep's order (the first axis outermost)."""
        return json.loads(json.dumps(self._points()))

    def to_dict(self) -> Dict[str, Any]:
        """Exactly the sweep file ``maskscope-cli sweep --out FILE.json`` writes, as Python objects."""
        if self._core is not None:
            return json.loads(self._core.json())
        return json.loads(json.dumps(self._doc))

    def _point_layers(self, flat: int) -> List[Layer]:
        if self._core is not None:
            return list(Result._of_snapshot(self._core.point_snapshot(flat)).layers)
        return [Layer._new(from_json(l)) for l in self._doc["points"][flat]["layers"]]  # type: ignore[index]

    def _index_tuples(self) -> List[Tuple[int, ...]]:
        return [tuple(int(x) for x in i) for i in np.ndindex(*self.samples.shape)]

    def to_dataframe(self) -> Any:
        """Every metric of every point and layer as a long table.

        Returns
        -------
        pandas.DataFrame
            One row per swept value (of each swept setting), layer and metric of the metric table: index
            (setting_1[, setting_2], layer, metric), columns ``value``, ``se``, ``ties`` (NaN for a metric
            without ties), ``samples`` and ``stopped_early`` (of the point).

        Raises
        ------
        ImportError
            pandas is not installed.

        Examples
        --------
        >>> import maskscope
        >>> s = maskscope.sweep(vary={"alpha": [0, 0.5], "d": [8, 16]}, n=5, layers=2, samples=100)
        >>> df = s.to_dataframe()
        >>> df.index.names[:3], float(df.loc[(0.5, 16, 2, "rp"), "value"]) == float(s.value[1, 1, 1])
        (FrozenList(['alpha', 'd', 'layer']), True)
        """
        pd = _need_pandas()
        rows = []
        names = [name for name, _ in self.axes]
        for flat, index in enumerate(self._index_tuples()):
            coords = [self.axes[a][1][i] for a, i in enumerate(index)]
            for layer in self._point_layers(flat):
                r = layer._scalars()
                for key in _METRIC_KEYS:
                    if key not in r:
                        continue
                    rows.append(coords + [layer.number, key, r[key], r.get(key + "_se", math.nan),
                                          r.get(key + "_ties", math.nan), int(self.samples[index]),
                                          bool(self.stopped_early[index])])
        columns = names + ["layer", "metric", "value", "se", "ties", "samples", "stopped_early"]
        return pd.DataFrame(rows, columns=columns).set_index(names + ["layer", "metric"])

    def to_xarray(self, maps: bool = True) -> Any:
        """Every point's numbers (and maps) as one labelled dataset.

        Parameters
        ----------
        maps : bool
            Also each point's maps over ``(layer, i, j)`` (``weight_mean``, ``score_mean``, ... ; NaN
            beyond a point's n when n is swept).

        Returns
        -------
        xarray.Dataset
            Dimensions: the swept settings (coordinates their values), ``layer``, ``metric`` and, with maps,
            ``i`` and ``j``. Variables ``value``, ``se``, ``ties`` over (settings..., layer, metric) for every
            metric of the metric table, ``samples`` and ``stopped_early`` over the settings, and the maps.

        Raises
        ------
        ImportError
            xarray is not installed.

        Examples
        --------
        >>> import maskscope
        >>> s = maskscope.sweep(vary={"alpha": [0, 0.5], "d": [8, 16]}, n=5, layers=2, samples=100)
        >>> ds = s.to_xarray()
        >>> ds["value"].dims, ds["value"].shape, ds["weight_mean"].dims
        (('alpha', 'd', 'layer', 'metric'), (2, 2, 2, 6), ('alpha', 'd', 'layer', 'i', 'j'))
        """
        xr = _need_xarray()
        names = [name for name, _ in self.axes]
        shape = self.samples.shape
        L = len(self.layers)
        M = len(_METRIC_KEYS)
        value, se, ties = (np.full(shape + (L, M), np.nan) for _ in range(3))
        map_arrays: Dict[str, np.ndarray] = {}
        n = 0
        per_point = []
        for flat, index in enumerate(self._index_tuples()):
            layers = self._point_layers(flat)
            per_point.append((index, layers))
            for layer in layers:
                n = max(n, int(layer.norm_mean.shape[0])) if maps else n
        for index, layers in per_point:
            for k, layer in enumerate(layers):
                r = layer._full() if maps else layer._record
                for m, key in enumerate(_METRIC_KEYS):
                    if key in r:
                        value[index + (k, m)] = r[key]
                        se[index + (k, m)] = r.get(key + "_se", math.nan)
                        ties[index + (k, m)] = r.get(key + "_ties", math.nan)
                if not maps:
                    continue
                for key, v in r.items():
                    if isinstance(v, np.ndarray) and v.ndim == 2 and v.shape[0] == v.shape[1]:
                        arr = map_arrays.setdefault(key, np.full(shape + (L, n, n), np.nan))
                        arr[index + (k, slice(0, v.shape[0]), slice(0, v.shape[1]))] = v
        dims = tuple(names) + ("layer", "metric")
        data: Dict[str, Any] = {"value": (dims, value), "se": (dims, se), "ties": (dims, ties),
                                "samples": (tuple(names), np.asarray(self.samples)),
                                "stopped_early": (tuple(names), np.asarray(self.stopped_early))}
        for key, arr in map_arrays.items():
            data[key] = (tuple(names) + ("layer", "i", "j"), arr)
        coords: Dict[str, Any] = {name: list(values) for name, values in self.axes}
        coords.update({"layer": self.layers, "metric": _METRIC_KEYS})
        return xr.Dataset(data, coords=coords, attrs={"metric": self.metric})

    def _html_rows(self) -> List[Any]:
        rows = [(name, ", ".join(str(v) for v in values)) for name, values in self.axes]
        rows.append(("metric", self.metric))
        rows.append(("value shape", str(self.value.shape)))
        return rows

    def __repr__(self) -> str:
        axes = ", ".join(f"{name}: {len(values)} values" for name, values in self.axes)
        return f"<maskscope.SweepResult {self.metric} over {axes}; value shape {self.value.shape}>"
