#!/usr/bin/env bash
# Rebuilds the figure of every shipped preset (assets/presets/*.json) headlessly under Xvfb into
# OUT/<preset>/ (default OUT: figures). Extra arguments go to every maskscope call, e.g.
#   bash tools/rebuild_figures.sh figures --samples 100000      # a quick draft
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-figures}
shift || true
bash tools/setup.sh
bash tools/build.sh
for preset in assets/presets/*.json; do
  name=$(basename "$preset" .json)
  echo "== $name"
  xvfb-run -a -s "-screen 0 1600x1000x24" build/maskscope --preset "$preset" --export-figure "$out/$name" \
      --exit-when-done "$@"
done
