#!/usr/bin/env bash
# Sets up, builds and runs every test (core, CLI, and the GUI under Xvfb).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
cd build && ctest --output-on-failure -j1
