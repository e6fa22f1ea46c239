#!/usr/bin/env python3
"""Export a transformer's attention logits, weights and hidden states as a maskscope tensor folder.

    python3 tools/export_attention.py --model NAME --prompts prompts.txt --out DIR [--tokens T]

Writes DIR/manifest.json and NumPy arrays (the format in maskscope's docs/tensors.md):
    logits  [P, L, H, T, T]  pre-softmax attention logits (the mask already added)
    weights [P, L, H, T, T]  attention weights (softmax of the logits)
    hidden  [P, L+1, T, d]   hidden states, layer 0 the embeddings
Open the folder with `maskscope-cli analyze DIR` or `maskscope --open DIR`.

Hugging Face models are loaded with eager attention. `output_attentions` gives weights after the
softmax only, so the logits are taken where the attention computes its softmax: while the model
runs, torch.softmax / torch.nn.functional.softmax / Tensor.softmax record every input of shape
[batch, H, T, T] over the last dimension (the attention's scores, mask included), in call order, one
per layer. Every prompt is cut to the same T tokens (the shortest prompt's length, or --tokens), so
the arrays are rectangular. Needs torch and numpy; transformers only for --model.
"""

import argparse
import contextlib
import json
import os
import sys

FORMAT = "maskscope-tensors 1"


@contextlib.contextmanager
def softmax_recorder(tokens):
    """Records the inputs of every softmax over the last dim with shape [..., H, T, T]."""
    import torch
    import torch.nn.functional as F

    recorded = []
    originals = (torch.softmax, F.softmax, torch.Tensor.softmax)
    depth = [0]  # F.softmax calls Tensor.softmax: record the outer call only

    def record(x, dim):
        if depth[0] == 0 and isinstance(x, torch.Tensor) and x.dim() == 4 and x.shape[-1] == tokens and x.shape[-2] == tokens:
            if dim in (-1, 3):
                recorded.append(x.detach().float().cpu())

    def call(original, x, dim, *args, **kwargs):
        record(x, dim)
        depth[0] += 1
        try:
            return original(x, dim, *args, **kwargs)
        finally:
            depth[0] -= 1

    def functional(x, dim=None, *args, **kwargs):
        return call(originals[1], x, dim, *args, **kwargs)

    def plain(x, dim=None, *args, **kwargs):
        return call(originals[0], x, dim, *args, **kwargs)

    def method(self, dim=None, *args, **kwargs):
        return call(originals[2], self, dim, *args, **kwargs)

    torch.softmax, F.softmax, torch.Tensor.softmax = plain, functional, method
    try:
        yield recorded
    finally:
        torch.softmax, F.softmax, torch.Tensor.softmax = originals


def capture(forward, inputs, tokens):
    """Runs forward(input) for each prompt's input; returns per-prompt (logits [L, H, T, T], hidden [L+1, T, d]).

    forward(input) must return the hidden states as a sequence of L+1 tensors [1, T, d] (layer 0 the
    embeddings) and call a softmax over the last dim of the attention scores [1, H, T, T] once per layer.
    """
    import torch

    out = []
    with torch.no_grad():
        for x in inputs:
            with softmax_recorder(tokens) as recorded:
                hidden = forward(x)
            if not recorded:
                raise RuntimeError("no attention softmax of shape [1, H, T, T] was seen: is the model using eager attention?")
            logits = torch.cat([r[:1] for r in recorded], dim=0)  # [L, H, T, T]
            states = torch.cat([h[:1].detach().float().cpu() for h in hidden], dim=0)  # [L+1, T, d]
            if states.shape[0] != logits.shape[0] + 1:
                raise RuntimeError(f"{logits.shape[0]} attention layers but {states.shape[0]} hidden states (expected L+1)")
            out.append((logits, states))
    return out


def write_folder(out_dir, captured, model_name, prompts, mask="causal"):
    """Writes manifest.json, logits.npy, weights.npy and hidden.npy (float32, C order, little-endian)."""
    import numpy as np
    import torch

    os.makedirs(out_dir, exist_ok=True)
    logits = torch.stack([c[0] for c in captured]).numpy().astype("<f4")  # [P, L, H, T, T]
    hidden = torch.stack([c[1] for c in captured]).numpy().astype("<f4")  # [P, L+1, T, d]
    # Weights as the model computes them: the softmax of the logits over the keys (masked: exp(-inf) = 0).
    weights = torch.softmax(torch.from_numpy(logits).double(), dim=-1).float().numpy().astype("<f4")
    np.save(os.path.join(out_dir, "logits.npy"), np.ascontiguousarray(logits))
    np.save(os.path.join(out_dir, "weights.npy"), np.ascontiguousarray(weights))
    np.save(os.path.join(out_dir, "hidden.npy"), np.ascontiguousarray(hidden))
    manifest = {
        "format": FORMAT,
        "model": model_name,
        "mask": mask,
        "prompts": list(prompts),
        "logits": "logits.npy",
        "weights": "weights.npy",
        "hidden": "hidden.npy",
        "exporter": "tools/export_attention.py",
    }
    with open(os.path.join(out_dir, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
    return logits.shape, hidden.shape


def export_hf(model_name, prompts, out_dir, tokens=None, device="cpu"):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer  # the user's machine, not maskscope's

    tok = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForCausalLM.from_pretrained(model_name, attn_implementation="eager", torch_dtype=torch.float32)
    model.to(device).eval()
    ids = [tok(p, return_tensors="pt")["input_ids"][0] for p in prompts]
    T = min(len(i) for i in ids) if tokens is None else tokens
    if T > 512:
        T = 512  # maskscope analyses at most 512 positions
    if any(len(i) < T for i in ids):
        raise SystemExit(f"--tokens {T}: some prompts are shorter; give longer prompts or a smaller --tokens")
    inputs = [i[:T].unsqueeze(0).to(device) for i in ids]

    def forward(x):
        return model(input_ids=x, output_hidden_states=True, use_cache=False).hidden_states

    captured = capture(forward, inputs, T)
    texts = [tok.decode(i[:T]) for i in ids]
    return write_folder(out_dir, captured, model_name, texts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a Hugging Face model name or local path (causal LM)")
    ap.add_argument("--prompts", required=True, help="a text file, one prompt per line")
    ap.add_argument("--out", required=True, help="the folder to write")
    ap.add_argument("--tokens", type=int, default=None, help="tokens per prompt T (default: the shortest prompt's)")
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args(argv)
    with open(a.prompts, encoding="utf-8") as f:
        prompts = [line.rstrip("\n") for line in f if line.strip()]
    if not prompts:
        raise SystemExit(f"{a.prompts}: no prompts")
    shapes = export_hf(a.model, prompts, a.out, a.tokens, a.device)
    print(f"wrote {a.out}: logits {list(shapes[0])}, hidden {list(shapes[1])}", file=sys.stderr)


if __name__ == "__main__":
    main()
