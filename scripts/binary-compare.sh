#!/usr/bin/env bash
# Times the same kernels with two gemmtune binaries in one session on one GPU, alternating
# OLD, NEW, OLD, NEW per shape, so that clock and thermal drift hits both alike; every call also
# times the vendor library. Prints per kernel the median of each binary's times and NEW / OLD,
# and whether both verified. This is how a template change that should not change speed (a
# refactor) is checked: SASS first (scripts/sass-compare.sh), then this on the GPU.
#
#   scripts/binary-compare.sh OLD_BIN NEW_BIN OUT_DIR [CASES]
#
# CASES: lines of `<problem flags> | <kernel name> [<kernel name> ...]` (default: the shape
# suite's recorded winners and default starts, scripts/binary-compare-cases.txt). REPS (default
# 2) alternations; RETIME (default 5) re-timings per call.
set -euo pipefail
old=$1
new=$2
out=$3
cases=${4:-"$(dirname "$0")/binary-compare-cases.txt"}
reps=${REPS:-2}
mkdir -p "$out"
i=0
while IFS= read -r line; do
  line=${line%%#*}
  [[ -z "${line// /}" ]] && continue
  i=$((i + 1))
  flags=${line%%|*}
  read -r -a cfgs <<<"${line#*|}"
  args=()
  for c in "${cfgs[@]}"; do args+=(--config "$c"); done
  for r in $(seq 1 "$reps"); do
    for which in old new; do
      bin=$old
      [[ $which == new ]] && bin=$new
      # shellcheck disable=SC2086
      timeout 300 "$bin" bench $flags "${args[@]}" --retime "${RETIME:-5}" --force \
        --db "$out/$which.sqlite" --json >"$out/$i.$which.$r.json" 2>"$out/$i.$which.$r.log" ||
        echo "case $i $which rep $r failed: $(tail -n 2 "$out/$i.$which.$r.log")" >&2
    done
  done
  echo "$flags" >"$out/$i.flags"
done <"$cases"
python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
rows = {}
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    case, which, _rep, _ = os.path.basename(path).split(".")
    try:
        d = json.load(open(path))
    except Exception:
        continue
    for c in d.get("configs", []) + [d.get("vendor") or {}]:
        o = c.get("outcome") or {}
        s = o.get("samples_us") or []
        if not s:
            continue
        key = (int(case), c["name"])
        r = rows.setdefault(key, {"old": [], "new": [], "ok": {"old": True, "new": True}, "label": d.get("problem_label", "")})
        r[which].append(statistics.median(s))
        v = o.get("verification") or {}
        r["ok"][which] &= bool(v.get("passed", c["name"].startswith("vendor")))
print(f"{'shape':24} {'kernel':92} {'old us':>8} {'new us':>8} {'new/old':>8}  verify")
for (case, name), r in sorted(rows.items()):
    if not r["old"] or not r["new"]:
        print(f"{r['label'][:24]:24} {name[:92]:92} missing")
        continue
    o, n = statistics.median(r["old"]), statistics.median(r["new"])
    ok = "both" if r["ok"]["old"] and r["ok"]["new"] else f"old={r['ok']['old']} new={r['ok']['new']}"
    print(f"{r['label'][:24]:24} {name[:92]:92} {o:8.1f} {n:8.1f} {n / o:8.3f}  {ok}")
PY
