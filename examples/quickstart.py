"""maskscope from a script, typed (mypy --strict passes on it: ctest python_types): a run, a sweep, a table,
and a result saved and loaded back. Run it with the package installed (docs/python.md, "Install"):

    python3 examples/quickstart.py
"""

import os
import pickle
import tempfile

import numpy as np
import numpy.typing as npt

import maskscope


def recency_by_layer(result: maskscope.Result) -> dict[int, float]:
    """Each layer's recency probability, by layer number (1..L, as the JSON and the window number them)."""
    return {layer.number: layer.rp for layer in result.layers}


def main() -> None:
    r = maskscope.run(n=8, d=32, layers=3, alpha=0.5, norm="layernorm", samples=2000, seed=1)
    print("RP by layer:", recency_by_layer(r))
    weights: npt.NDArray[np.float64] = r.layers[1].weight_mean  # n x n, read-only, NaN where masked
    print("layer 1 weight on key 0 from the last query:", float(weights[-1, 0]))

    s = maskscope.sweep(vary={"alpha": [0.0, 0.5, 1.0]}, metric="rp", n=6, layers=2, samples=500)
    print("RP of layer 2 against alpha:", [round(float(v), 3) for v in s.value[:, 1]])

    # Results are data: pickled, saved as the CLI's JSON and loaded back, they compare equal.
    assert pickle.loads(pickle.dumps(r)) == r
    path = os.path.join(tempfile.mkdtemp(), "run.json")
    with open(path, "w") as f:
        f.write(r.to_json())
    loaded = maskscope.load(path)
    assert isinstance(loaded, maskscope.Result) and loaded == r
    h = maskscope.h_of_j_theory(n=8, d=32, alpha=0.5)
    print("LN-recency h(j), Eq. 42:", np.round(h / h[0], 3).tolist())


if __name__ == "__main__":
    main()
