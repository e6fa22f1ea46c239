"""The package as a type checker sees it: this file passes `mypy --strict` (ctest python_types, through the
generated stubs python/maskscope/*.pyi) and runs as a test, so the stubs' names, types and defaults are the
ones the module has."""

import os
import pickle

import numpy as np
import numpy.typing as npt

import maskscope


def mean_rp(result: maskscope.Result) -> float:
    return float(np.mean([layer.rp for layer in result.layers]))


def test_typed_run_sweep_and_results() -> None:
    r: maskscope.Result = maskscope.run(n=5, layers=2, alpha=0.25, norm="rmsnorm", samples=200, seed=4)
    layer: maskscope.Layer = r.layers[2]
    weights: npt.NDArray[np.float64] = layer.weight_mean
    assert weights.shape == (5, 5) and 0.0 <= mean_rp(r) <= 1.0
    assert layer.number == 2 and isinstance(layer.rp_se, float) and isinstance(layer.ties, dict)
    assert r.embeddings is None and r.samples == 200
    rw = maskscope.run(model="random_weights", n=4, d=8, heads=2, layers=1, samples=20, embed_std=None)
    head: maskscope.Head = rw.layers[1].heads[2]
    assert head.number == 2 and head.weight_mean.shape == (4, 4)
    s: maskscope.SweepResult = maskscope.sweep({"d": [8, 16]}, "rp", None, n=4, layers=1, samples=50)
    assert s.value.shape == (2, 1) and s.point(1).layers[1].rp == float(s.value[1, 0])
    again = pickle.loads(pickle.dumps(s))
    assert isinstance(again, maskscope.SweepResult) and again == s
    h: npt.NDArray[np.float64] = maskscope.h_of_j_theory(6, 16, 0.5, gamma=0.1, with_inv_sqrt_d=False)
    assert h.shape == (6,)
    assert maskscope.SETTINGS["n"] == 10 and "sweep" in maskscope.kinds()


def test_typed_train(tmp_path: "os.PathLike[str]") -> None:
    out = os.path.join(os.fspath(tmp_path), "run")
    log: maskscope.TrainLog = maskscope.train(task="reversal", d=16, layers=2, steps=4, batch=4, lr=0.003,
                                              eval_every=2, eval_sequences=10, weight_seed=2, out=out)
    steps: npt.NDArray[np.int64] = log.step
    rp: npt.NDArray[np.float64] = log.rp
    assert steps.tolist() == [0, 2, 4] and rp.shape == (3, 2) and len(log) == 3
    assert log.training is not None and log.training["steps"] == 4
