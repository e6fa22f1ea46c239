#!/usr/bin/env bash
# Installs maskscope's Debian 12 packages (skips those already present):
#   bash tools/setup.sh          everything the build and the tests need (tools/test.sh)
#   bash tools/setup.sh window   only what the window needs to build and run (tools/run.sh)
set -euo pipefail
window=(
  build-essential cmake pkg-config ninja-build ccache
  nlohmann-json3-dev libcli11-dev
  libimgui-dev libglfw3-dev libepoxy-dev libstb-dev fonts-dejavu-core libcairo2-dev
  libgif-dev  # the checkpoint animation's GIF (giflib)
  librandom123-dev libeigen3-dev
)
tests=(
  doctest-dev libxml2-utils libxml2-dev xdotool
  clang clang-format libclang-rt-14-dev
  libopenmpi-dev openmpi-bin
  python3-torch python3-numpy
  libopenblas0-pthread  # tools/train_bench_torch.py: torch's GEMMs on OpenBLAS (Debian's torch calls the system BLAS)
  pybind11-dev python3-pybind11 python3-pytest python3-matplotlib jupyter-nbconvert python3-ipykernel
  python3-venv python3-build python3-setuptools python3-wheel python3-mypy python3-pandas python3-xarray
  xvfb xauth libgl1-mesa-dri libglx-mesa0
)
case "${1:-all}" in
  window) packages=("${window[@]}") ;;
  all) packages=("${window[@]}" "${tests[@]}") ;;
  *) echo "setup.sh: unknown part '$1' (window, all)" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
