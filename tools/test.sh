#!/usr/bin/env bash
# Sets up, builds and runs every test (core, CLI, and the GUI under Xvfb).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
# The browser build for the web_page test (docs/web.md): about 2.5 minutes on 2 cores from scratch, less
# again. MASKSCOPE_WEB=0 leaves it out; where Emscripten or Chromium cannot be installed the test says it
# is skipped.
if [ "${MASKSCOPE_WEB:-1}" = "1" ]; then
  if bash tools/web.sh --install; then
    bash tools/web.sh
  else
    echo "test: Emscripten or Chromium cannot be installed here: the web_page test will be skipped"
  fi
fi
cd build && ctest --output-on-failure -j1
