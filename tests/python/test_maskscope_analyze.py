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


def softmax_weights(logits):
    """The softmax of causal logits over the visible keys (0 where masked), as a model returns its weights."""
    z = np.where(np.isfinite(logits), logits, -np.inf).astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return (e / e.sum(axis=-1, keepdims=True)).astype(logits.dtype)


def test_minus_inf_at_a_visible_logit_is_refused_with_its_place_or_left_out_and_counted():
    logits, hidden = tensors()
    logits[2, 1, 1, 4, 3] = -np.inf  # key 3 is visible from query 4 under the causal mask
    with pytest.raises(ValueError) as e:
        maskscope.analyze(logits, hidden=hidden)
    assert str(e.value).startswith("1 non-finite value (0 NaN, 1 infinite) in 1 of 6 prompts; the first: "
                                   "logits[2, 1, 1, 4, 3] = -inf (prompt 2, layer 2, head 2, i 4, j 3) at a key "
                                   "the mask leaves visible")
    with pytest.warns(RuntimeWarning, match="left out 1 of 6 prompts"):
        r = maskscope.analyze(logits, hidden=hidden, allow_nonfinite=True)
    assert r.samples == 5 and r.left_out["prompts"] == 1 and r.left_out["nonfinite_values"] == 1
    keep = [0, 1, 3, 4, 5]  # left out like a NaN: the numbers of the other prompts alone, none NaN
    alone = maskscope.analyze(logits[keep], hidden=hidden[keep])
    assert [l.to_dict() for l in r.layers] == [l.to_dict() for l in alone.layers]
    assert np.isfinite(r.layers[2].rp) and np.isfinite(r.layers[2].score_mean[4, 3])


def test_a_visible_row_of_minus_inf_is_refused_with_its_place_or_left_out():
    logits, hidden = tensors()
    logits[5, 0, 0, 3, :4] = -np.inf  # every key query 3 sees: its softmax would be 0/0
    with pytest.raises(ValueError, match=r"4 non-finite values \(0 NaN, 4 infinite\) in 1 of 6 prompts; the first: "
                                         r"logits\[5, 0, 0, 3, 0\] = -inf \(prompt 5, layer 1, head 1, i 3, j 0\) "
                                         r"at a key the mask leaves visible"):
        maskscope.analyze(logits)
    with pytest.warns(RuntimeWarning, match="left out 1 of 6 prompts"):
        r = maskscope.analyze(logits, allow_nonfinite=True)
    assert r.samples == 5 and r.left_out["nonfinite_values"] == 4
    assert not np.isnan(r.layers[1].weight_mean[np.tril_indices(7)]).any()


def test_weights_whose_visible_rows_do_not_sum_to_1_are_refused_naming_the_first_row():
    logits, _ = tensors()
    weights = softmax_weights(logits)
    assert maskscope.analyze(logits, weights=weights).samples == 6  # a softmax passes
    weights[1, 1, 0, 5, :6] *= 0.99  # row 5 of head 1, layer 2, prompt 1 sums to 0.99: beyond 1e-3
    with pytest.raises(ValueError, match=r"^array 'weights': prompt 1, layer 2, head 1, row 5: the weights on the "
                                         r"visible keys 0..5 sum to 0.99, not 1 \(tolerance 0.001\)"):
        maskscope.analyze(logits, weights=weights)
    weights[1, 1, 0, 5, :6] /= 0.99
    weights[0, 0, 1, 2, 0] += 5e-4  # within the float32 tolerance
    assert maskscope.analyze(logits, weights=weights).samples == 6


def test_bfloat16_from_torch_is_read_as_its_float32_values():
    torch = pytest.importorskip("torch")
    logits, hidden = tensors()
    lb, hb = torch.from_numpy(logits).to(torch.bfloat16), torch.from_numpy(hidden).to(torch.bfloat16)
    exact = maskscope.analyze(lb.float().numpy(), hidden=hb.float().numpy())  # bfloat16 values are exact in float32
    got = maskscope.analyze(lb, hidden=hb)
    assert [l.to_dict() for l in got.layers] == [l.to_dict() for l in exact.layers]
    assert got.embeddings.to_dict() == exact.embeddings.to_dict()
    # A bfloat16 softmax sums to 1 only within bfloat16's rounding: accepted within its tolerance (3e-2).
    wb = torch.from_numpy(softmax_weights(logits)).to(torch.bfloat16)
    assert maskscope.analyze(lb, weights=wb).samples == 6
    bad = wb.clone()
    bad[0, 0, 0, 6, :] *= 0.9
    with pytest.raises(ValueError, match=r"^array 'weights': prompt 0, layer 1, head 1, row 6: .*tolerance 0.03"):
        maskscope.analyze(lb, weights=bad)
    # Integers are still refused; bfloat16 is named among the types.
    with pytest.raises(TypeError, match="expected float16, bfloat16, float32 or float64"):
        maskscope.analyze(torch.zeros(logits.shape, dtype=torch.int16))
