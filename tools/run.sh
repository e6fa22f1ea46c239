#!/usr/bin/env bash
# Sets up, builds and launches the maskscope window (extra arguments go to the app).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
exec ./build/maskscope "$@"
