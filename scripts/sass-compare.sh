#!/usr/bin/env bash
# Compiles the same kernels from two gemmtune binaries (e.g. before and after a template change)
# for sm_90a and compares their machine code: per kernel the SASS instruction count, registers
# and whether the instruction streams are identical once register numbers, addresses and
# symbol names are masked. A template refactor that leaves every row "same" cannot change a
# kernel's speed; rows that differ are the ones to time on a GPU.
#
#   scripts/sass-compare.sh OLD_BIN NEW_BIN [CASES]
#
# CASES: lines of `<problem flags> | <kernel name>` (default: scripts/sass-cases.txt); `#`
# starts a comment. KEEP=DIR keeps the normalised SASS of kernels that differ. Needs nvcc and cuobjdump (CUDA 13) on PATH; no GPU.
set -euo pipefail
old=$1
new=$2
cases=${3:-"$(dirname "$0")/sass-cases.txt"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# SASS of one kernel source, normalised: no addresses, encodings, register numbers or names.
sass_of() {
  local bin=$1 flags=$2 cfg=$3 tag=$4
  # shellcheck disable=SC2086
  "$bin" source --backend sim $flags --config "$cfg" >"$work/$tag.hip" 2>/dev/null || return 1
  nvcc -std=c++17 -x cu -cubin -gencode=arch=compute_90a,code=sm_90a -Xptxas -v \
    -o "$work/$tag.cubin" "$work/$tag.hip" 2>"$work/$tag.ptxas" || return 1
  cuobjdump -sass "$work/$tag.cubin" |
    grep -E '^\s+/\*[0-9a-f]{4}\*/' |
    sed -E 's#/\*[0-9a-f]+\*/##g; s#;.*##; s#\bU?R[0-9]+\b#R#g; s#\bU?P[0-9]+\b#P#g; s#0x[0-9a-f]+#X#g; s#`\([^)]*\)#SYM#g' \
      >"$work/$tag.sass"
}

printf '%-96s %8s %8s %5s %5s  %s\n' kernel old_ins new_ins oregs nregs verdict
same=0 differ=0 failed=0
while IFS= read -r line; do
  line=${line%%#*}
  [[ -z "${line// /}" ]] && continue
  flags=${line%%|*}
  cfg=$(echo "${line#*|}" | xargs)
  if ! sass_of "$old" "$flags" "$cfg" old || ! sass_of "$new" "$flags" "$cfg" new; then
    printf '%-96s %s\n' "$cfg $flags" "COMPILE FAILED"
    failed=$((failed + 1))
    continue
  fi
  regs() { grep -o 'Used [0-9]* registers' "$work/$1.ptxas" | head -1 | awk '{print $2}'; }
  if cmp -s "$work/old.sass" "$work/new.sass"; then
    verdict=same
    same=$((same + 1))
  else
    verdict="differ ($( (diff "$work/old.sass" "$work/new.sass" || true) | grep -c '^[<>]') lines)"
    [[ -n "${KEEP:-}" ]] && cp "$work/old.sass" "$KEEP/$cfg.old.sass" && cp "$work/new.sass" "$KEEP/$cfg.new.sass"
    differ=$((differ + 1))
  fi
  printf '%-96s %8s %8s %5s %5s  %s\n' "$cfg ${flags// /}" "$(wc -l <"$work/old.sass")" \
    "$(wc -l <"$work/new.sass")" "$(regs old)" "$(regs new)" "$verdict"
done <"$cases"
echo "same: $same  differ: $differ  failed: $failed"
[[ $failed -eq 0 ]]
