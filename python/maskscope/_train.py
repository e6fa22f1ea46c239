"""maskscope.train and its result, TrainLog: a training run's log.jsonl as arrays (one row per evaluation).

train() hands the settings (the table's rows, as run) and train's own flags to the core as the CLI's text, so
the checks and messages are `maskscope-cli train`'s; the run is the core's run_training, the same bytes as the
CLI's. Docstrings are filled in __init__.py."""

from __future__ import annotations

import html
import inspect
import json
import numbers
import os
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _maskscope as _core
from . import _progress, _settings
from ._data import Data, readonly, register

# train's own keywords (the CLI's flags with underscores) with the CLI's defaults (None: the CLI's default, which
# for warmup is min(100, steps)).
TRAINING = ("steps", "batch", "lr", "warmup", "weight_decay", "grad_clip", "eval_every", "checkpoint_every",
            "eval_sequences")
_WHOLE = {"steps", "batch", "warmup", "eval_every", "checkpoint_every", "eval_sequences"}
TRAINING_DEFAULTS = {"steps": 1000, "batch": 64, "lr": 0.001, "warmup": 100, "weight_decay": 0.1, "grad_clip": 1.0,
                     "eval_every": 100, "checkpoint_every": 1000, "eval_sequences": 1000}
# log.jsonl's numbers: one per evaluation, and per layer (evaluations x layers).
SCALARS = ("step", "train_loss", "test_loss", "test_accuracy", "lr", "tokens_per_s")
PER_LAYER = ("adjacency", "adjacency_se", "norm_adjacency", "norm_adjacency_se", "rp", "rp_se", "sink_weight",
             "sink_weight_se", "residual_stream_share", "residual_stream_share_se")


def _number(x: Any) -> float:
    return float("nan") if x is None else float(x)


def _layer_number(layer: Dict[str, Any], key: str) -> float:
    """A per-layer number of a log line; r_l (``residual_stream_share``) is an object {"value", "se", "note"}
    logged with a fixed first token only: NaN where it is absent or null."""
    if key.startswith("residual_stream_share"):
        share = layer.get("residual_stream_share")
        field = "se" if key.endswith("_se") else "value"
        return _number(share.get(field)) if isinstance(share, dict) else float("nan")
    return _number(layer.get(key))


@register("train_log", lambda doc: isinstance(doc.get("log"), list) and "training" in doc)
class TrainLog(Data):
    """A training run's log (log.jsonl): one row per evaluation, as read-only arrays.

    ``step`` (int), ``train_loss`` (the mean over the steps since the last evaluation; NaN at step 0),
    ``test_loss``, ``test_accuracy`` (exact match), ``lr`` and ``tokens_per_s`` have one entry per evaluation;
    ``adjacency``, ``norm_adjacency``, ``rp``, ``sink_weight``, ``residual_stream_share`` (r_l, logged with a
    fixed first token only: NaN without one, or where the causal dR^2 is not significant) and their ``_se`` are
    (evaluations x layers) arrays, column l - 1 for layer l (``layer_numbers``). ``training`` is config.json's "training" object (the
    run's settings), ``folder`` the run folder (None when read from a lone log file; not compared by ==).
    """

    def __init__(self, lines: List[Dict[str, Any]], training: Optional[Dict[str, Any]] = None,
                 folder: Optional[str] = None) -> None:
        self._lines = [dict(line) for line in lines]
        self.training = training
        self.folder = folder
        for key in SCALARS:
            values = [_number(line.get(key)) for line in self._lines]
            dtype = np.int64 if key == "step" else float
            setattr(self, key, readonly(np.array(values, dtype=dtype)))
        layers = self._lines[0].get("layers", []) if self._lines else []
        self.layer_numbers = readonly(np.array([int(l["layer"]) for l in layers], dtype=np.int64))
        for key in PER_LAYER:
            table = [[_layer_number(l, key) for l in line.get("layers", [])] for line in self._lines]
            a = np.array(table, dtype=float).reshape(len(self._lines), len(layers))
            setattr(self, key, readonly(a))

    # --- construction ---
    @classmethod
    def _of_path(cls, path: str) -> "TrainLog":
        """A run folder (its log.jsonl and config.json) or a log.jsonl (its folder's config.json if present)."""
        folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        log = os.path.join(path, "log.jsonl") if os.path.isdir(path) else path
        with open(log, encoding="utf-8") as f:
            text = f.read()
        lines = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{log}:{number}: not JSON ({e})") from None
            if not isinstance(doc, dict) or "step" not in doc:
                raise ValueError(f"{log}:{number}: not a line of a training log (no 'step')")
            lines.append(doc)
        training = None
        config = os.path.join(folder, "config.json")
        if os.path.isfile(config):
            with open(config, encoding="utf-8") as f:
                try:
                    training = json.load(f).get("training")
                except (json.JSONDecodeError, AttributeError):
                    training = None
        return cls(lines, training, folder if training is not None or os.path.isdir(path) else None)

    def _state(self) -> Any:
        return {"log": self._lines, "training": self.training, "folder": self.folder}

    @classmethod
    def _from_state(cls, state: Any) -> "TrainLog":
        return cls(state["log"], state.get("training"), state.get("folder"))

    def to_dict(self) -> Dict[str, Any]:
        """{"training": config.json's training object, "log": log.jsonl's lines}."""
        return {"training": self.training, "log": [dict(line) for line in self._lines]}

    # --- views ---
    def __len__(self) -> int:
        return len(self._lines)

    def to_dataframe(self) -> Any:
        """The log as a table: one row per evaluation (index ``step``), a column per number, and per layer l the
        columns ``rp_l``, ``rp_se_l``, ... (``adjacency``, ``norm_adjacency``, ``rp``, ``sink_weight``,
        ``residual_stream_share``).

        Raises
        ------
        ImportError
            pandas is not installed.
        """
        from ._results import _need_pandas

        pd = _need_pandas()
        columns: Dict[str, Any] = {key: np.asarray(getattr(self, key)) for key in SCALARS}
        for key in PER_LAYER:
            for i, layer in enumerate(self.layer_numbers):
                columns[f"{key}_{int(layer)}"] = np.asarray(getattr(self, key))[:, i]
        return pd.DataFrame(columns).set_index("step")

    def __repr__(self) -> str:
        if not self._lines:
            return "<maskscope.TrainLog no evaluations>"
        return (f"<maskscope.TrainLog {len(self)} evaluations, steps {int(self.step[0])}..{int(self.step[-1])}, "
                f"{len(self.layer_numbers)} layers, test accuracy {float(self.test_accuracy[-1]):.4g}>")

    def _html_rows(self) -> List[Tuple[str, str]]:
        rows = [("folder", str(self.folder)), ("evaluations", str(len(self)))]
        if self.training:
            rows += [(k, html.escape(str(self.training[k]))) for k in ("task", "tokens", "steps", "batch")
                     if self.training.get(k) not in (None, "")]
        if self._lines:
            rows += [(k, f"{float(getattr(self, k)[-1]):.6g}") for k in ("step", "train_loss", "test_loss",
                                                                           "test_accuracy")]
        return rows


def _training_text(name: str, value: Any) -> str:
    if isinstance(value, bool) or type(value).__name__ == "bool_" or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number, got {type(value).__name__} {value!r}")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return repr(float(value))


def train(*, task=None, out=None, resume=False, progress=False, **keywords):
    training, settings = [], {}
    for name, value in keywords.items():
        if name in TRAINING:
            if value is not None:
                training.append((name.replace("_", "-"), _training_text(name, value)))
        else:
            settings[name] = value
    if task is not None and not isinstance(task, str):
        raise TypeError(f"task: expected a name (str), got {type(task).__name__}")
    if out is None or not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out: expected the run folder (str or os.PathLike), got {type(out).__name__}")
    if not isinstance(resume, (bool, np.bool_)):
        raise TypeError(f"resume: expected True or False, got {type(resume).__name__}")
    folder = os.fspath(out)
    bar = _progress.make(progress, "steps")
    try:
        _core._train(_settings.texts(settings, "train"), training, task or "", folder, bool(resume), bar)
    finally:
        _progress.close(bar)
    return TrainLog._of_path(folder)


# train's own defaults of settings whose run default differs: the network it trains (the signature and the stubs).
SETTING_DEFAULTS = {"model": "random_weights", "weights": "fixed"}
_KW = inspect.Parameter.KEYWORD_ONLY
_signature = _settings.signature(
    [inspect.Parameter(k, _KW, default=None) for k in TRAINING] +
    [inspect.Parameter("resume", _KW, default=False), inspect.Parameter("progress", _KW, default=False)],
    first=[inspect.Parameter("task", _KW, default=None), inspect.Parameter("out", _KW, default=None)])
train.__signature__ = _signature.replace(parameters=[
    p.replace(default=SETTING_DEFAULTS[p.name]) if p.name in SETTING_DEFAULTS else p
    for p in _signature.parameters.values()])
