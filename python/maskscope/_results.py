"""Results as Python objects: a run's or an analysis's layers with their numbers, NumPy maps and standard errors,
read from the core's snapshot (the names are the keys of the CLI's JSON; to_dict() is that JSON)."""

import functools
import json

import numpy as np

from . import _maskscope

# The layer metrics, one row each (core/stats/metric_table.hpp): Layer and Head take their attributes from it.
_METRICS = _maskscope.metric_table()


class Head:
    """One attention head of a random-weight or real-model layer: its RP, leakage and maps."""

    def __init__(self, snap, index, head):
        self._snap, self._index, self.head = snap, index, head
        self._scalars = snap.head_scalars(index, head)


    def _map(self, name):
        return self._snap.map(self._index, name, self.head)

    score_mean = functools.cached_property(lambda self: self._map("score_mean"))
    score_se = functools.cached_property(lambda self: self._map("score_se"))
    weight_mean = functools.cached_property(lambda self: self._map("weight_mean"))
    weight_se = functools.cached_property(lambda self: self._map("weight_se"))

    def __repr__(self):
        return f"<maskscope.Head {self.head}: rp {self.rp:.6g} +- {self.rp_se:.2g}>"


def _scalar(name, doc):
    return property(lambda self: self._scalars[name], doc=doc)


def _note(name, doc):
    return property(lambda self: self._scalars.get(name), doc=doc)


def _add_metrics(cls, heads):
    """The metric table's estimates as attributes KEY, KEY_se, KEY_ties (the metrics with ties) and KEY_note;
    `heads`: only the metrics each head has."""
    for m in _METRICS:
        if heads and not m["head"]:
            continue
        key = m["key"]
        setattr(cls, key, _scalar(key, m["description"]))
        setattr(cls, key + "_se", _scalar(key + "_se", "standard error of " + key))
        setattr(cls, key + "_note", _note(key + "_note", f"why {key} is NaN (null) or its SE 0 at float resolution "
                                          "(docs/model.md section 4.1), or None"))
        if m["ties"]:
            setattr(cls, key + "_ties", _scalar(key + "_ties", f"share of {m['label']}'s comparisons that were ties"))


_add_metrics(Head, heads=True)


def _array(name, doc):
    p = functools.cached_property(lambda self: self._snap.map(self._index, name))
    p.__doc__ = doc
    return p


class Layer:
    """One layer of a result (number 1..L; 0 is the random-weight family's embeddings).

    Numbers: each metric of the core's table (rp, adjacency, delta_r2, ...; _maskscope.metric_table()) with
    _se, and _ties where it counts ties; ties gives the tie shares as a dict. Maps (n x n NumPy arrays, row i
    the query, column j the key, NaN where masked): score_mean, weight_mean, cosine_mean and their
    _se arrays, score_diag_normalized. Vectors: norm_mean, norm_se, and h / h_se (LN-recency's h(j): the
    inverse of the mean norm of x_j after this layer). NaN where a metric does not exist (n < 3, or no
    hidden states in an analysis).
    """

    def __init__(self, snap, index):
        self._snap, self._index = snap, index
        self._scalars = snap.scalars(index)

    number = _scalar("layer", "the layer's number: 1..L, 0 for the embeddings")
    delta_r2_bins = _scalar("delta_r2_bins", "dR^2 by query-position bins: [{'from', 'to', 'delta_r2'}]")

    @property
    def ties(self):
        """The tie shares of the metrics that count ties (rp, adjacency, ...; a collapsed representation has many)."""
        return {m["key"]: self._scalars[m["key"] + "_ties"] for m in _METRICS if m["ties"]}

    score_mean = _array("score_mean", "mean logits S (n x n, NaN where masked)")
    score_se = _array("score_se", "standard errors of score_mean")
    weight_mean = _array("weight_mean", "mean attention weights A (n x n, NaN where masked)")
    weight_se = _array("weight_se", "standard errors of weight_mean")
    cosine_mean = _array("cosine_mean", "mean cosine similarities of the outputs (n x n, symmetric)")
    cosine_se = _array("cosine_se", "standard errors of cosine_mean")
    score_diag_normalized = _array("score_diag_normalized", "score_mean less each diagonal's mean (Behind RoPE)")

    def stage_gram(self, stage, cosine=False, se=False):
        """The Gram matrix of one stage of the layer's forward pass (n x n, symmetric; docs/model.md section 12):
        the mean inner products <s_i, s_j> (cosine=True: the mean cosines), or their standard errors (se=True).
        stage: input, normalized, query, key, mix, attention, residual, mlp (those the model has); the run
        needs stage_grams=True."""
        kind = ("cosine" if cosine else "gram") + ("_se" if se else "_mean")
        return self._snap.map(self._index, f"stage.{stage}.{kind}")

    @functools.cached_property
    def norm_mean(self):
        """mean norm ||x_j|| of the layer's output at each position j (n)"""
        return self._snap.vector(self._index, "norm_mean")

    @functools.cached_property
    def norm_se(self):
        """standard errors of norm_mean"""
        return self._snap.vector(self._index, "norm_se")

    @functools.cached_property
    def h(self):
        """h(j) as LN-recency plots it: 1 / mean ||x_j|| (n; NaN where the norm is 0); compare with h_of_j_theory"""
        m = self.norm_mean
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(m > 0, 1.0 / m, np.nan)

    @functools.cached_property
    def h_se(self):
        """standard errors of h by the delta method: norm_se / norm_mean^2"""
        m = self.norm_mean
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(m > 0, self.norm_se / (m * m), np.nan)

    @functools.cached_property
    def heads(self):
        """each head's numbers and maps (random weights and real models; empty for the parameter-free model)"""
        return [Head(self._snap, self._index, h) for h in range(self._scalars["heads"])]

    def __repr__(self):
        if self.number == 0:
            return f"<maskscope.Layer 0 (the embeddings): adjacency {self.adjacency:.6g} +- {self.adjacency_se:.2g}>"
        return f"<maskscope.Layer {self.number}: rp {self.rp:.6g} +- {self.rp_se:.2g}>"


_add_metrics(Layer, heads=False)


class Layers:
    """A result's layers, indexed by their numbers as the papers and the CLI's JSON number them (layers[1] is
    layer 1; an analysis of some layers keeps the model's numbers). Iterating gives them in order."""

    def __init__(self, snap):
        self._layers = [Layer(snap, i) for i in range(snap.layer_count)]
        self._by_number = {l.number: l for l in self._layers}
        self._embeddings = Layer(snap, -1) if snap.has_embeddings else None

    def __getitem__(self, number):
        if number == 0 and self._embeddings is not None:
            return self._embeddings
        try:
            return self._by_number[number]
        except (KeyError, TypeError):
            raise IndexError(f"no layer {number!r}; the layers are {self.numbers}"
                             + (" (0: the embeddings)" if self._embeddings else "")) from None

    def __iter__(self):
        return iter(self._layers)

    def __len__(self):
        return len(self._layers)

    @property
    def numbers(self):
        return [l.number for l in self._layers]

    def __repr__(self):
        return f"<maskscope.Layers {self.numbers}>"


class Result:
    """A run's or an analysis's result: layers (by number), embeddings (layer 0 of the random-weight family and of
    models with hidden states, else None), samples done, elapsed_s, settings, and to_dict(), the CLI's JSON."""

    def __init__(self, snap, left_out=None):
        self._snap = snap
        self.layers = Layers(snap)
        self.embeddings = self.layers._embeddings
        self.left_out = left_out  # analyze with allow_nonfinite: the prompts left out, else None

    samples = property(lambda self: self._snap.samples, doc="samples (prompts, in an analysis) done")
    elapsed_s = property(lambda self: self._snap.elapsed_s, doc="seconds the core took")
    samples_per_s = property(lambda self: self._snap.samples_per_s, doc="samples per second (a run)")
    finished = property(lambda self: self._snap.finished, doc="reached its samples")

    @functools.cached_property
    def settings(self):
        """the settings as the CLI's JSON config spells them"""
        return json.loads(self._snap.settings_json)

    def to_dict(self):
        """Exactly the JSON `maskscope-cli run` (or `analyze`) writes for this result, as Python objects."""
        return json.loads(self._snap.json())

    def to_json(self):
        """The same as JSON text, as the CLI writes it."""
        return self._snap.json()

    def __repr__(self):
        rps = ", ".join(f"{l.number}: {l.rp:.4g}" for l in self.layers)
        return f"<maskscope.Result {self.samples} samples; rp by layer {{{rps}}}>"
