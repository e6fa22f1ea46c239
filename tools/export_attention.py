#!/usr/bin/env python3
"""Export a transformer's attention logits, weights and hidden states as a maskscope tensor folder.

    python3 tools/export_attention.py --model NAME --prompts prompts.txt --out DIR [--tokens T]

Writes DIR/manifest.json and NumPy arrays (the format in maskscope's docs/tensors.md):
    logits  [P, L, H, T, T]  pre-softmax attention logits (the mask already added)
    weights [P, L, H, T, T]  attention weights (softmax of the logits)
    hidden  [P, L+1, T, d]   hidden states, layer 0 the embeddings
    stage_NAME [P, L, T, D]  the forward pass's stages per layer (manifest "stages"; GPT-2 and Llama-style
                             models): normalized (the attention's Norm(x)), query, key (the projections, before
                             any RoPE), mix (concat_h A_h v_h, the output projection's input), attention (its
                             output), residual (h = x + attention, the MLP norm's input), mlp (the block output)
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


STAGES = ("normalized", "query", "key", "mix", "attention", "residual", "mlp")


@contextlib.contextmanager
def stage_recorder(stage_hooks):
    """Records the stages of every layer through forward hooks: stage_hooks[l] maps a stage name to
    (module, "input" | "output", pick), pick(tensor) -> [1, T, D] (None: the tensor itself; a tuple's first)."""
    recorded = [dict() for _ in stage_hooks]
    handles = []

    def first(z):
        return z[0] if isinstance(z, (tuple, list)) else z

    for l, hooks in enumerate(stage_hooks):
        for name, (module, where, pick) in hooks.items():
            def keep(z, l=l, name=name, pick=pick):
                z = first(z)
                recorded[l][name] = (pick(z) if pick else z)[0].detach().float().cpu()  # [T, D]
            if where == "input":
                handles.append(module.register_forward_pre_hook(lambda m, args, keep=keep: keep(args)))
            else:
                handles.append(module.register_forward_hook(lambda m, args, out, keep=keep: keep(out)))
    try:
        yield recorded
    finally:
        for h in handles:
            h.remove()


def hf_stage_hooks(model):
    """The stage hooks of a Hugging Face GPT-2 or Llama-style (model.layers with q_proj / k_proj / o_proj)
    causal LM; None for other architectures (then no stages are written)."""
    blocks = getattr(getattr(model, "transformer", None), "h", None)
    if blocks is not None and hasattr(blocks[0], "ln_1"):  # GPT-2: c_attn gives q | k | v
        d = model.config.hidden_size
        return [{"normalized": (b.ln_1, "output", None),
                 "query": (b.attn.c_attn, "output", lambda z: z[..., :d]),
                 "key": (b.attn.c_attn, "output", lambda z: z[..., d:2 * d]),
                 "mix": (b.attn.c_proj, "input", None),
                 "attention": (b.attn.c_proj, "output", None),
                 "residual": (b.ln_2, "input", None),
                 "mlp": (b, "output", None)} for b in blocks]
    layers = getattr(getattr(model, "model", None), "layers", None)
    if layers is not None and hasattr(layers[0], "self_attn") and hasattr(layers[0].self_attn, "q_proj"):
        return [{"normalized": (b.input_layernorm, "output", None),
                 "query": (b.self_attn.q_proj, "output", None),
                 "key": (b.self_attn.k_proj, "output", None),
                 "mix": (b.self_attn.o_proj, "input", None),
                 "attention": (b.self_attn.o_proj, "output", None),
                 "residual": (b.post_attention_layernorm, "input", None),
                 "mlp": (b, "output", None)} for b in layers]
    return None


def capture(forward, inputs, tokens, stage_hooks=None):
    """Runs forward(input) for each prompt's input; returns per-prompt (logits [L, H, T, T], hidden [L+1, T, d],
    stages {name: [L, T, D]}).

    forward(input) must return the hidden states as a sequence of L+1 tensors [1, T, d] (layer 0 the
    embeddings) and call a softmax over the last dim of the attention scores [1, H, T, T] once per layer.
    stage_hooks (optional, stage_recorder's) name the modules whose inputs or outputs are the stages.
    """
    import torch

    out = []
    with torch.no_grad():
        for x in inputs:
            with softmax_recorder(tokens) as recorded, stage_recorder(stage_hooks or []) as staged:
                hidden = forward(x)
            if not recorded:
                raise RuntimeError("no attention softmax of shape [1, H, T, T] was seen: is the model using eager attention?")
            logits = torch.cat([r[:1] for r in recorded], dim=0)  # [L, H, T, T]
            states = torch.cat([h[:1].detach().float().cpu() for h in hidden], dim=0)  # [L+1, T, d]
            if states.shape[0] != logits.shape[0] + 1:
                raise RuntimeError(f"{logits.shape[0]} attention layers but {states.shape[0]} hidden states (expected L+1)")
            stages = {}
            if staged:
                for name in STAGES:
                    if all(name in layer for layer in staged):
                        stages[name] = torch.stack([layer[name] for layer in staged])  # [L, T, D]
            out.append((logits, states, stages))
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
    stages = {}
    for name in STAGES:  # [P, L, T, D] of each stage every prompt recorded
        if all(len(c) > 2 and name in c[2] for c in captured):
            stages[name] = f"stage_{name}.npy"
            array = torch.stack([c[2][name] for c in captured]).numpy().astype("<f4")
            np.save(os.path.join(out_dir, stages[name]), np.ascontiguousarray(array))
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
    if stages:
        manifest["stages"] = stages
    # Every array's size, which analyze checks (a file cut short or swapped is refused). Sizes only, no
    # FNV-1a checksum: a pure-Python FNV-1a runs at a few MB/s, minutes for a large model's export.
    arrays = ["logits.npy", "weights.npy", "hidden.npy"] + list(stages.values())
    manifest["files"] = {name: {"bytes": os.path.getsize(os.path.join(out_dir, name))} for name in arrays}
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

    hooks = hf_stage_hooks(model)
    if hooks is None:
        print("no stages: the model is neither GPT-2 nor Llama-style (model.layers[i].self_attn.q_proj)", file=sys.stderr)
    captured = capture(forward, inputs, T, hooks)
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
