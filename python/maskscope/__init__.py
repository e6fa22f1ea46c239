"""maskscope for Python: the Monte Carlo simulator of position bias in transformer attention, its sweeps and the
analysis of a real model's attention tensors, with NumPy arrays in and out (docs/python.md).

    import maskscope
    r = maskscope.run(n=10, samples=10_000)
    r.layers[1].rp, r.layers[1].rp_se          # layer 1's recency probability and its standard error
    r.layers[2].weight_mean                    # n x n NumPy array (NaN where masked)
    s = maskscope.sweep(vary={"alpha": [0, 0.25, 0.5]}, samples=10_000)
    s.value[:, 0]                              # RP of layer 1 against alpha
    a = maskscope.analyze(logits, hidden=hidden)   # [P, L, H, T, T] and [P, L+1, T, d] arrays

The same core as maskscope-cli and the window: a run's to_dict() is the JSON of `maskscope-cli run` with the
same settings, bit for bit. Calls release the GIL, stop at Ctrl+C (KeyboardInterrupt) and show progress with
progress=True.
"""

from . import _maskscope
from ._api import analyze, analyze_folder, h_of_j_theory, run, sweep
from ._data import kinds, load
from ._documents import Document, LeakageResult, ProbeResult, TheoryResult
from ._results import Head, Heads, Layer, Layers, Result
from ._settings import DEFAULTS as _DEFAULTS
from ._settings import settings_doc as _settings_doc
from ._sweep import SweepResult
from ._train import TrainLog, train

__version__ = _maskscope.version
__all__ = ["run", "train", "TrainLog", "sweep", "analyze", "analyze_folder", "h_of_j_theory", "load", "kinds", "Result", "Layer",
           "Layers", "Head", "Heads", "SweepResult", "LeakageResult", "ProbeResult", "TheoryResult", "Document",
           "SETTINGS"]

SETTINGS = dict(_DEFAULTS)  # every setting of `maskscope-cli run` with its default

_METRIC_KEYS = ", ".join(m["key"] for m in _maskscope.metric_table())

run.__doc__ = f"""Runs the Monte Carlo simulation (the core's Run, as ``maskscope-cli run``).

Every setting of ``maskscope-cli run`` is a keyword (the flag's name with underscores: init_std for
--init-std), checked by the core as the CLI checks it. Releases the GIL while it runs; Ctrl+C or a
notebook's interrupt stops it with KeyboardInterrupt within a tenth of a second.

Parameters
----------
{_settings_doc()}
progress : bool or callable, default False
    True shows a progress line (or a notebook output line); a callable gets progress(samples_done, samples).

Returns
-------
Result
    The layers by number (layers[1] is layer 1), each with the metrics {_METRIC_KEYS}, their
    standard errors (KEY_se) and tie shares (KEY_ties), and the maps as read-only NumPy arrays; to_dict() is
    exactly the CLI's JSON.

Raises
------
ValueError
    A setting out of its range, or of the other model family, with the CLI's message (one line a problem).
TypeError
    An unknown keyword, or a value of the wrong type (n="10", norm=1).
KeyboardInterrupt
    Ctrl+C, or the progress callable raised; the run is cancelled and its threads joined.

Examples
--------
>>> import maskscope
>>> r = maskscope.run(n=6, layers=2, samples=1000, seed=1)
>>> r.layers[1].weight_mean.shape, r.samples
((6, 6), 1000)
>>> 0 < r.layers[2].rp < 1
True
>>> maskscope.run(alpha=2)
Traceback (most recent call last):
ValueError: alpha: 2 is out of range; valid: number in [0, 1]
"""

sweep.__doc__ = f"""Sweeps one or two settings (the core's Sweep, as ``maskscope-cli sweep``).

Every point uses the same seed (common random numbers). Releases the GIL; Ctrl+C stops it.

Parameters
----------
vary : dict
    {{setting: values}} with one or two settings; values a list ([0, 0.25, 0.5], ["none", "layernorm"]) or the
    CLI's LIST text ("0:1:11", "4:1024:9log").
metric : str, default 'rp'
    The stopping rule's and the arrays' metric, one of {_maskscope.sweep_metric_names()}.
se : float or None, default None
    Stop each point once the metric's SE is at most this in every layer (samples is then the cap; None or 0:
    every point to samples).
{_settings_doc()}
progress : bool or callable, default False
    True shows the stages and points; a callable gets progress(points_done, points, samples, stages).

Returns
-------
SweepResult
    value, se and ties of shape (len(values_1)[, len(values_2)], layers); points, point(i[, j]),
    to_dict() (the CLI's sweep file), to_dataframe(), to_xarray().

Raises
------
ValueError
    A bad swept or fixed setting, with the CLI's message.
TypeError
    vary not a dict, an unknown keyword, a value of the wrong type.

Examples
--------
>>> import maskscope
>>> s = maskscope.sweep(vary={{"alpha": [0, 0.5, 1]}}, n=5, layers=2, samples=200)
>>> s.value.shape, s.axes
((3, 2), [('alpha', [0, 0.5, 1])])
"""

analyze.__doc__ = """Analyses a real model's attention with the simulation's metrics (as ``maskscope-cli analyze``).

Every prompt is one sample: means and standard errors are over prompts. The arrays are read in place
(copied only when not C-ordered or not native-endian; bfloat16 is converted to float32). Releases the
GIL; Ctrl+C stops it.

Parameters
----------
logits : array_like
    [P, L, H, T, T] pre-softmax attention logits of P prompts (masked entries are ignored; -inf there is
    fine), float16, bfloat16, float32 or float64: a NumPy array or anything with __array__ (a CPU torch
    tensor, detached first).
weights : array_like, optional
    The attention weights, same shape; else the softmax of the logits under the mask. Each row must sum to 1
    over its visible keys within 1e-3 (float16: 4e-3, bfloat16: 3e-2).
hidden : array_like, optional
    [P, L+1, T, d] hidden states, layer 0 the embeddings (gives cosines, norms and adjacency).
mask : str, default 'causal'
    'causal', 'bidirectional' or 'window:W'.
layers : int, list of int or str, optional
    Analyse only these (3, [1, 2] or "1,30-32"); each keeps its number (1..L).
allow_nonfinite : bool, default False
    Leave out the prompts holding a NaN, an infinity or a visible row of -inf logits (warning how many, and
    recording it in result.left_out) instead of refusing them.
progress : bool or callable, default False
    True shows the prompts done; a callable gets progress(prompts_done, prompts).

Returns
-------
Result
    Its to_dict() is the CLI's JSON for the same arrays saved as a tensor folder (docs/tensors.md).

Raises
------
ValueError
    A shape that does not fit, NaN or +inf anywhere, -inf at a visible logit or in weights or hidden
    states, a visible row of -inf logits, or weights whose visible row sums differ from 1 by more than the
    tolerance: each names the first (its index and its prompt, layer, head, i, j) and the count.
TypeError
    An array of another dtype (integers), or a wrong argument type.

Examples
--------
>>> import numpy as np, maskscope
>>> logits = np.random.default_rng(1).normal(size=(4, 2, 1, 5, 5))
>>> r = maskscope.analyze(logits)
>>> r.samples, r.layers.numbers
(4, [1, 2])
>>> logits[0, 0, 0, 3, 1] = -np.inf
>>> maskscope.analyze(logits)  # doctest: +ELLIPSIS
Traceback (most recent call last):
ValueError: 1 non-finite value (0 NaN, 1 infinite) in 1 of 4 prompts; the first: logits[0, 0, 0, 3, 1] = -inf (prompt 0, layer 1, head 1, i 3, j 1) at a key the mask leaves visible...
>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     r = maskscope.analyze(logits, allow_nonfinite=True)
>>> r.samples, r.left_out["prompts"]
(3, 1)
"""

analyze_folder.__doc__ = """analyze() on a tensor folder (manifest.json and .npy arrays, docs/tensors.md), memory-mapped,
as ``maskscope-cli analyze FOLDER``.

Parameters
----------
path : str or os.PathLike
    The folder.
layers, allow_nonfinite, progress
    As for analyze().

Returns
-------
Result
    As analyze() of the same arrays.

Raises
------
ValueError
    The folder cannot be read as a tensor folder, or its values are refused as analyze() refuses them.
"""

h_of_j_theory.__doc__ = """LN-recency Eq. 42: h(j) for j = 1..n at width d, anisotropy alpha and residual gamma.

A large-d approximation: it predicts the trend (h increasing in j), not the exact simulated values at small d.

Parameters
----------
n : int
    Positions (the setting n's range).
d : int
    Width (the setting d's range).
alpha : float
    Anisotropy, in [0, 1].
gamma : float, default 0.0
    Residual weight (the setting gamma's range).
with_inv_sqrt_d : bool, default True
    The 1/sqrt(d) factor; the paper's plots (Fig. 2, 7) drop it: False for them.

Returns
-------
numpy.ndarray
    h(1..n), read-only.

Raises
------
ValueError
    A value out of its setting's range, naming the setting and the range.
TypeError
    A value of the wrong type.

Examples
--------
>>> import maskscope
>>> h = maskscope.h_of_j_theory(n=4, d=16, alpha=0.5)
>>> h.shape, bool(h[3] > h[0])
((4,), True)
>>> maskscope.h_of_j_theory(n=4, d=0, alpha=0.5)
Traceback (most recent call last):
ValueError: d: 0 is out of range; valid: whole number in [1, 65536]
"""

train.__doc__ = f"""Trains the random-weight network with a tied language-model head (as ``maskscope-cli train``).

The run (docs/model.md, "Training") writes config.json, step-NNNNNN.safetensors checkpoints (GPT-2's layout:
``maskscope.run(checkpoint=out)`` reads them), its state files and log.jsonl into the folder ``out``, the same
bytes as ``maskscope-cli train`` with the same flags. Every keyword is checked by the core as the CLI checks its
flag. Releases the GIL; Ctrl+C, a notebook's interrupt or a progress callable raising KeyboardInterrupt stops
the run at the next step boundary with a last checkpoint and re-raises; ``resume=True`` continues it.

The settings are ``run``'s (the table below) for the random-weight network: model random_weights and weights
fixed only, n the data's sequence length, vocab at least the data's (the data's by default); ``seed`` orders
the batches, ``weight_seed`` draws the initial network, ``tokens`` is a token file as a corpus.

Parameters
----------
task : {{'addition', 'reversal', 'indexing', 'ordering'}} or None
    Zuo et al.'s task (or ``tokens=FILE``, a corpus; exactly one of the two).
out : str or os.PathLike
    The run folder: new or empty; with ``resume=True`` the run's folder.
steps : int, default 1000
    Optimizer steps, in [1, 10^9].
batch : int, default 64
    Sequences per step, in [1, 65536].
lr : float, default 0.001
    Peak learning rate, in (0, 10].
warmup : int, default min(100, steps)
    Linear warm-up steps, in [0, steps].
weight_decay : float, default 0.1
    AdamW's decoupled decay on the 2-D tensors, in [0, 10].
grad_clip : float, default 1.0
    Global gradient-norm clip, in [0, 10^6]; 0 = none.
eval_every : int, default 100
    Steps between evaluations into log.jsonl, in [1, 10^9].
checkpoint_every : int, default 1000
    Steps between checkpoints, in [1, 10^9] (the last step always has one).
eval_sequences : int, default 1000
    Test sequences per evaluation, in [1, 20000].
resume : bool, default False
    Continue the run in ``out`` as its config.json describes it (only ``threads`` may be given besides).
progress : bool or callable, default False
    True shows a progress line; a callable gets progress(step, steps, loss, accuracy, tokens_per_s), accuracy
    the last evaluation's (NaN before any).
{_settings_doc()}

Returns
-------
TrainLog
    The run's log.jsonl as arrays (the same as ``maskscope.load(out)``).

Raises
------
ValueError
    A keyword out of its range, or a folder that cannot hold the run, with the CLI's message naming it.
TypeError
    An unknown keyword, or a value of the wrong type.
KeyboardInterrupt
    Ctrl+C, or the progress callable raised it; the run stopped with a checkpoint (``resume=True`` goes on).

Examples
--------
>>> import maskscope, os, tempfile
>>> out = os.path.join(tempfile.mkdtemp(), "run")
>>> log = maskscope.train(task="reversal", d=16, layers=2, steps=10, batch=8, eval_every=5,
...                       eval_sequences=20, out=out)
>>> log.step.tolist(), log.rp.shape
([0, 5, 10], (3, 2))
>>> sorted(f for f in os.listdir(out) if f.startswith("step-"))
['step-000000.safetensors', 'step-000010.safetensors']
>>> maskscope.load(out) == log
True
>>> maskscope.train(task="reversal", steps=0, out=out + "2")
Traceback (most recent call last):
ValueError: steps: 0 is out of range; valid: whole number in [1, 1000000000]
"""
