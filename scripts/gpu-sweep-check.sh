#!/usr/bin/env bash
# GPU check of a kernel family on edge shapes: for each line of a shapes file (the flags of one
# `gemmtune bench`, with the `--fix` that picks the family), a bounded sweep runs with
# `gemmtune bench --backend cuda`: every kernel is verified against the GPU reference and
# timed beside cuBLASLt. Prints one line per shape and `FAILED` for any kernel that did not
# verify; exits 1 if any did. The shape files: scripts/check-gemv.txt (the GEMV path, every
# layout and input type), scripts/check-persistent.txt (persistent kernels, swapped and not),
# scripts/check-ping-pong.txt (the ping-pong persistent kernel, PersistentKernel=2),
# scripts/check-persistent-stream-k.txt (its stream-K, PersistentKernel=1 with GSU1S),
# scripts/check-producer-warpgroup.txt (with a producer warpgroup, ProducerWarp=2); DEVELOPERS.md
# lists the others.
#
#   scripts/gpu-sweep-check.sh BIN OUT SHAPES      env: MAXC (kernels per shape, 16)
set -uo pipefail
BIN=$1
OUT=$2
SHAPES=$3
mkdir -p "$OUT"
status=0
i=0
while IFS= read -r flags; do
  [[ -z "$flags" || "$flags" == \#* ]] && continue
  i=$((i + 1))
  # shellcheck disable=SC2086
  timeout 180 "$BIN" bench --backend cuda $flags --sweep --max-configs "${MAXC:-16}" --json \
    --db "$OUT/check.sqlite" >"$OUT/v$i.json" 2>"$OUT/v$i.log"
  python3 - "$OUT/v$i.json" "$flags" <<'PY' || status=1
import json, sys
path, flags = sys.argv[1], sys.argv[2]
try:
    d = json.load(open(path))
except Exception as e:
    print(f"FAILED {flags}: no result ({e})")
    sys.exit(1)
rows = d["configs"]
bad = [r["name"] for r in rows if not ((r["outcome"].get("verification") or {}).get("passed"))]
times = sorted(r["stats"]["median_us"] for r in rows if r.get("stats"))
vendor = ((d.get("vendor") or {}).get("stats") or {}).get("median_us")
print(f"{d['problem_label']:>28}: {len(rows) - len(bad)}/{len(rows)} verified, best {times[0] if times else float('nan'):.1f} us, cuBLASLt {vendor or float('nan'):.1f} us")
for b in bad:
    print(f"FAILED {flags}: {b}")
sys.exit(1 if bad or not rows else 0)
PY
done <"$SHAPES"
exit $status
