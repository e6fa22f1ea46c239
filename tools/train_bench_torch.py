#!/usr/bin/env python3
"""Training tokens/s of PyTorch beside maskscope's engine (docs/performance.md, "Training"): the same model
(docs/model.md section 7 with a tied LM head: pre-LN blocks with biases, GELU MLP, LayerNorm, NoPE), the same batch
(64 sequences of 22 random ids over a vocabulary of 96, loss on every next token), the same thread count and the
same AdamW step (clipping at 1, weight decay on 2-D tensors), timed in one run with `maskscope-cli bench --training`.

    python3 tools/train_bench_torch.py build/maskscope-cli [--threads 2] [--seconds 10] [--openblas-coretype NAME]

--openblas-coretype (OPENBLAS_CORETYPE) makes OpenBLAS use another processor's kernels: Debian 12's OpenBLAS 0.3.21
takes a Zen 5 for a Haswell (AVX2 kernels); SKYLAKEX gives it its AVX-512 kernels there (docs/performance.md).
"""
import argparse
import ctypes
import math
import os
import subprocess
import sys
import time

# Debian's python3-torch calls the system BLAS (BLAS_INFO=generic): the reference BLAS gives its GEMMs 3.5 GFLOP/s
# here, OpenBLAS 40. A fair comparison runs torch on OpenBLAS (libopenblas0-pthread) without making it the system's
# BLAS for everything else: the script restarts itself with OpenBLAS first on the library path when it is there.
# OMP_WAIT_POLICY=PASSIVE: torch's OpenMP workers spin-wait by default, which on a shared 2-core machine made its
# 2-thread steps 10-20x slower than with passive waiting (measured: 244 against 5052 tokens/s at d 128).
OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread"
if os.path.isdir(OPENBLAS) and OPENBLAS not in os.environ.get("LD_LIBRARY_PATH", ""):
    threads = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv else "2"
    env = dict(os.environ, LD_LIBRARY_PATH=OPENBLAS + ":" + os.environ.get("LD_LIBRARY_PATH", ""),
               OPENBLAS_NUM_THREADS=threads, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "PASSIVE"))
    if "--openblas-coretype" in sys.argv:
        env["OPENBLAS_CORETYPE"] = sys.argv[sys.argv.index("--openblas-coretype") + 1]
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import torch
import torch.nn.functional as F

SHAPES = [("train_zuo_n22_d384_H6_L6_batch64", 384, 6), ("train_small_n22_d128_H4_L6_batch64", 128, 4)]
N, LAYERS, VOCAB, BATCH = 22, 6, 96, 64


class Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.c_attn, self.c_proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.c_fc, self.mlp_proj = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, n, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        mask = torch.tril(torch.ones(n, n, dtype=torch.bool))
        a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
        x = x + self.c_proj((a @ v).transpose(1, 2).reshape(b, n, d))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x))))


class Model(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.wte = torch.nn.Embedding(VOCAB, d)
        self.blocks = torch.nn.ModuleList(Block(d, heads) for _ in range(LAYERS))
        self.ln_f = torch.nn.LayerNorm(d)

    def forward(self, tokens, targets):
        x = self.wte(tokens)
        for blk in self.blocks:
            x = blk(x)
        logits = self.ln_f(x) @ self.wte.weight.T
        return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1), ignore_index=-1)


def torch_tokens_per_s(d, heads, seconds):
    torch.manual_seed(0)
    model = Model(d, heads)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99))
    tokens = torch.randint(0, VOCAB, (BATCH, N))
    targets = torch.cat([tokens[:, 1:], torch.full((BATCH, 1), -1)], dim=1)

    def step():
        opt.zero_grad(set_to_none=True)
        model(tokens, targets).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    step()  # warm-up
    t0, cpu0, steps = time.perf_counter(), time.process_time(), 0
    while True:
        step()
        steps += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            cpu = time.process_time() - cpu0
            return steps * BATCH * N / elapsed, steps, elapsed, steps * BATCH * N / cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--openblas-coretype", default="", help="OpenBLAS's kernels for this processor type (SKYLAKEX: AVX-512)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ours, ours_cpu = {}, {}
    out = subprocess.run([args.cli, "bench", "--training", "--threads", str(args.threads), "--seconds",
                          str(args.seconds)], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[2] == "tokens/s":
            ours[parts[0]] = float(parts[1])
            ours_cpu[parts[0]] = float(line.split("threads; ")[1].split()[0])
    blas = "the system BLAS"
    if OPENBLAS in os.environ.get("LD_LIBRARY_PATH", ""):
        core = ctypes.CDLL(os.path.join(OPENBLAS, "libopenblas.so.0"))
        core.openblas_get_corename.restype = ctypes.c_char_p
        blas = f"OpenBLAS ({core.openblas_get_corename().decode()} kernels)"
    print(f"torch {torch.__version__} on {blas}, {torch.get_num_threads()} threads; maskscope-cli bench --training")
    for name, d, heads in SHAPES:
        rate, steps, elapsed, per_cpu = torch_tokens_per_s(d, heads, args.seconds)
        mine, mine_cpu = ours.get(name, float("nan")), ours_cpu.get(name, float("nan"))
        print(f"{name:40s} maskscope {mine:8.1f} tokens/s, torch {rate:8.1f} tokens/s ({steps} steps in "
              f"{elapsed:.1f} s): ratio {mine / rate:.2f};  per CPU-s {mine_cpu:8.1f} against {per_cpu:8.1f}: "
              f"ratio {mine_cpu / per_cpu:.2f}")


if __name__ == "__main__":
    main()
