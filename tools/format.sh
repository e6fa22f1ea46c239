#!/usr/bin/env bash
# Formats maskscope's C++ sources with .clang-format (Debian 12's clang-format 14).
#   bash tools/format.sh          rewrite every file in place
#   bash tools/format.sh --check  change nothing; list the files that are not formatted, exit 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format: clang-format not found (tools/setup.sh installs it)"; exit 2; }
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- 'app/*' 'core/*' 'tests/*' 'tools/*' 'python/*' \
                     | grep -E '\.(cpp|hpp|inc|h)$' | while read -r f; do [ -f "$f" ] && echo "$f"; done)
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --style=file --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: ${#bad[@]} of ${#files[@]} files are not formatted (run: bash tools/format.sh):"
    printf '  %s\n' "${bad[@]}"
    exit 1
  fi
  echo "format: all ${#files[@]} C++ files formatted"
else
  clang-format --style=file -i "${files[@]}"
  echo "format: ${#files[@]} C++ files formatted"
fi
