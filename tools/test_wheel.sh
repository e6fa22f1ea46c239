#!/usr/bin/env bash
# The Python package as a user installs it (docs/python.md, "Install"): a wheel of the module just built in
# build/ (setup.py reuses that tree: nothing is compiled again), installed into a fresh virtualenv with
# Debian's NumPy (--system-site-packages), and the Python tests run against it from /tmp with build/'s path
# out of sight (no PYTHONPATH; PYTHONNOUSERSITE=1 so tools/build.sh's maskscope.pth is not read).
#   bash tools/test_wheel.sh        (tools/test.sh runs it after ctest)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d /tmp/maskscope-wheel.XXXXXX)
trap 'rm -rf "$work"' EXIT
export PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH
MASKSCOPE_CMAKE_BUILD_DIR="$root/build" /usr/bin/python3 -m build --no-isolation --wheel --outdir "$work/dist" . \
  >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --no-index --no-build-isolation -q "$work"/dist/maskscope-*.whl
cd /tmp
# The package must come from the venv, not from build/.
"$work/venv/bin/python" -c "
import maskscope, sys
where = maskscope.__file__
assert where.startswith('$work/venv/'), 'maskscope imported from ' + where
print('test_wheel: maskscope', maskscope.__version__, 'from', where)"
# The stubs and py.typed came with it: mypy --strict through the installed package, as a user's project sees it.
"$work/venv/bin/python" -m mypy --strict --cache-dir "$work/mypy" "$root"/examples/*.py \
  "$root/tests/python/test_maskscope_typed.py"
MASKSCOPE_CLI="$root/build/maskscope-cli" "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
  --rootdir="$root/tests/python" "$root"/tests/python/test_maskscope_*.py
