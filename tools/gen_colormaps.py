#!/usr/bin/python3
"""Writes assets/colormaps/<name>.csv: 256 rows of 'r,g,b' in [0, 1], sampled from the reference
implementations (matplotlib; seaborn for rocket, the papers' map). Run once; the tables are data.
Needs Debian's python3-matplotlib and python3-seaborn (run with /usr/bin/python3)."""
import os

import matplotlib
import seaborn  # noqa: F401  (registers 'rocket' with matplotlib)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "colormaps")
MAPS = {"rocket": "rocket", "viridis": "viridis", "magma": "magma", "rdbu": "RdBu_r", "coolwarm": "coolwarm"}

os.makedirs(OUT, exist_ok=True)
for name, source in MAPS.items():
    cmap = matplotlib.colormaps[source]
    with open(os.path.join(OUT, name + ".csv"), "w") as f:
        f.write(f"# {source} from matplotlib {matplotlib.__version__}, 256 samples, r,g,b\n")
        for k in range(256):
            r, g, b, _ = cmap(k / 255.0)
            f.write(f"{r:.6f},{g:.6f},{b:.6f}\n")
    print("wrote", name)
