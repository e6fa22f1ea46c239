#!/usr/bin/env bash
# Writes maskscope-cli's JSON for a fixed list of settings of both model families (run, leakage, sweep,
# probe, theory) into a folder, so that a refactoring can be checked bit for bit:
#   bash tools/json_outputs.sh build/maskscope-cli /tmp/before   (on the old commit)
#   bash tools/json_outputs.sh build/maskscope-cli /tmp/after    (on the new one)
#   diff -r /tmp/before /tmp/after
# Fields that change between runs of the same settings (times: keys ending in _s) are removed; every other
# value is compared as the double it parses to.
set -euo pipefail
cli=$(realpath "$1")
out=$2
mkdir -p "$out"
case_n=0
one() {  # one NAME SUBCOMMAND ARGS...
  local name=$1
  shift
  case_n=$((case_n + 1))
  "$cli" "$@" --threads 2 --quiet >"$out/$name.raw"
  /usr/bin/python3 - "$out/$name.raw" "$out/$name.json" <<'PY'
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if not (k.endswith("_s") or k in ("seconds", "elapsed"))}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
with open(sys.argv[1]) as f:
    data = json.load(f)
with open(sys.argv[2], "w") as f:
    json.dump(strip(data), f, indent=1, sort_keys=True)
PY
  rm "$out/$name.raw"
}
theory() {  # theory NAME ARGS... (no --threads)
  local name=$1
  shift
  "$cli" theory "$@" >"$out/$name.json"
}
one run-default run --samples 2000
one run-no-norm-rope run --norm none --gamma 0.5 --alpha 0.9 --rope 10000 --samples 1000
one run-bidir-scale-d run --mask bidirectional --scale d --d 16 --samples 1000
one run-window-unit-rms run --mask window:3 --unit-input 1 --norm rmsnorm --samples 1000 --n 12
one run-first-token run --first-token fixed --samples 1000
one run-scramble-l2 run --norm l2 --rope 100 --rope-scramble 7 --scale one --samples 500
one run-stage-grams run --stage-grams 1 --samples 300 --n 6 --d 16
one rw-heads run --model random_weights --d 32 --heads 4 --layers 3 --samples 200
one rw-fixed-learned run --model random_weights --weights fixed --weight-seed 5 --pos-embedding learned --pos-std 0.1 --mlp 0 --samples 200 --residual-mean zero --hidden attention --d 32
one rw-tokens-bos run --model random_weights --tokens builtin:zuo-addition --tokens-format chars --first-token fixed --n 9 --samples 100 --d 32 --vocab 96
one rw-init run --model random_weights --init-mean 0.01 --init-std 0.05 --embed-std 1 --gamma 0.5 --samples 200 --d 32 --histograms 8
one leakage-pf leakage --samples 500 --rope 10000
one leakage-rw leakage --model random_weights --d 32 --samples 100 --first-token fixed
one sweep-pf sweep --vary d=4,16 --vary alpha=0:1:3 --samples 300
one sweep-rw sweep --model random_weights --vary init_std=0.02,0.2 --d 32 --samples 100 --metric norm_adjacency
one sweep-first-key sweep --vary gamma=0,0.5 --first-token fixed --samples 300 --metric sink_weight
one probe-rw probe --model random_weights --weights fixed --d 32 --samples 200

theory theory-h --kind h_of_j --n 12 --d 32 --alpha 0.3
theory theory-br --kind behind_rope_layer2 --n 8
theory theory-ln --kind ln_recency_s2 --n 8 --gamma 0.2
echo "$case_n commands' JSON in $out"
