#!/usr/bin/env bash
# Sets up, builds and runs every test (core, CLI, and the GUI under Xvfb), then the Python package installed
# from a wheel (tools/test_wheel.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${MASKSCOPE_SETUP_DONE:-0}" = 1 ] || bash tools/setup.sh
bash tools/build.sh
# The browser build for the web_page test (docs/web.md): about 2.5 minutes on 2 cores from scratch, less
# again. MASKSCOPE_WEB=0 leaves it out; where Emscripten or Chromium cannot be installed the test says it
# is skipped.
if [ "${MASKSCOPE_WEB:-1}" = "1" ]; then
  # Exit 3: what the page needs cannot be installed or fetched here (the test then says it is skipped);
  # any other failure of the build fails the run.
  status=0
  { [ "${MASKSCOPE_SETUP_DONE:-0}" = 1 ] || bash tools/web.sh --install; } && bash tools/web.sh || status=$?
  if [ "$status" = 3 ]; then
    echo "test: Emscripten, Chromium or Dear ImGui's sources cannot be had here: the web_page test will be skipped"
  elif [ "$status" != 0 ]; then
    exit "$status"
  fi
fi
# Two at a time: the suites use their own work folders, and the window tests their own Xvfb display.
(cd build && ctest --output-on-failure -j"$(nproc)")
# The Python package installed from a wheel into a fresh venv, its tests run against that (docs/python.md).
if [ -d build/python/maskscope ]; then
  bash tools/test_wheel.sh
fi
