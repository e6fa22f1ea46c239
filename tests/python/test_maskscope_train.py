"""maskscope.train (issue 49 item 6) against maskscope-cli train and the run's own files: the log as arrays, the
CLI's bytes, KeyboardInterrupt at a step boundary and resume, the CLI's messages for bad keywords, pickling."""

import json
import os
import pickle

import numpy as np
import pytest

import maskscope
from conftest import cli_message

# A tiny run: d 16, 2 layers, a fraction of a second.
TINY = dict(task="reversal", d=16, layers=2, steps=12, batch=8, eval_every=4, checkpoint_every=6, eval_sequences=20,
            seed=3, weight_seed=5)
TINY_FLAGS = ["--task", "reversal", "--d", "16", "--layers", "2", "--steps", "12", "--batch", "8", "--eval-every",
              "4", "--checkpoint-every", "6", "--eval-sequences", "20", "--seed", "3", "--weight-seed", "5"]


def _bytes(folder, prefix):
    return {f: open(os.path.join(folder, f), "rb").read() for f in sorted(os.listdir(folder)) if f.startswith(prefix)}


def test_the_log_is_log_jsonl_as_arrays(tmp_path):
    out = tmp_path / "run"
    log = maskscope.train(out=out, **TINY)
    lines = [json.loads(l) for l in (out / "log.jsonl").read_text().splitlines()]
    assert log.step.tolist() == [0, 4, 8, 12] == [l["step"] for l in lines]
    assert log.step.dtype == np.int64
    assert np.isnan(log.train_loss[0])  # no training step before the first evaluation (null in the log)
    for key in ("train_loss", "test_loss", "test_accuracy", "lr", "tokens_per_s"):
        want = [np.nan if l[key] is None else l[key] for l in lines]
        np.testing.assert_array_equal(getattr(log, key), want)
    assert log.layer_numbers.tolist() == [1, 2]
    for key in ("adjacency", "adjacency_se", "norm_adjacency", "norm_adjacency_se", "rp", "rp_se", "sink_weight",
                "sink_weight_se"):
        a = getattr(log, key)
        assert a.shape == (4, 2)
        np.testing.assert_array_equal(a, [[layer[key] for layer in l["layers"]] for l in lines])
        with pytest.raises(ValueError):
            a[0, 0] = 0  # read-only
    assert log.training == json.loads((out / "config.json").read_text())["training"]
    assert len(log) == 4 and "4 evaluations" in repr(log) and "<table>" in log._repr_html_()
    # load() reads the folder or its log.jsonl into the same log.
    assert maskscope.load(out) == log and maskscope.load(str(out / "log.jsonl")) == log
    assert isinstance(maskscope.load(out), maskscope.TrainLog)


def test_r_l_with_a_fixed_first_token_and_nan_without(tmp_path):
    log = maskscope.train(out=tmp_path / "bos", first_token="fixed", **TINY)
    lines = [json.loads(l) for l in (tmp_path / "bos" / "log.jsonl").read_text().splitlines()]
    for key, field in (("residual_stream_share", "value"), ("residual_stream_share_se", "se")):
        want = [[np.nan if layer["residual_stream_share"][field] is None else layer["residual_stream_share"][field]
                 for layer in l["layers"]] for l in lines]
        np.testing.assert_array_equal(getattr(log, key), want)
    assert np.isfinite(log.residual_stream_share).any()  # some r_l is significant in this run
    plain = maskscope.train(out=tmp_path / "plain", **TINY)
    assert plain.residual_stream_share.shape == (4, 2) and np.isnan(plain.residual_stream_share).all()


def test_the_same_bytes_as_the_cli(cli, tmp_path):
    log = maskscope.train(out=tmp_path / "py", **TINY)
    code, _, err = cli("train", *TINY_FLAGS, "--out", tmp_path / "cli", "--quiet")
    assert code == 0, err
    py, ref = _bytes(tmp_path / "py", "step-"), _bytes(tmp_path / "cli", "step-")
    assert list(py) == ["step-000000.safetensors", "step-000006.safetensors", "step-000012.safetensors"]
    assert py == ref
    assert _bytes(tmp_path / "py", "state-") == _bytes(tmp_path / "cli", "state-")
    assert maskscope.load(tmp_path / "cli") == log  # the log equal but for tokens/s


def test_keyboard_interrupt_stops_with_a_checkpoint_and_resume_reaches_the_same_bytes(tmp_path):
    config = dict(TINY, steps=300, eval_every=100, checkpoint_every=1000)
    whole = maskscope.train(out=tmp_path / "whole", **config)
    seen = []

    def interrupt(step, steps, loss, accuracy, tokens_per_s):
        seen.append(step)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        maskscope.train(out=tmp_path / "stopped", progress=interrupt, **config)
    reached = [f for f in _bytes(tmp_path / "stopped", "step-") if f != "step-000000.safetensors"]
    assert len(reached) == 1, reached  # the last checkpoint, at the step boundary after the interrupt
    step = int(reached[0][5:11])
    assert seen[0] <= step < 300
    assert (tmp_path / "stopped" / f"state-{step:06d}.safetensors").exists()
    resumed = maskscope.train(out=tmp_path / "stopped", resume=True)
    assert _bytes(tmp_path / "stopped", "step-000300") == _bytes(tmp_path / "whole", "step-000300")
    assert resumed == whole


def test_ctrl_c_stops_at_a_step_boundary(tmp_path):
    import _thread
    import threading

    config = dict(TINY, steps=100000, eval_every=100000, checkpoint_every=100000)
    timer = threading.Timer(0.3, _thread.interrupt_main)  # Ctrl+C (SIGINT's handler) while the run is going
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        maskscope.train(out=tmp_path / "run", **config)
    timer.join()
    reached = [f for f in _bytes(tmp_path / "run", "step-") if f != "step-000000.safetensors"]
    assert len(reached) == 1 and 0 < int(reached[0][5:11]) < 100000, reached
    log = maskscope.load(tmp_path / "run")
    assert log.step.tolist() == [0]  # no evaluation was due


@pytest.mark.parametrize("keywords, flag", [
    (dict(steps=0), "steps"), (dict(lr=0), "lr"), (dict(batch=70000), "batch"), (dict(warmup=20, steps=10), "warmup"),
    (dict(eval_sequences=0), "eval-sequences"), (dict(mask="bidirectional"), "mask"), (dict(n=5), "n"),
    (dict(weights="random"), "weights"), (dict(d=0), "d")])
def test_a_bad_keyword_is_refused_with_the_cli_message(cli, tmp_path, keywords, flag):
    given = dict(task="reversal", **keywords)
    with pytest.raises(ValueError) as e:
        maskscope.train(out=tmp_path / "py", **given)
    flags = []
    for k, v in given.items():
        flags += ["--" + k.replace("_", "-"), str(v)]
    code, _, err = cli("train", *flags, "--out", tmp_path / "cli")
    assert code == 2
    # The keyword's name (eval_sequences for --eval-sequences) and the CLI's message, word for word.
    assert f"{flag.replace('-', '_')}: {cli_message(err, flag)}" in str(e.value).splitlines(), (str(e.value), err)
    assert not (tmp_path / "py").exists()  # refused before the folder is made


def test_other_refusals(tmp_path):
    with pytest.raises(ValueError, match="^task: missing"):
        maskscope.train(out=tmp_path / "a")
    with pytest.raises(ValueError, match="task: .*ordering"):
        maskscope.train(task="sorting", out=tmp_path / "a")
    with pytest.raises(TypeError, match="stepz"):
        maskscope.train(task="reversal", stepz=3, out=tmp_path / "a")
    with pytest.raises(TypeError, match="steps: expected a number"):
        maskscope.train(task="reversal", steps="3", out=tmp_path / "a")
    maskscope.train(out=tmp_path / "run", **dict(TINY, steps=4))
    with pytest.raises(ValueError, match="^out: .*holds a run already"):
        maskscope.train(out=tmp_path / "run", **dict(TINY, steps=4))
    with pytest.raises(ValueError, match="^steps: cannot be given with resume=True"):
        maskscope.train(out=tmp_path / "run", resume=True, steps=8)


def test_pickle_round_trip(tmp_path):
    log = maskscope.train(out=tmp_path / "run", **dict(TINY, steps=4))
    back = pickle.loads(pickle.dumps(log))
    assert back == log and back.folder == log.folder
    np.testing.assert_array_equal(back.rp_se, log.rp_se)
    assert not back.rp.flags.writeable


def test_to_dataframe(tmp_path):
    pytest.importorskip("pandas")
    log = maskscope.train(out=tmp_path / "run", **dict(TINY, steps=4))
    df = log.to_dataframe()
    assert list(df.index) == [0, 4]
    np.testing.assert_array_equal(df["rp_2"], log.rp[:, 1])
    np.testing.assert_array_equal(df["test_loss"], log.test_loss)
