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
from ._results import Head, Layer, Layers, Result
from ._settings import DEFAULTS as _DEFAULTS
from ._settings import settings_doc as _settings_doc
from ._sweep import SweepResult

__version__ = _maskscope.version
__all__ = ["run", "sweep", "analyze", "analyze_folder", "h_of_j_theory", "Result", "Layer", "Layers", "Head",
           "SweepResult", "SETTINGS"]

SETTINGS = dict(_DEFAULTS)  # every setting of `maskscope-cli run` with its default

run.__doc__ = f"""Runs the Monte Carlo simulation and returns its Result (the core's Run, as `maskscope-cli run`).

Every setting of `maskscope-cli run` is a keyword (the flag's name with underscores: init_std for
--init-std), checked by the core as the CLI checks it: a bad value raises ValueError with the CLI's
message (the setting and its valid range), a wrong type TypeError. progress=True shows a progress line
(or a notebook output line); a callable gets progress(samples_done, samples). Releases the GIL while it
runs; Ctrl+C or a notebook's interrupt stops it with KeyboardInterrupt within a tenth of a second.

The result's layers are indexed by number (layers[1] is layer 1); each has the metrics
{", ".join(m["key"] for m in _maskscope.metric_table())} with their standard errors (KEY_se) and tie shares
(KEY_ties, where the metric counts ties), and the maps as NumPy arrays
(score_mean, weight_mean, cosine_mean with their _se arrays, score_diag_normalized, norm_mean, h).
to_dict() is exactly the CLI's JSON.

Settings:
{_settings_doc()}
"""

sweep.__doc__ = f"""Sweeps one or two settings (the core's Sweep, as `maskscope-cli sweep`) and returns a SweepResult.

vary: {{setting: values}} with one or two settings; values a list ([0, 0.25, 0.5], ["none", "layernorm"])
or the CLI's LIST text ("0:1:11", "4:1024:9log"). metric: the stopping rule's and the arrays' metric,
one of {_maskscope.sweep_metric_names()} (default "rp"). se: stop each point once the metric's SE is
at most this in every layer (samples is then the cap; None or 0: every point to samples). Every other
keyword is a fixed setting, as for run(). Every point uses the same seed (common random numbers).

The result's value, se and ties arrays have shape (len(values_1)[, len(values_2)], layers); points gives
each point's dict as the CLI's sweep file, point(i[, j]) a point as a Result, to_dict() the sweep file.
Bad arguments raise ValueError with the CLI's message; the GIL is released; Ctrl+C stops it.
"""

analyze.__doc__ = """Analyses a real model's attention with the simulation's metrics (as `maskscope-cli analyze`).

logits: [P, L, H, T, T] pre-softmax attention logits of P prompts (masked entries are ignored; -inf is
fine). weights: the attention weights, same shape (optional; else the softmax of the logits under the
mask). hidden: [P, L+1, T, d] hidden states, layer 0 the embeddings (optional; gives cosines, norms and
adjacency). Anything with __array__ (a CPU torch tensor) in float16, float32 or float64: read in place,
copied only when not C-ordered or not native-endian. mask: "causal", "bidirectional" or "window:W".
layers: analyse only these (3, [1, 2] or "1,30-32"); each keeps its number.

NaN anywhere, +inf anywhere and -inf in weights or hidden states are refused with ValueError naming the
first (its index and its prompt, layer, head, i, j) and the count; allow_nonfinite=True leaves out the
prompts holding them instead, warns how many, and records it in result.left_out. Every prompt is one
sample: means and standard errors are over prompts. to_dict() is the CLI's JSON for the same arrays saved
as a tensor folder (docs/tensors.md). Releases the GIL; Ctrl+C stops it.
"""

analyze_folder.__doc__ = """analyze() on a tensor folder (manifest.json and .npy arrays, docs/tensors.md), memory-mapped, as
`maskscope-cli analyze FOLDER`. layers and allow_nonfinite as for analyze()."""

h_of_j_theory.__doc__ = """LN-recency Eq. 42: h(j) for j = 1..n at width d, anisotropy alpha and residual gamma, as a NumPy
array. The paper's plots (Fig. 2, 7) drop the 1/sqrt(d) factor: with_inv_sqrt_d=False for them. A large-d
approximation: it predicts the trend (h increasing in j), not the exact simulated values at small d."""
