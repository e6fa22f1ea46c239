#!/usr/bin/env bash
# 20 quick F12 presses (press and release within one frame, as xdotool and presenter remotes send
# them) must give 20 screenshots: shortcuts go through GLFW's key callback queue, never lost.
# Usage: key_presses.sh APP WORKDIR   (run under xvfb-run)
set -euo pipefail
app=$1
work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$app" --size 800x600 --set samples=100000000 --set n=8 --set layers=1 >app.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
win=$(xdotool search --sync --name '^maskscope$' | head -n 1)
xdotool windowfocus --sync "$win" 2>/dev/null || true
sleep 1
for _ in $(seq 20); do xdotool key --clearmodifiers F12; done
for _ in $(seq 50); do  # up to 10 s for the frames to drain the queue
  count=$(find maskscope-figures -name 'maskscope-screenshot-*.png' 2>/dev/null | wc -l)
  [ "$count" -ge 20 ] && break
  sleep 0.2
done
echo "key_presses: $count screenshots for 20 quick F12 presses"
[ "$count" -eq 20 ]
