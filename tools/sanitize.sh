#!/usr/bin/env bash
# Sanitizer builds of everything, each running the whole ctest suite:
#   bash tools/sanitize.sh asan   # AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   bash tools/sanitize.sh tsan   # ThreadSanitizer (build-tsan/)
#   bash tools/sanitize.sh        # both
#   bash tools/sanitize.sh asan --window-free   # only the window-free suites (core, CLI, the window-free GUI half), without
#                                               # building the window (CI runs this)
#   bash tools/sanitize.sh tsan --threads       # only the tests of the threads: the runner, the sweep, the
#                                               # controller and the figure and sweep workbenches (CI runs this)
# The kernel's target_clones are off in these builds (GCC's TSan cannot run an ifunc resolver).
# Known third-party reports are suppressed in tools/sanitizers/ (fontconfig via cairo, Mesa).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${MASKSCOPE_SETUP_DONE:-0}" = 1 ] || bash tools/setup.sh
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# These builds carry debug information, for which ccache also keys on the build folder's path unless told
# not to: without this another clone's sanitizer build would compile everything again.
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
modes=()
window_free=0
threads_only=0
for arg in "$@"; do
  case "$arg" in
    --window-free) window_free=1 ;;
    --threads) threads_only=1 ;;
    *) modes+=("$arg") ;;
  esac
done
[ ${#modes[@]} -eq 0 ] && modes=(asan tsan)
supp="$PWD/tools/sanitizers"
for mode in "${modes[@]}"; do
  case "$mode" in
    asan | tsan) ;;
    *) echo "sanitize.sh: unknown mode '$mode' (asan, tsan)" >&2; exit 2 ;;
  esac
  dir="build-$mode"  # the preset's binaryDir; its flags are in CMakePresets.json
  echo "== $mode: building into $dir"
  cmake --preset "$mode" >/dev/null
  suites="core_tests|cli_tests|gui_common_tests"
  if [ "$threads_only" = 1 ]; then
    cmake --build "$dir" -j"$(nproc)" --target core_tests gui_common_tests
  elif [ "$window_free" = 1 ]; then
    cmake --build "$dir" -j"$(nproc)" --target core_tests cli_tests gui_common_tests maskscope-cli
  else
    cmake --build "$dir" -j"$(nproc)"
  fi
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1"
  export LP_NUM_THREADS=0
  window_tests="gui_smoke|key_presses|figure_export|slides_export"
  if [ "$threads_only" = 1 ]; then
    # The files whose tests start, pause, cancel and join the run's threads (doctest's --source-file).
    echo "== $mode: the tests of the run's threads"
    (cd "$dir" && ctest --output-on-failure -j"$(nproc)" -R "_threads\$")
    continue
  fi
  if [ "$window_free" = 1 ]; then
    echo "== $mode: ctest, the window-free suites (leak detection on)"
    (cd "$dir" && ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" ctest --output-on-failure -j"$(nproc)" -R "^($suites)\$")
    continue
  fi
  # web_page is left out: it checks the Emscripten build against this build's CLI, whose kernels without
  # target clones (per-sample x86-64 instead of lanes-8) give other bits by design.
  echo "== $mode: ctest, window-free tests (leak detection on)"
  (cd "$dir" && ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" ctest --output-on-failure -j1 -E "$window_tests|web_page")
  # Mesa unloads its GL driver at exit, so LeakSanitizer sees that driver's allocations with no
  # module to attribute (or suppress) them to: the window tests run without leak detection; every
  # other ASan and UBSan check stays on.
  echo "== $mode: ctest, window tests under Xvfb"
  (cd "$dir" && ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" ctest --output-on-failure -j1 -R "$window_tests")
done
