"""Shared helpers of the Python module's tests (tests/python/test_maskscope_*.py, run by ctest as python_module):
the built maskscope-cli, and a tensor folder writer (docs/tensors.md)."""

import json
import os
import subprocess

import numpy as np
import pytest


@pytest.fixture(scope="session")
def cli():
    """cli(*args) -> (exit code, stdout, stderr) of the built maskscope-cli (MASKSCOPE_CLI, set by ctest)."""
    path = os.environ.get("MASKSCOPE_CLI")
    if not path:
        pytest.skip("MASKSCOPE_CLI is not set (ctest sets it)")

    def run(*args):
        p = subprocess.run([path, *map(str, args)], capture_output=True, text=True, errors="replace")
        return p.returncode, p.stdout, p.stderr

    return run


def cli_message(stderr, flag):
    """The message of `--flag: message` in the CLI's report of invalid settings."""
    for line in stderr.splitlines():
        if line.strip().startswith(f"--{flag}: "):
            return line.strip()[len(f"--{flag}: "):]
    raise AssertionError(f"no --{flag} line in: {stderr}")


def write_folder(folder, logits, weights=None, hidden=None, mask="causal"):
    """A tensor folder (manifest.json and .npy arrays) as tools/export_attention.py writes one."""
    os.makedirs(folder, exist_ok=True)
    manifest = {"format": "maskscope-tensors 1", "model": "test", "mask": mask, "logits": "logits.npy",
                "weights": None, "hidden": None}
    np.save(os.path.join(folder, "logits.npy"), logits)
    if weights is not None:
        np.save(os.path.join(folder, "weights.npy"), weights)
        manifest["weights"] = "weights.npy"
    if hidden is not None:
        np.save(os.path.join(folder, "hidden.npy"), hidden)
        manifest["hidden"] = "hidden.npy"
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    return folder


def tensors(P=6, L=2, H=2, T=7, d=5, seed=4, dtype=np.float32):
    """Causal logits (-inf above the diagonal) [P, L, H, T, T] and hidden states [P, L+1, T, d]."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(P, L, H, T, T)).astype(dtype)
    logits[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] = -np.inf
    hidden = rng.normal(size=(P, L + 1, T, d)).astype(dtype)
    return logits, hidden
