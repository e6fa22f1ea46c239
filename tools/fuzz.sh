#!/usr/bin/env bash
# Fuzzes the preset reader with libFuzzer (clang from Debian) for N seconds (default 60):
#   bash tools/fuzz.sh [SECONDS]
# Seeds: every shipped preset (assets/presets) and the hand-written edge cases in
# tests/fuzz/corpus; new interesting inputs go to build-fuzz/corpus (not checked in).
# A crash leaves its input as build-fuzz/crash-* and exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
bash tools/setup.sh
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is missing (apt-get install clang)" >&2; exit 1; }
cmake -S tests/fuzz -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-fuzz -j"$(nproc)"
mkdir -p build-fuzz/corpus
cd build-fuzz
./fuzz_preset -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  corpus ../assets/presets ../tests/fuzz/corpus 2>&1 | tail -n 12
