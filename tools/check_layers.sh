#!/usr/bin/env bash
# Checks that core/'s folders include only from folders below them (docs/ARCHITECTURE.md):
#   random -> model -> stats -> kernel -> formats -> train -> run
# and that core/ includes no OpenGL or ImGui header. Prints every offending include; exit 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."
order=(random model stats kernel formats train run)
rank() { local i; for i in "${!order[@]}"; do [ "${order[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }
bad=0
for dir in "${order[@]}"; do
  r=$(rank "$dir")
  while IFS= read -r hit; do
    file=${hit%%:*}
    target=$(sed -E 's/.*#include "core\/([a-z_]+)\/.*/\1/' <<<"$hit")
    t=$(rank "$target")
    if [ "$t" -lt 0 ] || [ "$t" -gt "$r" ]; then
      echo "check_layers: $file includes core/$target/ (core/$dir may include only ${order[*]:0:$((r + 1))})"
      bad=1
    fi
  done < <(grep -rHn '#include "core/' "core/$dir" || true)
done
if grep -rEn '#include [<"](imgui|GL/|GLFW/|epoxy/)' core; then
  echo "check_layers: core/ must not include window headers"
  bad=1
fi
stray=$(find core -maxdepth 1 -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.inc' \))
if [ -n "$stray" ]; then
  echo "check_layers: source files directly in core/ (put them in a subfolder): $stray"
  bad=1
fi
[ "$bad" -eq 0 ] && echo "check_layers: core/ folders include only downward (${order[*]})"
exit "$bad"
