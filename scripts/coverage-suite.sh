#!/usr/bin/env bash
# The coverage suite on a GPU: for each line of a shapes file (default
# scripts/coverage-shapes.txt; `category | problem flags | floors.py shape | source`) it runs
# `gemmtune tune` (every kernel verified, the winner re-timed beside cuBLASLt) and then
# scripts/floors.py for every shape; prints one markdown table per category: ours, cuBLASLt,
# the ratio, the shape's floor (memory or compute, measured on this GPU) and each one's
# distance from it. Needs PyTorch for the floors.
#
#   scripts/coverage-suite.sh BIN OUT [SHAPES]     env: EVALS (80), TLIM (seconds per tune, 90),
#                                                  ONLY (a category)
set -uo pipefail
BIN=$1
OUT=$2
SHAPES=${3:-"$(dirname "$0")/coverage-shapes.txt"}
mkdir -p "$OUT"
# Leading and trailing blanks off (sources may hold quotes, which xargs would refuse).
trim() { sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' <<<"$1"; }
i=0
floors=()
while IFS='|' read -r cat flags fshape src; do
  cat=$(trim "$cat")
  [[ -z "$cat" || "$cat" == \#* ]] && continue
  [[ -n "${ONLY:-}" && "$cat" != "$ONLY" ]] && continue
  i=$((i + 1))
  echo "$cat|$(trim "$fshape")|$(trim "$src")" >"$OUT/$i.meta"
  floors+=("$(trim "$fshape")")
  # shellcheck disable=SC2086
  timeout "${TLIM:-90}" "$BIN" tune $flags --max-evals "${EVALS:-80}" --json --db "$OUT/tune.sqlite" \
    --out "$OUT/run$i" >"$OUT/$i.json" 2>"$OUT/$i.log" || echo "case $i ($flags) failed: $(tail -n 2 "$OUT/$i.log")" >&2
done <"$SHAPES"
python3 "$(dirname "$0")/floors.py" $(printf '%s\n' "${floors[@]}" | sort -u) >"$OUT/floors.txt" 2>&1 || echo "floors failed" >&2
python3 - "$OUT" <<'PY'
import glob, json, math, os, sys
out = sys.argv[1]
floors = {}
for line in open(os.path.join(out, "floors.txt")):
    f = line.split()
    if len(f) >= 5 and f[0] != "shape":
        floors[f[0]] = (float(f[3]), f[4])
rows = {}
for meta in sorted(glob.glob(os.path.join(out, "*.meta")), key=lambda p: int(os.path.basename(p)[:-5])):
    i = os.path.basename(meta)[:-5]
    cat, shape, src = open(meta).read().strip().split("|", 2)
    try:
        d = json.load(open(os.path.join(out, f"{i}.json")))
    except Exception:
        rows.setdefault(cat, []).append(f"| {src} | - | - | - | - | - | no result |")
        continue
    w, v = d.get("winner_median_us"), d.get("vendor_median_us")
    ok = (d.get("winner_verification") or {}).get("passed")
    fl, bound = floors.get(shape, (None, "?"))
    ratio = v / w if w and v else None
    fmt = lambda x, p=1: f"{x:.{p}f}" if x else "-"
    rows.setdefault(cat, []).append(
        f"| {d['problem_label']} | {fmt(w)} | {fmt(v)} | {fmt(ratio, 3)} | {fmt(fl)} ({bound}) | "
        f"{fmt(w / fl if w and fl else None, 2)} / {fmt(v / fl if v and fl else None, 2)} | "
        f"{'yes' if ok else 'no'} | `{d.get('winner')}` |")
for cat, lines in rows.items():
    print(f"\n### {cat}\n")
    print("| GEMM | ours us | cuBLASLt us | ratio | floor us | ours / vendor over floor | verified | winner |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(lines))
PY
