#!/usr/bin/env bash
# Remakes the window's screenshots in docs/images/ (linked from README.md and docs/window.md): one per tab,
# the output norms, and two lesson steps, each taken by the window itself under Xvfb (1400 x 900 PNGs).
# Usage: bash tools/docs_screenshots.sh [WINDOW_BINARY]   (default build/maskscope)
set -euo pipefail
app="${1:-}"
if [[ -n "$app" && "$app" != /* ]]; then app="$PWD/$app"; fi  # relative to where it was called from
cd "$(dirname "$0")/.."
app="${app:-build/maskscope}"
if [[ ! -x "$app" ]]; then
  echo "docs_screenshots.sh: no window binary at $app (build it with bash tools/build.sh, or pass its path)" >&2
  exit 2
fi
out=docs/images
mkdir -p "$out"
size=1400x900

# shot NAME ARGS...: one screenshot of the window at $size, taken when its run is done.
shot() {
  local name="$1"
  shift
  echo "docs_screenshots.sh: $out/$name.png" >&2
  xvfb-run -a -s "-screen 0 1600x1000x24" "$app" --size "$size" "$@" --screenshot "$out/$name.png" \
    --exit-when-done >/dev/null
}

# The live tabs at the window's default settings (n 10, d 64, L 4, alpha 0.5, LayerNorm, scale 1/sqrt(d)).
shot attention --tab attention
shot diagonal --tab diagonal
shot hofj --tab hofj
shot norms --tab attention --show norm
shot stage-gram --tab attention --show gram_mix --set norm=l2 --set scale=one --set gamma=1 --set unit_input=1 \
  --set alpha=0.2 --set n=20 --samples 20000
# Metrics of the random-weight network (Zuo et al.'s setting): layer 0 and each head's RP appear there.
shot metrics --tab metrics --set model=random_weights --set n=22 --set d=384 --set heads=6 --set layers=6 \
  --set samples=1000
# The Leakage tab at LN-recency's setting, with its bidirectional twin run (draft sample count).
shot leakage --preset leakage-ln-recency --tab leakage --samples 20000
# The Sweep tab: the phase diagram of layer-4 RP over alpha and d (README) and the LN-recency Fig. 5 curve.
shot sweep --preset sweep-ln-recency-phase
shot sweep-lines --preset sweep-ln-recency-fig5
# The Figure tab: LN-recency Fig. 1 (draft sample count instead of the paper's 10^7).
shot figure --preset ln-recency-fig1 --samples 200000
# A lesson step in the window, and a step of another lesson in presentation mode.
shot lesson --lesson layernorm-recency --step 3
shot presentation --lesson where-position-comes-from --step 2 --present
