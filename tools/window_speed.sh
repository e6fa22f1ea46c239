#!/usr/bin/env bash
# Times the same run in maskscope-cli and in the window (under Xvfb), alternately, and prints both
# medians and their ratio (issue 48: the window at most 1.3x the CLI at n 512, 400 samples):
#   bash tools/window_speed.sh                      n 512, 400 samples, 5 rounds, build/ of this clone
#   bash tools/window_speed.sh --n 256 --samples 2000 --rounds 3 --build build
# Each round runs the CLI, then the window (--exit-when-done), each as a whole process: start-up
# included, so the window's own start (a GL context, fonts) counts against it. Wall and CPU (user +
# system) seconds are the operating system's, from /usr/bin/time. Extra arguments after -- go to both.
set -euo pipefail
cd "$(dirname "$0")/.."
n=512
samples=400
rounds=5
build=build
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --n) n=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "window_speed.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
cli=$build/maskscope-cli
win=$build/maskscope
for b in "$cli" "$win"; do [ -x "$b" ] || { echo "window_speed.sh: $b not built" >&2; exit 2; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One timed command: appends "wall cpu" to the file $1.
timed() {
  local into=$1
  shift
  /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$@" >"$tmp/out" 2>&1 || {
    echo "window_speed.sh: failed: $*" >&2
    cat "$tmp/out" >&2
    exit 1
  }
  awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$tmp/t" >>"$into"
}
echo "n $n, $samples samples, $rounds rounds, $(nproc) cores; $(uptime | sed 's/.*load/load/')"
for r in $(seq "$rounds"); do
  timed "$tmp/cli" "$cli" run --n "$n" --samples "$samples" --quiet --out "$tmp/cli.json" "${extra[@]}"
  timed "$tmp/win" xvfb-run -a -s "-screen 0 1600x1000x24" "$win" --set n="$n" --samples "$samples" \
    --exit-when-done "${extra[@]}"
  echo "round $r: cli $(tail -1 "$tmp/cli" | awk '{print $1 " s wall, " $2 " s cpu"}'); window $(tail -1 "$tmp/win" |
    awk '{print $1 " s wall, " $2 " s cpu"}')"
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
cli_wall=$(cut -d' ' -f1 "$tmp/cli" | median)
win_wall=$(cut -d' ' -f1 "$tmp/win" | median)
cli_cpu=$(cut -d' ' -f2 "$tmp/cli" | median)
win_cpu=$(cut -d' ' -f2 "$tmp/win" | median)
echo "median wall: cli $cli_wall s, window $win_wall s, ratio $(awk -v a="$win_wall" -v b="$cli_wall" 'BEGIN { printf "%.2f", a / b }')"
echo "median cpu:  cli $cli_cpu s, window $win_cpu s, ratio $(awk -v a="$win_cpu" -v b="$cli_cpu" 'BEGIN { printf "%.2f", a / b }')"
echo "load after: $(uptime | sed 's/.*load average: //')"
