#!/usr/bin/env bash
# Checks that a folder (default app/gui/common/, the window-free GUI library) includes no window
# header (Dear ImGui, GLFW, OpenGL, epoxy) and nothing from app/gui/window/: prints each such include; exit 1 if any.
set -euo pipefail
dir=${1:-"$(dirname "$0")/../../app/gui/common"}
[ -d "$dir" ] || { echo "window_free: no folder $dir"; exit 2; }
if grep -rEn '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](imgui|GLFW/|GL/|epoxy/|window/)' "$dir"; then
  echo "window_free: $dir must stay free of window headers (they belong in app/gui/window/)"
  exit 1
fi
echo "window_free: $dir includes no window header"
