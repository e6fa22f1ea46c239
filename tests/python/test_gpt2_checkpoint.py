#!/usr/bin/env python3
"""A GPT-2-layout checkpoint written here opens in maskscope and gives torch's attention (issue 49).

Hugging Face's transformers and safetensors packages are not installed (Debian ships torch and numpy), so GPT-2's
forward pass is written here in plain torch after transformers' GPT2 code (Conv1D weights [in, out] applied as
x @ W + b, pre-LN blocks, LayerNorm eps 1e-5, gelu_new, scores scaled by 1 / sqrt(d_h), causal mask, residuals),
with random weights, biases and LayerNorm parameters, and the file is laid out by hand as `save_pretrained` writes
it (names "transformer.h.0.attn.c_attn.weight", ..., F32, an 8-byte header length, the JSON header padded to 8,
"__metadata__" {"format": "pt"}) with GPT-2's config.json (no maskscope keys: learned positions, LayerNorm, gelu_new).
Then `maskscope-cli run --checkpoint FILE --tokens IDS --save-tensors DIR` must give torch's attention weights
(the softmax of its saved logits) within 1e-5 and its hidden states (the residual stream after each block) within 1e-4 relative; an F16 copy of the
file and an untied lm_head are checked too.

    python3 tests/python/test_gpt2_checkpoint.py MASKSCOPE_CLI WORK_DIR
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
import torch

P, L, H, T, D, V, NPOS = 5, 2, 4, 12, 32, 50, 16


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def make_weights(seed=0):
    g = torch.Generator().manual_seed(seed)
    n = lambda *shape, std=1.0, mean=0.0: (mean + std * torch.randn(*shape, generator=g)).float()  # noqa: E731
    w = {"transformer.wte.weight": n(V, D), "transformer.wpe.weight": n(NPOS, D, std=0.5)}
    for l in range(L):
        p = f"transformer.h.{l}."
        w[p + "ln_1.weight"] = n(D, mean=1.0, std=0.2)
        w[p + "ln_1.bias"] = n(D, std=0.2)
        w[p + "attn.c_attn.weight"] = n(D, 3 * D, std=0.3)
        w[p + "attn.c_attn.bias"] = n(3 * D, std=0.3)
        w[p + "attn.c_proj.weight"] = n(D, D, std=0.1)
        w[p + "attn.c_proj.bias"] = n(D, std=0.1)
        w[p + "ln_2.weight"] = n(D, mean=1.0, std=0.2)
        w[p + "ln_2.bias"] = n(D, std=0.2)
        w[p + "mlp.c_fc.weight"] = n(D, 4 * D, std=0.2)
        w[p + "mlp.c_fc.bias"] = n(4 * D, std=0.2)
        w[p + "mlp.c_proj.weight"] = n(4 * D, D, std=0.1)
        w[p + "mlp.c_proj.bias"] = n(D, std=0.1)
    w["transformer.ln_f.weight"] = n(D, mean=1.0, std=0.2)
    w["transformer.ln_f.bias"] = n(D, std=0.2)
    return w


def gpt2_forward(w, ids):
    """transformers' GPT2Model forward in float64: the attention probabilities per layer and the residual stream."""
    w = {k: v.double() for k, v in w.items()}
    ln = lambda x, p: torch.nn.functional.layer_norm(x, (D,), w[p + ".weight"], w[p + ".bias"], eps=1e-5)  # noqa
    conv1d = lambda x, p: x @ w[p + ".weight"] + w[p + ".bias"]  # noqa: E731  (Conv1D: [in, out])
    b, t = ids.shape
    x = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][torch.arange(t)]
    hidden, probs = [x], []
    mask = torch.ones(t, t, dtype=torch.bool).tril()
    for l in range(L):
        p = f"transformer.h.{l}."
        q, k, v = conv1d(ln(x, p + "ln_1"), p + "attn.c_attn").split(D, dim=-1)
        heads = lambda z: z.view(b, t, H, D // H).transpose(1, 2)  # noqa: E731
        q, k, v = heads(q), heads(k), heads(v)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(D // H)
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        a = torch.softmax(scores, dim=-1)
        probs.append(a)
        x = x + conv1d((a @ v).transpose(1, 2).reshape(b, t, D), p + "attn.c_proj")
        x = x + conv1d(gelu_new(conv1d(ln(x, p + "ln_2"), p + "mlp.c_fc")), p + "mlp.c_proj")
        hidden.append(x)
    return torch.stack(probs, 1).numpy(), torch.stack(hidden, 1).numpy()  # [P, L, H, T, T], [P, L+1, T, D]


def write_safetensors(path, tensors, dtype="F32"):
    """The layout of the safetensors package's serialize: header sorted by name, offsets in that order."""
    header, blobs, at = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        a = tensors[name].numpy()
        raw = a.astype("<f4").tobytes() if dtype == "F32" else a.astype("<f2").tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


GPT2_CONFIG = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
               "bos_token_id": V - 1, "embd_pdrop": 0.1, "eos_token_id": V - 1, "initializer_range": 0.02,
               "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": NPOS, "n_embd": D, "n_head": H,
               "n_inner": None, "n_layer": L, "n_positions": NPOS, "resid_pdrop": 0.1, "scale_attn_weights": True,
               "summary_type": "cls_index", "tie_word_embeddings": True, "vocab_size": V}


def attention_weights(out):
    """The softmax of maskscope's saved logits (q k^T / sqrt(d_h), float32) under the causal mask."""
    logits = np.load(os.path.join(out, "logits.npy")).astype(np.float64)
    logits = np.where(np.tril(np.ones((T, T), dtype=bool)), logits, -np.inf)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def run_cli(cli, ckpt, ids_path, out_dir, work):
    shutil.rmtree(out_dir, ignore_errors=True)
    return subprocess.run([cli, "run", "--checkpoint", ckpt, "--tokens", ids_path, "--n", str(T), "--samples",
                           str(P), "--threads", "1", "--quiet", "--save-tensors", out_dir, "--out",
                           os.path.join(work, "gpt2_run.json")], capture_output=True, text=True)


def main():
    cli, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    folder = os.path.join(work, "gpt2_ckpt")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    w = make_weights()
    tensors = dict(w)
    tensors["lm_head.weight"] = w["transformer.wte.weight"].clone()  # tied: accepted when equal to wte
    ckpt = os.path.join(folder, "model.safetensors")
    write_safetensors(ckpt, tensors)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(GPT2_CONFIG, f)
    ids = torch.randint(0, V, (P, T), generator=torch.Generator().manual_seed(1))
    ids_path = os.path.join(work, "gpt2_ids.txt")
    with open(ids_path, "w") as f:
        f.writelines(" ".join(str(int(i)) for i in row) + "\n" for row in ids)
    out = os.path.join(work, "gpt2_tensors")
    r = run_cli(cli, ckpt, ids_path, out, work)
    if r.returncode != 0:
        sys.exit(f"maskscope-cli refused the GPT-2-layout checkpoint:\n{r.stderr}")
    probs, hidden = gpt2_forward(w, ids)
    ours_w = attention_weights(out)
    ours_h = np.load(os.path.join(out, "hidden.npy")).astype(np.float64)
    assert ours_w.shape == probs.shape, (ours_w.shape, probs.shape)
    assert ours_h.shape == hidden.shape, (ours_h.shape, hidden.shape)
    # The attention is far from uniform, so agreement is not trivial.
    assert probs.max() > 0.5, probs.max()
    emb = np.abs(ours_h[:, 0] - hidden[:, 0]).max()
    assert emb < 1e-6, f"embeddings (wte + wpe) differ by {emb}"
    err_w = np.abs(ours_w - probs).max()
    scale = np.abs(hidden).max(axis=-1, keepdims=True)
    err_h = (np.abs(ours_h - hidden) / scale).max()
    print(f"GPT-2 layout: attention weights within {err_w:.2e} of torch's, hidden states within {err_h:.2e} (relative)")
    assert err_w < 1e-5, f"attention weights differ from torch's by {err_w}"
    assert err_h < 1e-4, f"hidden states differ from torch's by {err_h} (relative)"
    # F16 tensors are read and converted: the same forward pass of the rounded weights.
    w16 = {k: v.half().float() for k, v in w.items()}
    write_safetensors(ckpt, w16, dtype="F16")
    r = run_cli(cli, ckpt, ids_path, out, work)
    assert r.returncode == 0, r.stderr
    err16 = np.abs(attention_weights(out) - gpt2_forward(w16, ids)[0]).max()
    assert err16 < 1e-5, f"F16 checkpoint: attention weights differ by {err16}"
    # An untied head is refused naming it; a missing tensor too.
    tensors["lm_head.weight"][3, 4] += 1.0
    write_safetensors(ckpt, tensors)
    r = run_cli(cli, ckpt, ids_path, out, work)
    assert r.returncode == 2 and "lm_head.weight" in r.stderr, (r.returncode, r.stderr)
    del tensors["lm_head.weight"], tensors["transformer.h.1.mlp.c_fc.bias"]
    write_safetensors(ckpt, tensors)
    r = run_cli(cli, ckpt, ids_path, out, work)
    assert r.returncode == 2 and "transformer.h.1.mlp.c_fc.bias" in r.stderr, (r.returncode, r.stderr)
    print("ok")


if __name__ == "__main__":
    main()
