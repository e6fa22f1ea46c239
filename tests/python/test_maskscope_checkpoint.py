"""maskscope.run(checkpoint=...) (docs/model.md, "Checkpoints"): a GPT-2-layout file written here with numpy gives
the CLI's JSON bit for bit, its config.json sets the model settings, and a contradicting keyword is refused with the
CLI's message naming both values."""

import json
import struct

import numpy as np
import pytest

import maskscope
from conftest import cli_message

D, L, H, V, NPOS = 8, 1, 2, 10, 6


def write_checkpoint(folder, poison=None):
    """A GPT-2 (learned positions, LayerNorm, gelu_new) laid out as safetensors by hand, with its config.json."""
    rng = np.random.default_rng(3)
    t = {"transformer.wte.weight": rng.normal(size=(V, D)), "transformer.wpe.weight": rng.normal(size=(NPOS, D)),
         "transformer.ln_f.weight": 1 + 0.1 * rng.normal(size=D), "transformer.ln_f.bias": 0.1 * rng.normal(size=D)}
    for name, shape in [("ln_1.weight", (D,)), ("ln_1.bias", (D,)), ("attn.c_attn.weight", (D, 3 * D)),
                        ("attn.c_attn.bias", (3 * D,)), ("attn.c_proj.weight", (D, D)), ("attn.c_proj.bias", (D,)),
                        ("ln_2.weight", (D,)), ("ln_2.bias", (D,)), ("mlp.c_fc.weight", (D, 4 * D)),
                        ("mlp.c_fc.bias", (4 * D,)), ("mlp.c_proj.weight", (4 * D, D)), ("mlp.c_proj.bias", (D,))]:
        t["transformer.h.0." + name] = (1.0 if name.startswith("ln") and name.endswith("weight") else 0.0) + \
            0.3 * rng.normal(size=shape)
    if poison:
        t[poison][1, 2] = np.nan
    header, blobs, at = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(t):
        raw = t[name].astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t[name].shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    (folder / "config.json").write_text(json.dumps(
        {"model_type": "gpt2", "n_embd": D, "n_layer": L, "n_head": H, "vocab_size": V, "n_positions": NPOS,
         "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5}))
    return str(folder / "model.safetensors")


def test_run_on_a_checkpoint_is_the_cli_json(cli, tmp_path):
    path = write_checkpoint(tmp_path)
    code, out, err = cli("run", "--checkpoint", path, "--n", "5", "--samples", "30", "--seed", "4", "--quiet")
    assert code == 0, err
    expected = json.loads(out)
    got = maskscope.run(checkpoint=path, n=5, samples=30, seed=4).to_dict()
    assert got["layers"] == expected["layers"]
    assert got["config"] == expected["config"]
    assert got["config"]["d"] == D and got["config"]["heads"] == H and got["config"]["vocab"] == V
    assert got["config"]["pos_embedding"] == "learned" and got["config"]["weights"] == "fixed"


def test_a_contradicting_keyword_is_refused_naming_both(cli, tmp_path):
    path = write_checkpoint(tmp_path)
    code, _, err = cli("run", "--checkpoint", path, "--heads", "4", "--n", "5", "--samples", "8")
    assert code == 2
    with pytest.raises(ValueError) as e:
        maskscope.run(checkpoint=path, heads=4, n=5, samples=8)
    assert "heads = 4 contradicts the checkpoint's config.json, which has heads = 2" in str(e.value)
    assert cli_message(err, "heads") in str(e.value)
    with pytest.raises(ValueError, match="exceeds the checkpoint's position table"):
        maskscope.run(checkpoint=path, n=7, samples=8)


def test_a_corrupt_checkpoint_is_a_value_error_naming_the_tensor(tmp_path):
    path = write_checkpoint(tmp_path, poison="transformer.h.0.attn.c_proj.weight")
    with pytest.raises(ValueError, match=r"tensor 'transformer.h.0.attn.c_proj.weight' holds a non-finite value "
                                         r"\(nan\) at index \[1, 2\]"):
        maskscope.run(checkpoint=path, n=5, samples=8)
