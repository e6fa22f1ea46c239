#!/usr/bin/env bash
# Configures and builds maskscope (Release) into build/ with Ninja, through ccache when it is installed,
# and makes its Python module importable (docs/python.md).
#   bash tools/build.sh                      everything that can be built with what is installed
#   bash tools/build.sh --target maskscope   only the window (tools/run.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the clone, so another clone (CI's) reuses this one's objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
cmake --preset release >/dev/null  # CMakePresets.json
cmake --build build -j"$(nproc)" "$@"
# The Python module (docs/python.md): /usr/bin/python3 finds build/python from any directory through a .pth
# file in its user site-packages (the last build of any clone wins).
if [ -d build/python/maskscope ] && [ -x /usr/bin/python3 ]; then
  site=$(/usr/bin/python3 -m site --user-site)
  mkdir -p "$site" && echo "$PWD/build/python" >"$site/maskscope.pth"
fi
