"""maskscope.analyze on arrays in memory against maskscope-cli analyze on the same arrays saved as a folder:
the same JSON; float16/float64, non-contiguous, byte-swapped and torch inputs; the refusal of non-finite
values with their place, and allow_nonfinite."""

import json
import os

import numpy as np
import pytest

import maskscope
from conftest import tensors, write_folder


def cli_analyze(cli, folder, *extra):
    code, out, err = cli("analyze", folder, "--quiet", *extra)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("with_weights", [False, True])
def test_arrays_equal_the_cli_on_the_same_folder(cli, tmp_path, with_weights):
    logits, hidden = tensors()
    weights = None
    if with_weights:
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
        weights = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    folder = write_folder(str(tmp_path / "t"), logits, weights, hidden)
    expected = cli_analyze(cli, folder)
    r = maskscope.analyze(logits, weights, hidden)
    got = r.to_dict()
    assert got["layers"] == expected["layers"]
    assert got["embeddings"] == expected["embeddings"]
    expected["config"]["folder"] = None  # arrays come from no folder; the rest of config is the CLI's
    expected["config"]["model"] = ""
    assert got["config"] == expected["config"]
    assert r.samples == 6 and len(r.layers[2].heads) == 2
    assert maskscope.analyze_folder(folder).to_dict()["layers"] == expected["layers"]
    some = maskscope.analyze(logits, weights, hidden, layers=[2])
    assert some.layers.numbers == [2]
    assert some.to_dict()["layers"][0] == expected["layers"][1]


def test_float16_float64_views_byte_order_and_torch_give_the_same_numbers(cli, tmp_path):
    logits, hidden = tensors()
    half = logits.astype(np.float16)
    folder = write_folder(str(tmp_path / "f16"), half, None, hidden.astype(np.float16))
    expected = cli_analyze(cli, folder)["layers"]
    assert maskscope.analyze(half, hidden=hidden.astype(np.float16)).to_dict()["layers"] == expected
    # float16 values are exact in float32 and float64: the same bits.
    exact = half.astype(np.float32), hidden.astype(np.float16).astype(np.float32)
    assert maskscope.analyze(exact[0], hidden=exact[1]).to_dict()["layers"] == expected
    assert maskscope.analyze(exact[0].astype(np.float64), hidden=exact[1]).to_dict()["layers"] == expected
    swapped = exact[0].astype(">f4")
    assert maskscope.analyze(swapped, hidden=exact[1]).to_dict()["layers"] == expected
    transposed = np.ascontiguousarray(exact[0].transpose(1, 0, 2, 3, 4)).transpose(1, 0, 2, 3, 4)
    assert not transposed.flags.c_contiguous
    assert maskscope.analyze(transposed, hidden=exact[1]).to_dict()["layers"] == expected
    torch = pytest.importorskip("torch")
    t = torch.tensor(exact[0], requires_grad=True)
    assert maskscope.analyze(t, hidden=torch.from_numpy(exact[1])).to_dict()["layers"] == expected


def test_bad_arrays_are_refused():
    logits, hidden = tensors()
    with pytest.raises(ValueError, match=r"array 'logits' has shape \[6, 2, 7, 7\]; expected \[P, L, H, T, T\]"):
        maskscope.analyze(logits[:, :, 0])
    with pytest.raises(ValueError, match=r"array 'hidden' has shape"):
        maskscope.analyze(logits, hidden=hidden[:, :2])
    with pytest.raises(TypeError, match="dtype int32 is not supported"):
        maskscope.analyze(np.zeros(logits.shape, dtype=np.int32))
    with pytest.raises(ValueError, match="mask 'sideways'"):
        maskscope.analyze(logits, mask="sideways")
    with pytest.raises(ValueError, match=r"layers: '3'.*\[1, 2\]"):
        maskscope.analyze(logits, layers=3)
    with pytest.raises(ValueError, match="/nonexistent/tensors: not a folder"):
        maskscope.analyze_folder("/nonexistent/tensors")


def test_non_finite_values_are_refused_with_their_place_or_left_out(cli, tmp_path):
    logits, hidden = tensors()
    logits[3, 1, 0, 5, 2] = np.nan
    hidden[4, 2, 1, 0] = np.inf
    folder = write_folder(str(tmp_path / "nan"), logits, None, hidden)
    with pytest.raises(ValueError) as e:
        maskscope.analyze(logits, hidden=hidden)
    message = str(e.value)
    assert message.startswith("2 non-finite values (1 NaN, 1 infinite) in 2 of 6 prompts; the first: "
                              "logits[3, 1, 0, 5, 2] = NaN (prompt 3, layer 2, head 1, i 5, j 2)")
    code, _, err = cli("analyze", folder, "--quiet")
    assert code == 2 and message in err  # the CLI refuses with the same words
    with pytest.warns(RuntimeWarning, match="left out 2 of 6 prompts"):
        r = maskscope.analyze(logits, hidden=hidden, allow_nonfinite=True)
    assert r.samples == 4 and r.left_out["prompts"] == 2 and r.left_out["nonfinite_values"] == 2
    allowed = cli_analyze(cli, folder, "--allow-nonfinite")
    assert r.to_dict()["layers"] == allowed["layers"]
    assert allowed["config"]["left_out"]["prompts"] == 2
    keep = [0, 1, 2, 5]  # the same numbers as the prompts without non-finite values alone
    assert maskscope.analyze(logits[keep], hidden=hidden[keep]).to_dict()["layers"] == allowed["layers"]


def test_a_corrupt_header_is_quoted_escaped(tmp_path):
    folder = str(tmp_path / "corrupt")
    os.makedirs(folder)
    header = b"{'descr': '\x1b[31m\xff<f4', 'fortran_order': False, 'shape': (1, 1, 1, 2, 2), }"
    header += b" " * ((64 - (10 + len(header) + 1) % 64) % 64) + b"\n"
    with open(os.path.join(folder, "logits.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(16))
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump({"format": "maskscope-tensors 1"}, f)
    with pytest.raises(ValueError) as e:
        maskscope.analyze_folder(folder)
    assert "dtype '\\x1b[31m\\xff<f4'" in str(e.value) and "\x1b" not in str(e.value)


@pytest.mark.parametrize("name", ["manifest.json", "logits.npy"])
def test_analyze_folder_refuses_a_fifo_at_once(tmp_path, name):
    """A FIFO as the manifest or an array is refused at once (before the fix, analyze_folder blocked in open())."""
    import signal
    logits, hidden = tensors()
    folder = str(tmp_path / "t")
    write_folder(folder, logits, None, hidden)
    os.remove(os.path.join(folder, name))
    os.mkfifo(os.path.join(folder, name))
    signal.alarm(20)  # a hang fails the test instead of blocking the suite
    try:
        with pytest.raises(Exception, match="not a regular file"):
            maskscope.analyze_folder(folder)
    finally:
        signal.alarm(0)
