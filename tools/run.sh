#!/usr/bin/env bash
# Sets up, builds and launches the maskscope window (extra arguments go to the app). Installs and builds
# only what the window needs: the CLI, the Python module and the tests build with tools/test.sh or
# tools/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh window
bash tools/build.sh --target maskscope
exec ./build/maskscope "$@"
