#!/usr/bin/env bash
# Configures and builds maskscope (Release) into build/, and makes its Python module importable (docs/python.md).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release "$@" >/dev/null  # CMakePresets.json
cmake --build build -j"$(nproc)"
# The Python module (docs/python.md): /usr/bin/python3 finds build/python from any directory through a .pth
# file in its user site-packages (the last build of any clone wins).
if [ -d build/python/maskscope ] && [ -x /usr/bin/python3 ]; then
  site=$(/usr/bin/python3 -m site --user-site)
  mkdir -p "$site" && echo "$PWD/build/python" >"$site/maskscope.pth"
fi
