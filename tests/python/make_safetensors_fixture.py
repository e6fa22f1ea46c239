#!/usr/bin/env python3
"""Writes tests/core/data/python_written.safetensors as Hugging Face's `safetensors` Python package lays a file
out (the package is not installed here, so the bytes are written by hand with struct and numpy): the header
JSON with compact separators, padded with spaces to a multiple of 8, tensors sorted by dtype size (largest
first) then name, `__metadata__` {"format": "pt"}. test_safetensors.cpp reads it back and checks the values.

    /usr/bin/python3 tests/python/make_safetensors_fixture.py   # rewrites the fixture
"""

import json
import pathlib
import struct

import numpy as np

TENSORS = {
    "h.0.weight": np.array([[1.0, -2.5, 3.25], [0.0, 1e-8, -7.0]], dtype=np.float32),
    "scalar": np.array(0.125, dtype=np.float32),
    # half: a subnormal, the largest finite, a negative, zero, 1/3 rounded
    "half": np.array([2.0**-24, 65504.0, -1.5, 0.0, 1.0 / 3.0], dtype=np.float16),
}
# bfloat16: the top 16 bits of float32 (truncation of values exact in bf16)
BF16 = ("bf", [2, 2], np.array([1.0, -2.0, 0.5, 3.0e38], dtype=np.float32))


def main():
    entries = []  # (name, dtype, shape, bytes, itemsize)
    for name, a in TENSORS.items():
        entries.append((name, {np.float32: "F32", np.float16: "F16"}[a.dtype.type], list(a.shape),
                        a.astype(a.dtype.newbyteorder("<")).tobytes(), a.dtype.itemsize))
    name, shape, values = BF16
    bits = (values.view(np.uint32) >> 16).astype("<u2")
    entries.append((name, "BF16", shape, bits.tobytes(), 2))
    entries.sort(key=lambda e: (-e[4], e[0]))
    header, data, at = {"__metadata__": {"format": "pt"}}, b"", 0
    for name, dtype, shape, raw, _ in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(raw)]}
        data += raw
        at += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    out = pathlib.Path(__file__).resolve().parent.parent / "core" / "data" / "python_written.safetensors"
    out.write_bytes(struct.pack("<Q", len(text)) + text + data)
    print(out, len(text), len(data))


if __name__ == "__main__":
    main()
