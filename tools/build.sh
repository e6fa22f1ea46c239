#!/usr/bin/env bash
# Configures and builds maskscope (Release) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release "$@" >/dev/null  # CMakePresets.json
cmake --build build -j"$(nproc)"
