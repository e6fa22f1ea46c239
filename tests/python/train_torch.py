#!/usr/bin/env python3
"""The training engine (core/train/) against PyTorch: every parameter's gradient against autograd, and 20 AdamW
steps against torch.optim.AdamW with the same schedule, from the weights and batches tests/train/train_dump.cpp
writes. Usage: train_torch.py TRAIN_DUMP WORKDIR. Exit 1 on any mismatch (printed with the tensor's name)."""
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

EPS = 1e-5


def load(folder, name):
    return np.load(os.path.join(folder, name + ".npy"))


def shapes(cfg):
    d, layers, v = cfg["d"], cfg["layers"], cfg["vocab_rows"]
    out = {"wte": (v, d)}
    if cfg["positions"]:
        out["wpe"] = (cfg["n"], d)
    for l in range(layers):
        h = f"h.{l}."
        out.update({h + "ln_1.weight": (d,), h + "ln_1.bias": (d,), h + "attn.c_attn.weight": (d, 3 * d),
                    h + "attn.c_attn.bias": (3 * d,), h + "attn.c_proj.weight": (d, d), h + "attn.c_proj.bias": (d,)})
        if cfg["mlp"]:
            out.update({h + "ln_2.weight": (d,), h + "ln_2.bias": (d,), h + "mlp.c_fc.weight": (d, 4 * d),
                        h + "mlp.c_fc.bias": (4 * d,), h + "mlp.c_proj.weight": (4 * d, d), h + "mlp.c_proj.bias": (d,)})
    out.update({"ln_f.weight": (d,), "ln_f.bias": (d,)})
    return out


def read_params(folder, prefix, cfg, dtype):
    params = {}
    for name, shape in shapes(cfg).items():
        path = os.path.join(folder, prefix + name + ".npy")
        if os.path.exists(path):
            params[name] = torch.tensor(np.load(path).reshape(shape), dtype=dtype)
    return params


def norm(cfg, x, p, key):
    g, b = p.get(key + ".weight"), p.get(key + ".bias")
    kind = cfg["norm"]
    if kind == "layernorm":
        y = F.layer_norm(x, (x.shape[-1],), eps=EPS)
    elif kind == "rmsnorm":
        y = x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS)
    elif kind == "l2":
        y = x / x.norm(dim=-1, keepdim=True)
    else:
        y = x
    if g is not None:
        y = y * g
    if b is not None:
        y = y + b
    return y


def rope(x, tables):
    ca, sa, cb, sb = tables  # n x half each
    a0, a1 = x[..., 0::2], x[..., 1::2]
    out = torch.stack((a0 * ca - a1 * sa, a0 * sb + a1 * cb), dim=-1)
    return out.flatten(-2)


def forward(cfg, p, tokens, targets, tables):
    n, d, H = cfg["n"], cfg["d"], cfg["heads"]
    dh = d // H
    x = p["wte"][tokens]
    if cfg["positions"]:
        x = x + p["wpe"][:n]
    mask = torch.tril(torch.ones(n, n, dtype=torch.bool))
    for l in range(cfg["layers"]):
        h = f"h.{l}."
        y = norm(cfg, x, p, h + "ln_1")
        qkv = y @ p[h + "attn.c_attn.weight"] + p[h + "attn.c_attn.bias"]
        q, k, v = qkv.split(d, dim=-1)
        q, k, v = (t.reshape(t.shape[0], n, H, dh).transpose(1, 2) for t in (q, k, v))
        if tables is not None:
            q, k = rope(q, tables), rope(k, tables)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
        a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
        o = (a @ v).transpose(1, 2).reshape(x.shape[0], n, d)
        hres = cfg["gamma"] * x + o @ p[h + "attn.c_proj.weight"] + p[h + "attn.c_proj.bias"]
        if cfg["mlp"]:
            z = norm(cfg, hres, p, h + "ln_2")
            u = F.gelu(z @ p[h + "mlp.c_fc.weight"] + p[h + "mlp.c_fc.bias"])
            x = hres + u @ p[h + "mlp.c_proj.weight"] + p[h + "mlp.c_proj.bias"]
        else:
            x = hres
    logits = norm(cfg, x, p, "ln_f") @ p["wte"].T
    keep = targets >= 0
    return F.cross_entropy(logits[keep], targets[keep])


def batch_of(folder, cfg, rows):
    tokens = torch.tensor(load(folder, "tokens").astype(np.int64)).reshape(-1, rows, cfg["n"])
    targets = torch.tensor(load(folder, "targets").astype(np.int64)).reshape(-1, rows, cfg["n"])
    return tokens, targets


def rope_tables(folder, cfg, dtype):
    if not cfg["rope"]:
        return None
    half = cfg["d"] // cfg["heads"] // 2
    return tuple(torch.tensor(load(folder, "rope_" + t).reshape(cfg["n"], half), dtype=dtype)
                 for t in ("cos_a", "sin_a", "cos_b", "sin_b"))


def check_gradients(folder):
    """C++ float32 gradients against float64 autograd at the same weights: |g - g_ref| <= 2e-5 max|g_ref| + 1e-8."""
    cfg = json.load(open(os.path.join(folder, "config.json")))
    p = read_params(folder, "p__", cfg, torch.float64)
    for t in p.values():
        t.requires_grad_(True)
    tokens, targets = batch_of(folder, cfg, cfg["batch"])
    loss = forward(cfg, p, tokens[0], targets[0], rope_tables(folder, cfg, torch.float64))
    loss.backward()
    bad = []
    cpp_loss = float(load(folder, "loss")[0])
    if abs(cpp_loss - loss.item()) > 1e-5 * max(1.0, abs(loss.item())):
        bad.append(f"loss {cpp_loss} vs torch {loss.item()}")
    worst = 0.0
    for name, t in p.items():
        ref = t.grad.numpy()
        got = load(folder, "g__" + name).reshape(ref.shape)
        scale = np.abs(ref).max()
        err = np.abs(got - ref).max()
        worst = max(worst, err / max(scale, 1e-12))
        if not err <= 2e-5 * scale + 1e-8:
            bad.append(f"{name}: max |error| {err:.3g} against max |grad| {scale:.3g}")
    return bad, worst


def check_adamw(folder):
    """20 steps: C++ losses against torch.optim.AdamW (float32, NanoGPT's parameter groups and schedule)."""
    cfg = json.load(open(os.path.join(folder, "config.json")))
    p = read_params(folder, "p__", cfg, torch.float32)
    for t in p.values():
        t.requires_grad_(True)
    decay = [t for t in p.values() if t.dim() >= 2]
    no_decay = [t for t in p.values() if t.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=cfg["lr"], betas=(cfg["beta1"], cfg["beta2"]), eps=cfg["eps"], foreach=False)
    tokens, targets = batch_of(folder, cfg, cfg["batch"])
    tables = rope_tables(folder, cfg, torch.float32)
    cpp = load(folder, "losses")

    def lr_at(it):  # NanoGPT's get_lr
        lr, warmup, decay_steps = cfg["lr"], cfg["warmup"], cfg["decay_steps"]
        min_lr = lr * cfg["min_lr_ratio"]
        if it < warmup:
            return lr * (it + 1) / (warmup + 1)
        if it >= decay_steps:
            return min_lr
        ratio = (it - warmup) / (decay_steps - warmup)
        return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)

    bad, worst = [], 0.0
    for it in range(cfg["steps"]):
        for group in opt.param_groups:
            group["lr"] = lr_at(it)
        opt.zero_grad()
        loss = forward(cfg, p, tokens[it], targets[it], tables)
        loss.backward()
        if cfg["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(list(p.values()), cfg["grad_clip"])
        opt.step()
        err = abs(loss.item() - float(cpp[it]))
        worst = max(worst, err)
        if err > 2e-4 * max(1.0, abs(loss.item())):
            bad.append(f"step {it}: loss {cpp[it]} vs torch {loss.item()}")
    final = read_params(folder, "f__", cfg, torch.float32)
    d = cfg["d"]
    for name, t in p.items():
        got, ref = final[name], t.detach()
        if name.endswith("c_attn.bias"):
            # The key bias adds q_i . b_K to every score of row i, which the softmax cancels: its gradient is 0 in
            # exact arithmetic, and Adam normalizes both sides' rounding noise there into steps of size lr.
            keep = torch.ones(3 * d, dtype=torch.bool)
            keep[d:2 * d] = False
            got, ref = got[keep], ref[keep]
        scale = ref.abs().max().item()
        err = (got - ref).abs().max().item()
        if err > 2e-3 * scale + 1e-5:
            bad.append(f"{name} after {cfg['steps']} steps: max |error| {err:.3g} against max |value| {scale:.3g}")
    return bad, worst


# Small networks, d 16-32, 2 layers: every option the trained family has.
GRADIENT_CASES = {
    "layernorm-mlp": ["n=9", "d=16", "heads=2", "layers=2", "init_std=0.3"],
    "no-mlp": ["n=9", "d=16", "heads=2", "layers=2", "mlp=0", "init_std=0.3"],
    "rope": ["n=9", "d=32", "heads=2", "layers=2", "rope_base=10000", "init_std=0.3"],
    "learned-positions": ["n=9", "d=16", "heads=2", "layers=2", "pos_embedding=learned", "init_std=0.3"],
    "bos": ["n=9", "d=16", "heads=2", "layers=2", "first_token=fixed", "init_std=0.3"],
    "rmsnorm-gamma": ["n=8", "d=24", "heads=3", "layers=2", "norm=rmsnorm", "gamma=0.5", "init_std=0.3"],
    "l2-mean": ["n=8", "d=16", "heads=1", "layers=2", "norm=l2", "init_mean=0.05", "init_std=0.3",
                "residual_mean=zero"],
    "none-all": ["n=8", "d=16", "heads=2", "layers=2", "norm=none", "rope_base=100", "pos_embedding=learned",
                 "first_token=fixed", "init_std=0.2"],
}
ADAMW_CASES = {
    "adamw": ["n=9", "d=16", "heads=2", "layers=2", "lr=0.01", "warmup=5", "decay_steps=15", "grad_clip=0.5",
              "steps=20", "batch=10", "first_token=fixed", "pos_embedding=learned"],
    "adamw-rope": ["n=9", "d=32", "heads=2", "layers=2", "lr=0.005", "warmup=3", "decay_steps=20",
                   "rope_base=10000", "steps=20", "batch=6"],
}


def main():
    dump, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    failed = False
    for mode, cases, check in (("grad", GRADIENT_CASES, check_gradients), ("adamw", ADAMW_CASES, check_adamw)):
        for name, args in cases.items():
            folder = os.path.join(work, name)
            os.makedirs(folder)
            subprocess.run([dump, mode, folder] + args, check=True)
            bad, worst = check(folder)
            print(f"{mode} {name}: worst {'relative gradient' if mode == 'grad' else 'loss'} error {worst:.3g}")
            for b in bad:
                print(f"  MISMATCH {b}")
            failed |= bool(bad)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
