"""Results as data (issue 51): every result pickles and compares equal to itself; load() of every JSON the CLI
writes equals the same call made in Python; a layer's fields are exactly its JSON keys; tables and labelled
datasets have one row / coordinate per swept value, layer and metric; arrays are read-only; the API's
signatures and help show the settings, not internal constructors."""

import inspect
import json
import pickle
import pydoc
import sys

import numpy as np
import pytest

import maskscope

PF = {"n": 6, "layers": 2, "alpha": 0.3, "samples": 400, "seed": 3}
RW = {"model": "random_weights", "n": 5, "d": 16, "heads": 2, "layers": 2, "samples": 60, "seed": 2,
      "histograms": 4}


def flags(settings):
    out = []
    for key, value in settings.items():
        out += ["--" + key.replace("_", "-"), str(value)]
    return out


def cli_json(cli, tmp_path, name, *args):
    code, out, err = cli(*args, "--quiet")
    assert code == 0, err
    path = tmp_path / f"{name}.json"
    path.write_text(out)
    return path, json.loads(out)


@pytest.mark.parametrize("settings", [PF, RW, dict(PF, stage_grams=1)], ids=["pf", "rw", "stage_grams"])
def test_load_of_the_cli_run_equals_the_python_run_and_pickles(cli, tmp_path, settings):
    path, doc = cli_json(cli, tmp_path, "run", "run", *flags(settings))
    r = maskscope.run(**settings)
    loaded = maskscope.load(path)
    assert type(loaded) is maskscope.Result and loaded == r and r == loaded
    assert loaded.to_dict()["layers"] == doc["layers"] and loaded.to_dict().get("embeddings") == doc.get("embeddings")
    for result in (r, loaded):
        again = pickle.loads(pickle.dumps(result))
        assert again == result and again == r
        assert again.to_dict()["layers"] == doc["layers"]
    # A layer's fields are exactly the keys of its JSON layer, for a result made here and a loaded one.
    for k, j in enumerate(doc["layers"], start=1):
        for result in (r, loaded):
            assert set(result.layers[k].keys()) == set(j), k
        assert r.layers[k] == loaded.layers[k] and pickle.loads(pickle.dumps(r.layers[k])) == r.layers[k]
        assert np.array_equal(loaded.layers[k].cosine_se, np.array(j["cosine_se"], dtype=float), equal_nan=True)
        assert r.layers[k].r2_base == j["r2_base"] and r.layers[k].sink_weight == j["sink_weight"]
    if "embeddings" in doc:
        assert set(r.embeddings.keys()) == set(doc["embeddings"]) == set(loaded.embeddings.keys())
    if settings.get("stage_grams"):
        assert np.array_equal(loaded.layers[1].stage_gram("input"), r.layers[1].stage_gram("input"))
    # A different seed is a different result.
    assert maskscope.run(**dict(settings, seed=settings["seed"] + 1)) != r


def test_heads_numbered_and_their_maps_pickled_but_not_in_the_json(cli, tmp_path):
    path, doc = cli_json(cli, tmp_path, "rw", "run", *flags(RW))
    r = maskscope.run(**RW)
    heads = r.layers[1].heads
    assert heads.numbers == [1, 2] == [h["head"] for h in doc["layers"][0]["heads"]]
    assert heads[2].rp == doc["layers"][0]["heads"][1]["rp"]
    assert set(heads[1].keys()) - set(maskscope._layers.HEAD_MAPS) == set(doc["layers"][0]["heads"][0])
    again = pickle.loads(pickle.dumps(r))
    assert np.array_equal(again.layers[1].heads[1].weight_mean, heads[1].weight_mean, equal_nan=True)
    loaded = maskscope.load(path)
    with pytest.raises(AttributeError, match="not in the CLI's JSON"):
        loaded.layers[1].heads[1].weight_mean
    assert pickle.loads(pickle.dumps(heads[1])) == heads[1]


def test_arrays_are_read_only_and_the_cache_cannot_be_changed():
    r = maskscope.run(**PF)
    for result in (r, pickle.loads(pickle.dumps(r))):
        w = result.layers[1].weight_mean
        with pytest.raises(ValueError):
            w[1, 0] = 123.0
        with pytest.raises(ValueError):
            w.flags.writeable = True
        assert result.layers[1].weight_mean[1, 0] != 123.0
    s = maskscope.sweep(vary={"alpha": [0, 0.5]}, n=5, layers=2, samples=100)
    with pytest.raises(ValueError):
        s.value[0, 0] = 1.0
    with pytest.raises(ValueError):
        maskscope.h_of_j_theory(4, 8, 0.5)[0] = 1.0


SWEEP = {"n": 5, "layers": 2, "samples": 100}


def test_a_2d_sweep_loads_pickles_and_tabulates(cli, tmp_path):
    pytest.importorskip("pandas")
    pytest.importorskip("xarray")
    path, doc = cli_json(cli, tmp_path, "sweep", "sweep", "--vary", "alpha=0,0.5,1", "--vary", "d=8,16",
                         *flags(SWEEP))
    s = maskscope.sweep(vary={"alpha": [0, 0.5, 1], "d": [8, 16]}, **SWEEP)
    loaded = maskscope.load(path)
    assert type(loaded) is maskscope.SweepResult and loaded == s
    assert pickle.loads(pickle.dumps(s)) == s and pickle.loads(pickle.dumps(loaded)) == s
    for name in ("value", "se", "ties", "samples", "stopped_early"):
        assert np.array_equal(getattr(loaded, name), getattr(s, name), equal_nan=True), name
    assert loaded.axes == s.axes and loaded.metric == s.metric
    assert loaded.point(2, 1).layers[2].rp == s.point(2, 1).layers[2].rp == s.value[2, 1, 1]
    metrics = [m["key"] for m in maskscope._maskscope.metric_table() if not m["key"].startswith("norm_adj")]
    for sweep in (s, loaded):
        df = sweep.to_dataframe()
        assert df.index.names == ["alpha", "d", "layer", "metric"]
        assert len(df) == 3 * 2 * 2 * len(metrics)  # one row per swept value, layer and metric
        assert df.loc[(0.5, 16, 2, "rp"), "value"] == s.value[1, 1, 1]
        assert df.loc[(1, 8, 1, "sink_weight"), "se"] == doc["points"][4]["layers"][0]["sink_weight_se"]
        ds = sweep.to_xarray()
        assert ds["value"].dims == ("alpha", "d", "layer", "metric")
        assert list(ds["alpha"].values) == [0, 0.5, 1] and list(ds["d"].values) == [8, 16]
        assert list(ds["layer"].values) == [1, 2]
        assert float(ds["value"].sel(alpha=0.5, d=16, layer=2, metric="rp")) == s.value[1, 1, 1]
        assert ds["weight_mean"].dims == ("alpha", "d", "layer", "i", "j") and ds["weight_mean"].shape == (3, 2, 2, 5, 5)
        assert np.array_equal(ds["weight_mean"].sel(alpha=1, d=8, layer=2).values,
                              s.point(2, 0).layers[2].weight_mean, equal_nan=True)


def test_a_result_tabulates_by_layer():
    pytest.importorskip("pandas")
    pytest.importorskip("xarray")
    r = maskscope.run(**RW)
    df = r.to_dataframe()
    assert list(df.index) == [0, 1, 2] and df.loc[1, "rp"] == r.layers[1].rp
    assert np.isnan(df.loc[0, "rp"])  # the embeddings have no RP
    ds = r.to_xarray()
    assert ds["weight_mean"].dims == ("layer", "i", "j") and ds["weight_mean"].shape == (3, 5, 5)
    assert np.array_equal(ds["cosine_mean"].sel(layer=0).values, r.embeddings.cosine_mean)
    assert ds["norm_mean"].dims == ("layer", "j")


def test_missing_pandas_or_xarray_says_how_to_install(monkeypatch):
    r = maskscope.run(**PF)
    monkeypatch.setitem(sys.modules, "pandas", None)
    monkeypatch.setitem(sys.modules, "xarray", None)
    with pytest.raises(ImportError, match="to_dataframe\\(\\) needs pandas.*python3-pandas"):
        r.to_dataframe()
    with pytest.raises(ImportError, match="to_xarray\\(\\) needs xarray.*python3-xarray"):
        r.to_xarray()


@pytest.mark.parametrize("name,args,cls", [
    ("leakage", ["leakage", "--samples", "200", "--n", "6", "--layers", "2"], "LeakageResult"),
    ("probe", ["probe", "--model", "random_weights", "--weights", "fixed", "--d", "16", "--n", "6", "--samples",
               "60", "--layers", "2"], "ProbeResult"),
    ("theory", ["theory", "--kind", "h_of_j", "--n", "6"], "TheoryResult"),
    ("theory2", ["theory", "--kind", "behind_rope_layer2", "--n", "5"], "TheoryResult"),
])
def test_every_other_cli_json_loads_into_its_class(cli, tmp_path, name, args, cls):
    pytest.importorskip("pandas")
    code, out, err = cli(*args) if args[0] == "theory" else cli(*args, "--quiet")
    assert code == 0, err
    path = tmp_path / f"{name}.json"
    path.write_text(out)
    loaded = maskscope.load(path)
    assert type(loaded).__name__ == cls
    assert loaded.to_dict() == json.loads(out)
    assert pickle.loads(pickle.dumps(loaded)) == loaded
    df = loaded.to_dataframe()
    assert len(df) > 0
    if cls == "TheoryResult" and "j" in df:
        assert list(df["j"]) == list(range(1, 7))
    assert "<table>" in loaded._repr_html_()


def test_the_analysis_result_loads_and_pickles(cli, tmp_path):
    from conftest import tensors, write_folder
    logits, hidden = tensors()
    folder = write_folder(str(tmp_path / "t"), logits, None, hidden)
    path, doc = cli_json(cli, tmp_path, "analysis", "analyze", folder)
    r = maskscope.analyze_folder(folder)  # the same folder: the same config (its folder and model name)
    loaded = maskscope.load(path)
    assert loaded == r and pickle.loads(pickle.dumps(r)) == r
    assert set(r.layers[1].keys()) == set(doc["layers"][0])
    in_memory = maskscope.analyze(logits, hidden=hidden)  # no folder, no model name; the same numbers
    assert [l.to_dict() for l in in_memory.layers] == [l.to_dict() for l in loaded.layers]
    assert in_memory.layers[1] == loaded.layers[1]


def test_load_refuses_what_the_cli_does_not_write(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="not a JSON document maskscope-cli writes"):
        maskscope.load(p)
    p.write_text("not json")
    with pytest.raises(ValueError, match="not JSON"):
        maskscope.load(p)


def test_notebook_html_and_equality_with_other_types():
    r = maskscope.run(**PF)
    html = r._repr_html_()
    assert "<table>" in html and "layer 2" in html
    assert (r == 3) is False and r != "x"
    with pytest.raises(TypeError):
        hash(r)


def test_signatures_show_every_setting_and_help_no_internal_constructor():
    run_params = inspect.signature(maskscope.run).parameters
    sweep_params = inspect.signature(maskscope.sweep).parameters
    for key in maskscope.SETTINGS:
        assert run_params[key].default == maskscope.SETTINGS[key]
        assert sweep_params[key].kind is inspect.Parameter.KEYWORD_ONLY
    assert list(sweep_params)[:3] == ["vary", "metric", "se"] and "progress" in sweep_params
    for cls in (maskscope.Result, maskscope.Layer, maskscope.SweepResult, maskscope.Head):
        text = pydoc.render_doc(cls)
        assert "__init__" not in text and "_of_snapshot" not in text and "_new" not in text, cls


def test_jedi_completes_run_and_sweep_keywords():
    jedi = pytest.importorskip("jedi")
    for call in ("run", "sweep"):
        source = f"import maskscope\nmaskscope.{call}("
        signatures = jedi.Script(source).get_signatures(2, len(f"maskscope.{call}("))
        assert signatures, call
        names = [p.name for p in signatures[0].params]
        assert "alpha" in names and "init_std" in names and "progress" in names, names


def test_h_of_j_theory_checks_its_settings():
    with pytest.raises(ValueError, match=r"^d: 0 is out of range; valid: whole number in \[1, "):
        maskscope.h_of_j_theory(n=4, d=0, alpha=0.5)
    with pytest.raises(ValueError, match=r"^alpha: 2 is out of range; valid: number in \[0, 1\]"):
        maskscope.h_of_j_theory(n=4, d=8, alpha=2)
    with pytest.raises(TypeError, match="n: expected a number"):
        maskscope.h_of_j_theory(n="4", d=8, alpha=0.5)
    h = maskscope.h_of_j_theory(n=5, d=16, alpha=0.5, gamma=0.0)
    assert h.shape == (5,) and np.all(np.diff(h) > 0)  # LN-recency: h increases with j


def test_a_huge_seed_is_named_with_its_digits():
    with pytest.raises(ValueError, match=r"seed: 1180591620717411303424 is out of range; valid: whole number in "
                                         r"\[0, 18446744073709551615\]"):
        maskscope.run(seed=2**70, samples=10)
