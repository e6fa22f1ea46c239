#!/usr/bin/env bash
# Sets up, builds and runs every test (core, CLI, and the GUI under Xvfb).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
# The browser build for the web_page test (docs/web.md); where its packages cannot be installed the
# test says it is skipped.
if bash tools/web.sh --install; then
  bash tools/web.sh
else
  echo "test: Emscripten or Chromium cannot be installed here: the web_page test will be skipped"
fi
cd build && ctest --output-on-failure -j1
