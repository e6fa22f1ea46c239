#!/usr/bin/env bash
# Fuzzes the input readers with libFuzzer (clang from Debian) for N seconds (default 60), in one target
# whose first input byte picks the reader (tests/fuzz/fuzz_inputs.cpp: presets, .msweep shards, lessons,
# token files as ids or characters):
#   bash tools/fuzz.sh [SECONDS]
# Seeds: every shipped preset, lesson and token file (prefixed here with their reader's byte) and the
# hand-written edge cases in tests/fuzz/corpus (prefixed already; sweep-shard.msweep is 's' and the output of
#   maskscope-cli sweep --quiet --vary alpha=0,1 --n 3 --d 4 --layers 1 --samples 20 --shard 2/2 --threads 1
# with --out FILE.msweep). New interesting inputs go to build-fuzz/corpus (not checked in).
# A crash leaves its input as build-fuzz/crash-* and exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
[ "${MASKSCOPE_SETUP_DONE:-0}" = 1 ] || bash tools/setup.sh
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# These builds carry debug information, for which ccache also keys on the build folder's path unless told
# not to: without this another clone's sanitizer build would compile everything again.
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is missing (apt-get install clang)" >&2; exit 1; }
# The whole project configured for fuzzing (MASKSCOPE_FUZZ): its reader libraries and the target only. A folder
# configured from tests/fuzz alone (before version 0.7.0) is started again.
if [ -f build-fuzz/CMakeCache.txt ] && ! grep -q '^MASKSCOPE_FUZZ:BOOL=ON' build-fuzz/CMakeCache.txt; then
  rm -rf build-fuzz
fi
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release -DMASKSCOPE_FUZZ=ON \
  -DMASKSCOPE_UNITY=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)"
mkdir -p build-fuzz/corpus
rm -rf build-fuzz/seeds && mkdir -p build-fuzz/seeds
seed() { { printf '%s' "$1"; cat "$2"; } >"build-fuzz/seeds/$1-$(basename "$2")"; }
for f in assets/presets/*.json; do seed p "$f"; done
for f in assets/lessons/*.json; do seed l "$f"; done
for f in assets/tokens/*.txt; do seed i "$f"; seed c "$f"; done
cd build-fuzz
./fuzz_inputs -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  corpus seeds ../tests/fuzz/corpus 2>&1 | tail -n 12
