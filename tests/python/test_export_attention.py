#!/usr/bin/env python3
"""The exporter's writing of the tensor format, with a small torch decoder built here (Debian ships
torch and numpy, not transformers): capture() records the attention logits through the softmax,
write_folder() writes the folder, and maskscope-cli analyze must read it and agree with numpy.

    python3 tests/python/test_export_attention.py MASKSCOPE_CLI WORK_DIR
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import export_attention as ex  # noqa: E402

P, L, H, T, D = 6, 2, 2, 9, 16


class Block(torch.nn.Module):
    """Pre-LN causal self-attention with a residual, eager: softmax(q k^T / sqrt(d_h) + mask)."""

    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(D)
        self.qkv = torch.nn.Linear(D, 3 * D)
        self.out = torch.nn.Linear(D, D)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln(x)).split(D, dim=-1)
        heads = lambda z: z.view(b, t, H, D // H).transpose(1, 2)  # noqa: E731
        q, k, v = heads(q), heads(k), heads(v)
        scores = q @ k.transpose(-1, -2) / (D // H) ** 0.5
        mask = torch.full((t, t), float("-inf")).triu(1)
        w = torch.nn.functional.softmax(scores + mask, dim=-1)
        return x + self.out((w @ v).transpose(1, 2).reshape(b, t, D))


class TinyDecoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(50, D)
        self.blocks = torch.nn.ModuleList([Block() for _ in range(L)])

    def forward(self, ids):
        h = [self.embed(ids)]
        for b in self.blocks:
            h.append(b(h[-1]))
        return h  # L + 1 hidden states


def recency_probability(s):
    """RP of one [T, T] logit map with ties 1/2: over i > k > j, P(S_ik > S_ij)."""
    total, count = 0.0, 0
    for i in range(T):
        for k in range(i):
            for j in range(k):
                total += 1.0 if s[i, k] > s[i, j] else 0.5 if s[i, k] == s[i, j] else 0.0
                count += 1
    return total / count


def main():
    cli, work = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    model = TinyDecoder().eval()
    inputs = [torch.randint(0, 50, (1, T)) for _ in range(P)]
    # The stages of each block: Norm(x), q and k (the fused projection's thirds), the output projection's
    # input (concat_h A_h v_h) and output, and the block's output (no MLP: the residual h).
    hooks = [{"normalized": (b.ln, "output", None),
              "query": (b.qkv, "output", lambda z: z[..., :D]),
              "key": (b.qkv, "output", lambda z: z[..., D:2 * D]),
              "mix": (b.out, "input", None),
              "attention": (b.out, "output", None),
              "residual": (b, "output", None)} for b in model.blocks]
    captured = ex.capture(model, inputs, T, hooks)
    out = os.path.join(work, "exported")
    logits_shape, hidden_shape = ex.write_folder(out, captured, "tiny-decoder", [f"prompt {p}" for p in range(P)])
    assert logits_shape == (P, L, H, T, T), logits_shape
    assert hidden_shape == (P, L + 1, T, D), hidden_shape

    logits = np.load(os.path.join(out, "logits.npy"))
    weights = np.load(os.path.join(out, "weights.npy"))
    hidden = np.load(os.path.join(out, "hidden.npy"))
    assert logits.dtype == np.dtype("<f4") and logits.flags["C_CONTIGUOUS"]
    assert np.isneginf(logits[0, 0, 0, 0, 1]), "masked logits are -inf"
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-5)
    # The captured logits are the model's: recompute layer 1 of prompt 0 by hand.
    with torch.no_grad():
        b = model.blocks[0]
        x = model.embed(inputs[0])
        q, k, _ = b.qkv(b.ln(x)).split(D, dim=-1)
        q0 = q.view(1, T, H, D // H).transpose(1, 2)[0, 0]
        k0 = k.view(1, T, H, D // H).transpose(1, 2)[0, 0]
        want = (q0 @ k0.T / (D // H) ** 0.5).numpy()
    lower = np.tril(np.ones((T, T), dtype=bool))
    np.testing.assert_allclose(logits[0, 0, 0][lower], want[lower], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hidden[0, 0], model.embed(inputs[0])[0].detach().numpy(), rtol=1e-6)
    with open(os.path.join(out, "manifest.json")) as f:
        stages = json.load(f)["stages"]
    assert sorted(stages) == sorted(["normalized", "query", "key", "mix", "attention", "residual"]), stages
    arrays = {name: np.load(os.path.join(out, file)) for name, file in stages.items()}
    assert arrays["query"].shape == (P, L, T, D)
    np.testing.assert_allclose(arrays["query"][0, 0], q[0].numpy(), rtol=1e-6)
    # Without an MLP the block output is the residual h: hidden layer l + 1.
    np.testing.assert_allclose(arrays["residual"], hidden[:, 1:], rtol=1e-6)

    result = os.path.join(work, "exported.json")
    subprocess.run([cli, "analyze", out, "--quiet", "--out", result], check=True)
    with open(result) as f:
        r = json.load(f)
    assert r["samples"] == P and r["config"]["model"] == "tiny-decoder" and r["config"]["heads"] == H
    assert r["config"]["weights"] == "given"
    for l in range(L):
        per_head = [np.mean([recency_probability(logits[p, l, h]) for p in range(P)]) for h in range(H)]
        got = [hd["rp"] for hd in r["layers"][l]["heads"]]
        np.testing.assert_allclose(got, per_head, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(r["layers"][l]["rp"], np.mean(per_head), rtol=1e-12, atol=1e-12)
        # Cosines of the hidden states, mean over prompts (layer l + 1 is block l's output).
        x = hidden[:, l + 1]
        xn = x / np.linalg.norm(x, axis=-1, keepdims=True)
        cos = np.einsum("pid,pjd->pij", xn, xn).mean(0)
        np.testing.assert_allclose(np.array(r["layers"][l]["cosine_mean"], dtype=float)[5, 2], cos[5, 2], rtol=1e-5)
        # Each stage's Gram matrices: mean over prompts of <s_i, s_j> and cos(s_i, s_j); the input is hidden l.
        grams = r["layers"][l]["stage_grams"]
        assert sorted(grams) == sorted(list(stages) + ["input"]), sorted(grams)
        for name in list(stages) + ["input"]:
            s_ = hidden[:, l] if name == "input" else arrays[name][:, l]
            gram = np.einsum("pid,pjd->pij", s_.astype(float), s_.astype(float))
            sn = s_ / np.linalg.norm(s_, axis=-1, keepdims=True)
            got = np.array(grams[name]["gram_mean"], dtype=float)
            np.testing.assert_allclose(got, gram.mean(0), rtol=2e-5, atol=1e-5 * np.abs(gram).max())
            np.testing.assert_allclose(got, got.T)
            se = gram.std(0, ddof=1) / np.sqrt(P)
            np.testing.assert_allclose(np.array(grams[name]["gram_se"], dtype=float), se, rtol=1e-3,
                                       atol=1e-5 * np.abs(gram).max())
            cos_ = np.einsum("pid,pjd->pij", sn, sn).mean(0)
            np.testing.assert_allclose(np.array(grams[name]["cosine_mean"], dtype=float), cos_, rtol=1e-4, atol=1e-5)
    # The residual stage's cosines are the cosine map's (both from the block output).
    np.testing.assert_allclose(np.array(r["layers"][0]["stage_grams"]["residual"]["cosine_mean"], dtype=float),
                               np.array(r["layers"][0]["cosine_mean"], dtype=float), rtol=1e-5, atol=1e-6)
    print(f"export_attention: {P} prompts, {L} layers x {H} heads, T {T}: RP, cosines and stage Grams agree with numpy")


if __name__ == "__main__":
    main()
