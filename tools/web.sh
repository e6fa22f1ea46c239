#!/usr/bin/env bash
# The window in the browser (docs/web.md): installs Emscripten and what the page needs from Debian 12,
# fetches Dear ImGui 1.86's sources (its Debian source package; never checked in) and builds the static
# folder build-web/site/ (index.html, maskscope.js, .wasm, .worker.js, .data, and the one-thread page's
# maskscope1.js and .wasm; both pages load maskscope.data).
#   bash tools/web.sh            build (again: only what changed)
#   bash tools/web.sh --serve    serve build-web/site on http://localhost:8037/ with the headers threads need
#   bash tools/web.sh --install  only install (also Chromium and python3-websocket for the web_page test);
#                                exit 3 if the packages cannot be installed (the build: exit 3 if Dear ImGui's
#                                sources cannot be fetched)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/build-web
port=${MASKSCOPE_WEB_PORT:-8037}
if [ "${1:-}" = "--serve" ]; then
  [ -f "$out/site/index.html" ] || { echo "web.sh: no build-web/site yet; run bash tools/web.sh first" >&2; exit 1; }
  echo "web.sh: serving $out/site on http://localhost:$port/ (Ctrl+C stops)"
  exec /usr/bin/python3 tools/web_serve.py "$out/site" "$port"
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
packages=(emscripten dpkg-dev cmake nlohmann-json3-dev libcli11-dev libeigen3-dev libstb-dev fonts-dejavu-core python3)
if [ "${1:-}" = "--install" ]; then packages+=(chromium python3-websocket); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "web.sh: installing ${missing[*]}"
  if ! { $SUDO apt-get update -qq &&
         DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
    echo "web.sh: cannot install ${missing[*]}" >&2
    exit 3
  fi
fi
if [ "${1:-}" = "--install" ]; then exit 0; fi

# Dear ImGui's own sources (libimgui-dev ships headers only): the source package of the Debian suite
# this machine runs, through a deb-src entry signed by the same keyring as its binary packages.
imgui_dir=$(ls -d "$out"/src/imgui-1.86*/ 2>/dev/null | head -n1 || true)
if [ -z "$imgui_dir" ] || [ ! -f "$imgui_dir/imgui.cpp" ]; then
  if ! apt-get source --print-uris imgui >/dev/null 2>&1; then
    suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
    echo "web.sh: adding a deb-src entry for Debian $suite"
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$suite" | $SUDO tee /etc/apt/sources.list.d/maskscope-deb-src.sources >/dev/null
    $SUDO apt-get update -qq || { echo "web.sh: apt-get update failed with the deb-src entry" >&2; exit 3; }
  fi
  mkdir -p "$out/src"
  if ! (cd "$out/src" && apt-get source -qq imgui >/dev/null 2>&1); then
    echo "web.sh: apt-get source imgui failed (is a deb-src entry for this Debian suite reachable?)" >&2
    exit 3
  fi
  imgui_dir=$(ls -d "$out"/src/imgui-1.86*/ 2>/dev/null | head -n1 || true)
  if [ -z "$imgui_dir" ]; then
    echo "web.sh: the imgui source package is not Dear ImGui 1.86 (found: $(ls "$out/src"))" >&2
    exit 3
  fi
fi
imgui_dir=${imgui_dir%/}

# Header-only dependencies from Debian, seen by Emscripten's compiler without the rest of /usr/include.
mkdir -p "$out/include"
ln -sfn /usr/include/nlohmann "$out/include/nlohmann"
ln -sfn /usr/include/CLI "$out/include/CLI"
ln -sfn /usr/include/stb/stb_image_write.h "$out/include/stb_image_write.h"
ln -sfn /usr/include/eigen3 "$out/include/eigen3"
ln -sfn "$imgui_dir" "$out/include/imgui"  # <imgui/backends/...> as with libimgui-dev

# ccache (CMake's launcher, when installed) keys on paths relative to the clone, so another clone's build
# of the same sources reuses these objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
# Emscripten's JavaScript tools need Debian's node modules (node-acorn), which a Node.js not from
# Debian does not search by itself.
export NODE_PATH=/usr/share/nodejs:/usr/lib/nodejs${NODE_PATH:+:$NODE_PATH}
# Two pages into one folder: with Web Workers sharing memory (maskscope.js, build-web/cmake) and the
# one-thread page for servers without the COOP/COEP headers (maskscope1.js, build-web/cmake-1t);
# index.html loads the one the browser allows.
for variant in threads one-thread; do
  if [ "$variant" = threads ]; then tree=$out/cmake threads=ON; else tree=$out/cmake-1t threads=OFF; fi
  emcmake cmake -S . -B "$tree" -DCMAKE_BUILD_TYPE=Release -DMASKSCOPE_IMGUI_DIR="$imgui_dir" \
    -DMASKSCOPE_WEB_INCLUDE="$out/include" -DMASKSCOPE_WEB_SITE="$out/site" -DMASKSCOPE_WEB_THREADS=$threads >/dev/null
  nice cmake --build "$tree" -j"$(nproc)" --target maskscope
done
echo "web.sh: built $out/site ($(du -sh "$out/site" | cut -f1)); serve it with: bash tools/web.sh --serve"
