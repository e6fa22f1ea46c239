"""maskscope.run and maskscope.sweep against maskscope-cli: the same JSON bit for bit for both model families,
the CLI's messages for bad settings, the GIL released during a run, and Ctrl+C stopping a long run."""

import _thread
import json
import threading
import time

import numpy as np
import pytest

import maskscope
from conftest import cli_message

RUNS = [
    ({"n": 8, "layers": 2, "alpha": 0.3, "samples": 3000, "seed": 5}, "parameter_free"),
    ({"model": "random_weights", "n": 6, "d": 16, "heads": 2, "layers": 2, "samples": 200, "seed": 2},
     "random_weights"),
]


def flags(settings):
    out = []
    for key, value in settings.items():
        out += ["--" + key.replace("_", "-"), str(value)]
    return out


@pytest.mark.parametrize("settings,family", RUNS, ids=[r[1] for r in RUNS])
def test_to_dict_is_the_cli_json_bit_for_bit(cli, settings, family):
    code, out, err = cli("run", *flags(settings), "--quiet")
    assert code == 0, err
    expected = json.loads(out)
    result = maskscope.run(**settings)
    got = result.to_dict()
    assert got["layers"] == expected["layers"]  # every number parsed from the same 17 digits: the same bits
    assert got.get("embeddings") == expected.get("embeddings")
    assert got["config"] == expected["config"]
    assert set(got) == set(expected)
    assert got["kernel"] == expected["kernel"] and got["samples"] == settings["samples"]
    assert got["config"]["model"] == family
    # The objects read the same numbers and maps.
    for k, layer in enumerate(result.layers, start=1):
        j = expected["layers"][k - 1]
        assert layer.number == k and layer.rp == j["rp"] and layer.rp_se == j["rp_se"]
        assert layer.ties["rp"] == j["rp_ties"]
        # Every estimate of the core's metric table is an attribute with the JSON's number (one name each).
        for m in maskscope._maskscope.metric_table():
            for key in [m["key"], m["key"] + "_se"] + ([m["key"] + "_ties"] if m["ties"] else []):
                if key in j:
                    got_value, want = getattr(layer, key), j[key]
                    assert (want is None and np.isnan(got_value)) or got_value == want, key
        weights = np.array(j["weight_mean"], dtype=float)  # null (masked) becomes NaN
        assert np.array_equal(layer.weight_mean, weights, equal_nan=True)
        assert np.array_equal(layer.norm_mean, np.array(j["norm_mean"], dtype=float), equal_nan=True)
        assert layer.score_mean.shape == (settings["n"], settings["n"])
    assert result.layers[1] is next(iter(result.layers))
    if family == "random_weights":
        assert result.embeddings is not None and result.layers[0] is result.embeddings
        assert len(result.layers[2].heads) == 2
        # Heads numbered 1..H, as the JSON's "head" key and the window's head slider number them.
        assert result.layers[2].heads[2].rp == expected["layers"][1]["heads"][1]["rp"]
        assert expected["layers"][1]["heads"][1]["head"] == 2 and result.layers[2].heads[2].number == 2
        with pytest.raises(IndexError, match="numbered 1..2"):
            result.layers[2].heads[0]
    with pytest.raises(IndexError, match="no layer 3"):
        result.layers[3]


BAD = [
    ({"alpha": 2}, "alpha"),
    ({"n": 0}, "n"),
    ({"d": 1.5}, "d"),
    ({"norm": "batchnorm"}, "norm"),
    ({"mask": "window:0"}, "mask"),
    ({"seed": -1}, "seed"),
    ({"samples": 0}, "samples"),
    ({"heads": 2}, "heads"),  # a setting of the other family
    ({"model": "random_weights", "d": 10, "heads": 4}, "heads"),  # validate(): d divisible by heads
]


def test_stage_gram_is_the_cli_json(cli):
    settings = {"n": 6, "d": 16, "layers": 2, "samples": 300, "seed": 4, "stage_grams": 1}
    code, out, err = cli("run", *flags(settings), "--quiet")
    assert code == 0, err
    expected = json.loads(out)
    result = maskscope.run(**{**settings, "stage_grams": True})
    layer, want_layer = result.layers[2], expected["layers"][1]  # layers[2] is layer 2 (the JSON's second)
    for stage in ("input", "normalized", "query", "mix", "residual"):
        for cosine in (False, True):
            key = "cosine_mean" if cosine else "gram_mean"
            want = np.array(want_layer["stage_grams"][stage][key], dtype=float)
            np.testing.assert_array_equal(layer.stage_gram(stage, cosine=cosine), want)
    np.testing.assert_array_equal(layer.stage_gram("mix", se=True),
                                  np.array(want_layer["stage_grams"]["mix"]["gram_se"], dtype=float))
    with pytest.raises(KeyError):
        layer.stage_gram("key")  # the parameter-free model has one queries/keys stage
    with pytest.raises(KeyError):
        maskscope.run(n=6, samples=10).layers[1].stage_gram("input")  # stage_grams off


@pytest.mark.parametrize("settings,flag", BAD, ids=[b[1] + str(i) for i, b in enumerate(BAD)])
def test_bad_settings_raise_value_error_with_the_cli_message(cli, settings, flag):
    settings = {"samples": 10, **settings}
    code, _, err = cli("run", *flags(settings), "--quiet")
    assert code == 2
    with pytest.raises(ValueError) as e:
        maskscope.run(**settings)
    assert f"{flag}: {cli_message(err, flag)}" in str(e.value).splitlines()


@pytest.mark.parametrize("settings", [{"n": "10"}, {"alpha": "0.5"}, {"norm": 1}, {"alpha": True}, {"seed": None},
                                      {"unit_input": 0.5}])
def test_wrong_types_raise_type_error(settings):
    with pytest.raises(TypeError):
        maskscope.run(samples=10, **settings)


def test_unknown_keyword_and_help():
    with pytest.raises(TypeError, match="unexpected keyword argument 'alpah'.*alpha"):
        maskscope.run(alpah=0.5)
    assert "alpha : float, default 0.5\n    input anisotropy [0, 1] (--model parameter_free only)." in maskscope.run.__doc__
    import inspect
    assert inspect.signature(maskscope.run).parameters["samples"].default == 100000
    # Python values of every kind, as the CLI reads their text: numpy scalars, booleans for 0/1 settings.
    r = maskscope.run(n=np.int64(5), alpha=np.float32(0.25), unit_input=True, samples=50, threads=1)
    assert r.settings["n"] == 5 and r.settings["alpha"] == 0.25 and r.settings["unit_input"] is True


def test_the_gil_is_released_during_a_run():
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    thread = threading.Thread(target=count)
    thread.start()
    while not ticks:
        time.sleep(0.001)
    samples = 20000
    while True:  # long enough to see the other thread run meanwhile
        start = time.monotonic()
        maskscope.run(n=32, layers=2, samples=samples, threads=1)
        end = time.monotonic()
        if end - start > 0.3:
            break
        samples *= 4
    stop.set()
    thread.join()
    during = [t for t in ticks if start + 0.05 < t < end - 0.05]
    # Holding the GIL, the run would let the thread take no step at all between its polls.
    assert len(during) >= 20, (len(during), end - start)


def test_an_interrupt_stops_a_long_run_quickly():
    fired = []

    def interrupt():
        fired.append(time.monotonic())
        _thread.interrupt_main()

    timer = threading.Timer(0.3, interrupt)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        # About 20 s on two cores: long enough, and bounded should the interrupt not arrive.
        maskscope.run(n=64, samples=500_000)
    stopped = time.monotonic()
    timer.join()
    assert stopped - fired[0] < 0.5
    assert maskscope.run(n=5, samples=100).samples == 100  # the interpreter goes on


def test_progress_callable_and_bar(capsys):
    seen = []
    r = maskscope.run(n=6, samples=2000, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (2000, 2000) and all(t == 2000 for _, t in seen)
    maskscope.run(n=6, samples=2000, progress=True)
    assert "2000 / 2000 samples" in capsys.readouterr().err
    with pytest.raises(ZeroDivisionError):  # an exception in the callback stops the run and propagates
        maskscope.run(n=6, samples=10**7, progress=lambda done, total: 1 / 0)
    assert r.finished


def test_sweep_is_the_cli_sweep(cli):
    code, out, err = cli("sweep", "--vary", "alpha=0,0.5", "--vary", "d=8,16", "--n", "6", "--layers", "2",
                         "--samples", "400", "--seed", "3", "--quiet")
    assert code == 0, err
    expected = json.loads(out)
    s = maskscope.sweep(vary={"alpha": [0, 0.5], "d": [8, 16]}, n=6, layers=2, samples=400, seed=3)
    got = s.to_dict()
    assert got["points"] == expected["points"] and got["vary"] == expected["vary"]
    assert s.points == expected["points"]
    assert s.axes == [("alpha", [0, 0.5]), ("d", [8, 16])]
    assert s.value.shape == (2, 2, 2) and s.samples.shape == (2, 2)
    for i in range(2):
        for j in range(2):
            point = expected["points"][2 * i + j]
            assert s.value[i, j, 1] == point["layers"][1]["rp"]
            assert s.se[i, j, 0] == point["layers"][0]["rp_se"]
            assert s.point(i, j).to_dict()["layers"] == point["layers"]
    # The CLI's LIST text and an SE target: every point stops once its SE is at most the target.
    t = maskscope.sweep(vary={"alpha": "0:1:3"}, metric="adjacency", se=0.02, n=6, layers=1, samples=20000)
    assert t.value.shape == (3, 1) and t.metric == "adjacency"
    assert np.all(t.se[t.stopped_early] <= 0.02)


def test_sweep_bad_arguments_raise_with_the_cli_message(cli):
    for vary, cli_vary in [({"samples": [1, 2]}, "samples=1,2"), ({"alpha": [0, 2]}, "alpha=0,2"),
                           ({"nope": [1]}, "nope=1")]:
        code, _, err = cli("sweep", "--vary", cli_vary, "--quiet")
        assert code == 2
        with pytest.raises(ValueError) as e:
            maskscope.sweep(vary=vary)
        assert str(e.value) == "vary: " + cli_message(err, "vary")
    code, _, err = cli("sweep", "--vary", "alpha=0,1", "--metric", "nope", "--quiet")
    with pytest.raises(ValueError) as e:
        maskscope.sweep(vary={"alpha": [0, 1]}, metric="nope")
    assert str(e.value) == "metric: " + cli_message(err, "metric")
    with pytest.raises(TypeError):
        maskscope.sweep(vary=[("alpha", [0, 1])])
    with pytest.raises(ValueError, match="swept and also given"):
        maskscope.sweep(vary={"alpha": [0, 1]}, alpha=0.5)
