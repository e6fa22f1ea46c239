#!/usr/bin/python3
"""Which reading of "NanoGPT with GPT-2's initialization and a changed mean" reproduces Zuo et al.'s Table 4?

An independent PyTorch forward pass of a pre-norm GPT-2 / NanoGPT decoder without positional embedding
(docs/model.md section 7) whose initialization and arithmetic can be read several ways; for each reading it
prints the adjacency probability score per layer (layer 0 = embeddings; docs/model.md section 4: rows k >= 2,
pairs i < j < k, C_ki < C_kj, ties 1/2, the diagonal left out) as in Zuo et al.'s protocol: one fixed network,
256 inputs, repeated over a few network seeds. Results and their discussion: docs/papers.md, "Table 4: which
reading of the initialization".

Run with Debian's python3-torch and numpy (tools/setup.sh installs them):
    /usr/bin/python3 tools/zuo_table4_readings.py                 # every reading, mu 0 4 8, 4 networks
    /usr/bin/python3 tools/zuo_table4_readings.py --readings maskscope --mu 0 --seeds 8   # the validation
"""
import argparse
import math
import sys

import numpy as np
import torch

# Parameter groups: the embedding table E, the query/key/value projections, the attention output
# projection W_O, the MLP's first and second matrices W_1 and W_2.
GROUPS = ("embed", "qkv", "attn_out", "mlp_in", "mlp_out")

# Each reading: which groups get the mean, whether W_O and W_2's mean is scaled by 1/sqrt(2L) like their
# std, the GELU, Linear biases and LayerNorm affine parameters (and whether they too are drawn N(mu, sigma^2)).
READINGS = {
    # docs/model.md section 7: every weight N(mu, .), W_O and W_2 with std sigma/sqrt(2L); no biases, no affine.
    "maskscope": dict(mean=GROUPS, scale_mean=False, gelu="erf"),
    # NanoGPT's _init_weights with mean=mu (Linear and Embedding; the tied E is lm_head's draw, also mean mu),
    # its c_proj loop left as written (mean 0, std sigma/sqrt(2L)): W_O and W_2 keep mean 0.
    "nanogpt-init-weights": dict(mean=("embed", "qkv", "mlp_in"), scale_mean=False, gelu="tanh"),
    # Both of NanoGPT's normal_ calls with mean=mu (= maskscope's reading with NanoGPT's tanh GELU).
    "nanogpt-both": dict(mean=GROUPS, scale_mean=False, gelu="tanh"),
    # Both calls changed, the c_proj mean scaled like the std: N(mu/sqrt(2L), (sigma/sqrt(2L))^2).
    "nanogpt-both-scaled-mean": dict(mean=GROUPS, scale_mean=True, gelu="tanh"),
    # Only the Embedding branch of _init_weights changed and E not tied to lm_head (with tying lm_head's
    # Linear draw, made after E's, wins and no parameter gets the mean: exactly the mu 0 network).
    "embedding-only-untied": dict(mean=("embed",), scale_mean=False, gelu="tanh"),
    # (Only the Linear branch changed, with tying: E is lm_head's draw and gets the mean, c_proj loop as written;
    # the same groups as nanogpt-init-weights, so not a reading of its own.)
    # Every parameter N(mu, sigma^2) (GPT-2 biases present; LayerNorm gains and biases included; c_proj std scaled).
    "every-parameter": dict(mean=GROUPS, scale_mean=False, gelu="tanh", bias=True, bias_mean=True, ln_mean=True),
    # Linear biases present and drawn N(mu, sigma^2) with the weights; LayerNorm affine 1 and 0.
    "biases-with-mean": dict(mean=GROUPS, scale_mean=False, gelu="tanh", bias=True, bias_mean=True),
    # LayerNorm gains and biases N(mu, sigma^2) (no Linear biases).
    "layernorm-with-mean": dict(mean=GROUPS, scale_mean=False, gelu="tanh", ln_mean=True),
}


def draw_network(seed, L, d, V, sigma, bias):
    """Standard-normal draws of every parameter, fixed per seed (the same draws for every reading and mu)."""
    g = torch.Generator().manual_seed(seed)
    z = lambda *shape: torch.randn(*shape, generator=g)
    net = {"embed": z(V, d), "layers": []}
    for _ in range(L):
        lay = {"qkv": z(d, 3 * d), "attn_out": z(d, d), "mlp_in": z(d, 4 * d), "mlp_out": z(4 * d, d)}
        for k in ("ln1_g", "ln1_b", "ln2_g", "ln2_b"):
            lay[k] = z(d)
        if bias:
            lay.update(qkv_b=z(3 * d), attn_out_b=z(d), mlp_in_b=z(4 * d), mlp_out_b=z(d))
        net["layers"].append(lay)
    net["lnf_g"], net["lnf_b"] = z(d), z(d)
    return net


def instantiate(raw, r, mu, sigma, L):
    """Weights of one reading: W = mean + std * Z from the shared standard normals Z."""
    rs = sigma / math.sqrt(2 * L)
    def w(group, Z):
        std = rs if group in ("attn_out", "mlp_out") else sigma
        m = mu if group in r["mean"] else 0.0
        if group in ("attn_out", "mlp_out") and r.get("scale_mean"):
            m = m / math.sqrt(2 * L)
        return m + std * Z
    def ln(Zg, Zb):
        if r.get("ln_mean"):
            return mu + sigma * Zg, mu + sigma * Zb
        return torch.ones_like(Zg), torch.zeros_like(Zb)
    net = {"embed": w("embed", raw["embed"]), "layers": []}
    for lay in raw["layers"]:
        o = {g: w(g, lay[g]) for g in ("qkv", "attn_out", "mlp_in", "mlp_out")}
        o["ln1"], o["ln2"] = ln(lay["ln1_g"], lay["ln1_b"]), ln(lay["ln2_g"], lay["ln2_b"])
        for g in ("qkv", "attn_out", "mlp_in", "mlp_out"):
            if r.get("bias"):
                o[g + "_b"] = (mu if r.get("bias_mean") else 0.0) + sigma * lay[g + "_b"]
            else:
                o[g + "_b"] = None
        net["layers"].append(o)
    net["lnf"] = ln(raw["lnf_g"], raw["lnf_b"])
    return net


def rounder(precision):
    """The rounding of a tensor stored in the autocast dtype, or none for fp32."""
    if precision in ("fp32", "fp64"):
        return lambda t: t
    dtype = {"bf16-amp": torch.bfloat16, "fp16-amp": torch.float16}[precision]
    return lambda t: t.to(dtype).to(torch.float32)


def forward(net, tokens, H, gelu, precision, dropout=0.0, gen=None):
    """Views of the hidden states, each [layer 0 = embeddings, layers 1..L]: "residual" (block outputs, the fp32
    residual stream), "ln_f" (ln_f applied to each), "last_ln_f" (block outputs, the last one after ln_f, as
    Hugging Face's hidden_states), "attn" (the attention sublayer's output after W_O, before the residual add),
    "attn_ln" (ln_f of "attn": its cosines are the Pearson correlations of its entries).

    precision "fp32", or "bf16-amp": CUDA autocast with bfloat16 as NanoGPT trains on GPUs with bf16 (the
    paper's RTX 4090): Linear inputs, weights and outputs rounded to bf16 (fp32 accumulation), LayerNorm and
    softmax in fp32, attention inputs q k v and probabilities bf16, the residual stream and embeddings fp32;
    "fp16-amp" the same with float16 (NanoGPT's choice on GPUs without bf16); "fp64": every tensor in double
    (the exact arithmetic's answer, against which the others' rounding shows)."""
    rnd = rounder(precision)
    def lin(x, W, b):
        y = rnd(x) @ rnd(W)
        if b is not None:
            y = y + rnd(b)
        return rnd(y)
    def drop(x):
        if dropout <= 0.0:
            return x
        keep = (torch.rand(x.shape, generator=gen) >= dropout).to(x.dtype)
        return x * keep / (1.0 - dropout)
    def layer_norm(x, gb):
        return torch.nn.functional.layer_norm(x, x.shape[-1:], gb[0], gb[1], 1e-5)
    B, n = tokens.shape
    x = drop(net["embed"][tokens])
    d = x.shape[-1]
    dh = d // H
    mask = torch.ones(n, n, dtype=torch.bool).tril()
    states, attn_outs = [x], [x]
    for lay in net["layers"]:
        h = layer_norm(x, lay["ln1"])
        q, k, v = lin(h, lay["qkv"], lay["qkv_b"]).split(d, dim=-1)
        q, k, v = (t.view(B, n, H, dh).transpose(1, 2) for t in (q, k, v))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
        a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
        a = drop(rnd(a))
        y = rnd(a @ v).transpose(1, 2).reshape(B, n, d)
        y = drop(lin(y, lay["attn_out"], lay["attn_out_b"]))
        attn_outs.append(y)
        x = x + y
        h = layer_norm(x, lay["ln2"])
        u = lin(h, lay["mlp_in"], lay["mlp_in_b"])
        if gelu == "tanh":
            u = rnd(0.5 * u * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * u ** 3))))
        else:
            u = rnd(torch.nn.functional.gelu(u))
        x = x + drop(lin(u, lay["mlp_out"], lay["mlp_out_b"]))
        states.append(x)
    return {"residual": states, "ln_f": [layer_norm(s, net["lnf"]) for s in states],
            "last_ln_f": states[:-1] + [layer_norm(states[-1], net["lnf"])], "attn": attn_outs,
            "attn_ln": [layer_norm(y, net["lnf"]) for y in attn_outs]}


def to_double(net):
    conv = lambda v: tuple(t.double() for t in v) if isinstance(v, tuple) else (None if v is None else v.double())
    return {"embed": net["embed"].double(), "lnf": conv(net["lnf"]),
            "layers": [{k: conv(v) for k, v in lay.items()} for lay in net["layers"]]}


_triples = {}


def adjacency(X):
    """Per-sample adjacency score (docs/model.md section 4) of hidden states X (B, n, d), and tie fractions."""
    B, n, _ = X.shape
    if n not in _triples:
        ks, iz, js, wt = [], [], [], []
        for k in range(2, n):
            pairs = k * (k - 1) / 2
            for i in range(k):
                for j in range(i + 1, k):
                    ks.append(k); iz.append(i); js.append(j); wt.append(1.0 / (pairs * (n - 2)))
        _triples[n] = tuple(torch.tensor(a) for a in (ks, iz, js)) + (torch.tensor(wt, dtype=torch.float64),)
    ks, iz, js, wt = _triples[n]
    Xd = X.to(torch.float64)
    Xn = Xd / Xd.norm(dim=-1, keepdim=True)
    C = (Xn @ Xn.transpose(-1, -2)).to(torch.float32)  # cosines rounded to float like maskscope's
    a, b = C[:, ks, iz], C[:, ks, js]
    score = (a < b).to(torch.float64) + 0.5 * (a == b).to(torch.float64)
    return (score * wt).sum(-1).numpy(), ((a == b).to(torch.float64) * wt).sum(-1).numpy()


def draw_tokens(gen, B, n, V, inputs):
    if inputs == "uniform":
        return torch.randint(0, V, (B, n), generator=gen)
    # "reversal": Zuo et al.'s Reversal (22) prompt "rev(" + 16 digits + ")=" (Fig. 1), ids 0-9 digits,
    # 10-15 the characters r e v ( ) =.
    assert n == 22 and V >= 16, "--inputs reversal needs n 22 and V >= 16"
    t = torch.empty(B, n, dtype=torch.long)
    t[:, :4] = torch.tensor([10, 11, 12, 13])
    t[:, 4:20] = torch.randint(0, 10, (B, 16), generator=gen)
    t[:, 20:] = torch.tensor([14, 15])
    return t


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--readings", default=",".join(READINGS), help="comma-separated, of: " + ", ".join(READINGS))
    p.add_argument("--mu", default="0,4,8")
    p.add_argument("--precision", default="fp32", help="fp32, bf16-amp, fp16-amp, fp64, comma-separated")
    p.add_argument("--inputs", default="uniform", choices=["uniform", "reversal"])
    p.add_argument("--dropout", type=float, default=0.0, help="NanoGPT's dropout left on (train mode), e.g. 0.2")
    p.add_argument("--seeds", type=int, default=4, help="networks (weight seeds 1..S)")
    p.add_argument("--samples", type=int, default=256, help="inputs per network (Zuo et al.: 256)")
    p.add_argument("--L", type=int, default=6)
    p.add_argument("--d", type=int, default=384)
    p.add_argument("--H", type=int, default=6)
    p.add_argument("--n", type=int, default=22)
    p.add_argument("--V", type=int, default=16)
    p.add_argument("--sigma", type=float, default=0.02)
    p.add_argument("--views", default="residual,ln_f", help="comma-separated: residual, ln_f, last_ln_f, attn, attn_ln (see forward)")
    a = p.parse_args()
    torch.set_num_threads(1)
    names = a.readings.split(",")
    for nm in names:
        if nm not in READINGS:
            sys.exit(f"unknown reading {nm!r}; valid: {', '.join(READINGS)}")
    mus = [float(m) for m in a.mu.split(",")]
    precisions = a.precision.split(",")
    views = a.views.split(",")
    print(f"# L {a.L} d {a.d} H {a.H} n {a.n} V {a.V} sigma {a.sigma} inputs {a.inputs} dropout {a.dropout}; "
          f"{a.seeds} networks x {a.samples} inputs; value = mean over networks +- SE between networks "
          f"[mean within-network SE]; ties = tie fraction")
    for prec in precisions:
        for nm in names:
            r = READINGS[nm]
            for mu in mus:
                per_view = {v: [] for v in views}
                within = {v: [] for v in views}
                ties = {v: [] for v in views}
                for seed in range(1, a.seeds + 1):
                    raw = draw_network(seed, a.L, a.d, a.V, a.sigma, bias=True)
                    net = instantiate(raw, r, mu, a.sigma, a.L)
                    if prec == "fp64":
                        net = to_double(net)
                    gen = torch.Generator().manual_seed(1000 + seed)
                    tokens = draw_tokens(gen, a.samples, a.n, a.V, a.inputs)
                    with torch.no_grad():
                        out = forward(net, tokens, a.H, r["gelu"], prec, a.dropout, gen)
                    for v in views:
                        sc = [adjacency(s) for s in out[v]]
                        per_view[v].append([s.mean() for s, _ in sc])
                        within[v].append([s.std(ddof=1) / math.sqrt(len(s)) for s, _ in sc])
                        ties[v].append([t.mean() for _, t in sc])
                for v in views:
                    m = np.array(per_view[v])
                    mean = m.mean(0)
                    se = m.std(0, ddof=1) / math.sqrt(m.shape[0]) if m.shape[0] > 1 else np.zeros_like(mean)
                    w = np.array(within[v]).mean(0)
                    t = np.array(ties[v]).mean(0)
                    cells = " ".join(f"{x:.3f}+-{s:.3f}" for x, s in zip(mean, se))
                    print(f"{nm:26s} {prec:8s} mu {mu:g} {v:8s} | {cells} | within-SE max {w.max():.3f} "
                          f"ties max {t.max():.3f}", flush=True)


if __name__ == "__main__":
    main()
