#!/usr/bin/env bash
# GPU check of the GEMV path (Gemv=1, N up to 8): on edge shapes of every layout and input
# type (odd M and K, unaligned leading dimensions, batches, beta, f32 and 8-bit inputs), a
# bounded sweep of GEMV kernels (split-K by reduction and by atomics included) is run with
# `gemmtune bench --backend cuda`: every kernel is verified against the GPU reference and
# timed beside cuBLASLt. Prints one line per shape and `FAILED` for any kernel that did not
# verify; exits 1 if any did.
#
#   scripts/gpu-gemv.sh BIN OUT        env: MAXC (kernels per shape, 16)
set -uo pipefail
BIN=$1
OUT=$2
mkdir -p "$OUT"
status=0
i=0
while IFS= read -r flags; do
  [[ -z "$flags" || "$flags" == \#* ]] && continue
  i=$((i + 1))
  # shellcheck disable=SC2086
  timeout 180 "$BIN" bench --backend cuda $flags --sweep --fix Gemv=1 --fix GlobalSplitU=1,3 \
    --max-configs "${MAXC:-16}" --json --db "$OUT/gemv.sqlite" >"$OUT/v$i.json" 2>"$OUT/v$i.log"
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
done <<'SHAPES'
--m 1000 --n 3 --k 777 --transA T --transB N --beta 0.5 --batch_count 2
--m 4096 --n 8 --k 4096 --transA T --transB T --a_type f16_r --b_type f16_r --c_type f16_r --d_type f16_r
--m 333 --n 5 --k 1000 --transA N --transB T --a_type f16_r --b_type f16_r --c_type f32_r --d_type f32_r --beta 1 --batch_count 3
--m 4100 --n 1 --k 4096 --transA N --transB N
--m 2048 --n 2 --k 2050 --a_type f32_r --b_type f32_r --c_type f32_r --d_type f32_r
--m 4096 --n 8 --k 4096 --a_type f8_r --b_type f8_r
--m 4096 --n 1 --k 4096 --transA N --transB N --a_type f8_r --b_type bf8_r
--m 4096 --n 4 --k 4096 --fix MatrixInstruction=16x8x16
--m 1000 --n 7 --k 1000 --fix MatrixInstruction=16x8x16 --beta 0.5 --batch_count 2
--m 14336 --n 8 --k 4096 --a_type f16_r --b_type f16_r --c_type f16_r --d_type f16_r --fix MatrixInstruction=16x8x16
SHAPES
exit $status
