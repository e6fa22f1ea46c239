"""A sweep's result: the metric as arrays shaped by the swept settings, each point's dict as in the CLI's
sweep file, each point as a Result, and to_dict(), the CLI's sweep file."""

import functools
import json

from ._results import Result


class SweepResult:
    """The metric over the swept settings.

    axes: [(name, values)] in the order given (the first outermost). value, se, ties: arrays of shape
    (len(values_1)[, len(values_2)], L), the metric per point and layer (layer k at index k - 1; NaN past a
    point's layers when layers is swept); samples, stopped_early: shape (len(values_1)[, len(values_2)]).
    points: each point's dict (settings, samples, stopped_early, kernel, layers) as the CLI's sweep file has it;
    point(i[, j]) that point as a Result. to_dict(): the CLI's sweep file.
    """

    def __init__(self, core):
        self._core = core
        self.axes = [(a["name"], a["values"]) for a in json.loads(core.vary_json())]
        self.metric = core.metric
        self.se_target = core.se
        self.elapsed_s = core.elapsed_s
        self.stages = core.stages
        shape = tuple(len(v) for _, v in self.axes)
        value, se, ties, samples, early = core.metric_table()
        layers = value.shape[1]
        self.value = value.reshape(shape + (layers,))
        self.se = se.reshape(shape + (layers,))
        self.ties = ties.reshape(shape + (layers,))
        self.samples = samples.reshape(shape)
        self.stopped_early = early.reshape(shape)
        self.layers = list(range(1, layers + 1))

    def _flat(self, index):
        shape = self.samples.shape
        if len(index) != len(shape):
            raise IndexError(f"a point of this sweep has {len(shape)} indices, got {len(index)}")
        flat = 0
        for i, n in zip(index, shape):
            if not -n <= i < n:
                raise IndexError(f"index {i} out of range for {n} values")
            flat = flat * n + (i % n)
        return flat

    def point(self, *index):
        """The point at these indices into the axes' values, as a Result (its layers, maps and to_dict())."""
        return Result(self._core.point_snapshot(self._flat(index)))

    @functools.cached_property
    def points(self):
        """Each point's dict as the CLI's sweep file has it, in the sweep's order (the first axis outermost)."""
        return [json.loads(self._core.point_json(i)) for i in range(self._core.point_count)]

    def to_dict(self):
        """Exactly the sweep file `maskscope-cli sweep --out FILE.json` writes, as Python objects."""
        return json.loads(self._core.json())

    def __repr__(self):
        axes = ", ".join(f"{name}: {len(values)} values" for name, values in self.axes)
        return f"<maskscope.SweepResult {self.metric} over {axes}; value shape {self.value.shape}>"
