#!/usr/bin/env bash
# Runs the shape suite (docs/shapes.md) on a GPU: for every shape, a bounded sweep of kernels and
# the vendor library in the same run, every kernel verified against the reference. Prints, per
# shape, the best config, its time, the vendor time, the ratio and the roofline percentages.
#
# usage: scripts/shape-suite.sh [GEMMTUNE_BINARY] [OUT_DIR]   (env: BACKEND, MAX_CONFIGS, SHAPES)
set -euo pipefail
BIN="${1:-target/release/gemmtune}"
OUT="${2:-shape-suite-out}"
BACKEND="${BACKEND:-auto}"
MAX_CONFIGS="${MAX_CONFIGS:-120}"
mkdir -p "$OUT"
SHAPES="${SHAPES:-16032x109x16384 16032x113x16384 6144x64x4096 4096x128x4096 28672x32x4096 4096x128x14336 10240x128x8192 8192x64x8192 57344x16x8192 8192x256x28672 37888x64x3584 3584x64x18944 128256x32x4096 4096x4096x4096 8192x8192x8192}"
for s in $SHAPES; do
  IFS=x read -r M N K <<<"$s"
  echo "== $s" >&2
  "$BIN" bench --backend "$BACKEND" --m "$M" --n "$N" --k "$K" --sweep --max-configs "$MAX_CONFIGS" \
    --retime 3 --json ${EXTRA_ARGS:-} >"$OUT/$s.json" 2>"$OUT/$s.log" || { echo "   failed: $(tail -n 3 "$OUT/$s.log")" >&2; }
done
python3 - "$OUT" $SHAPES <<'PY'
import json, math, os, sys
out, shapes = sys.argv[1], sys.argv[2:]
rows, skinny = [], []
print(f"{'shape':>18} {'best config':<82} {'us':>8} {'vendor us':>9} {'ratio':>6} {'GB/s':>5} {'TFLOP/s':>7} {'%roof':>5} {'verified':>8}")
for s in shapes:
    p = os.path.join(out, s + ".json")
    try:
        j = json.load(open(p))
    except Exception as e:
        print(f"{s:>18} (no result: {e})"); continue
    summ, dev, prob = j["summary"], j["device"], j["problem"]
    w = next((c for c in j["configs"] if c["name"] == summ["winner"]), None)
    v = j["vendor"]
    if w is None or v is None or summ["vendor_median_us"] is None:
        print(f"{s:>18} (no verified winner)"); continue
    t, vt = summ["winner_median_us"], summ["vendor_median_us"]
    ratio = vt / t
    # Memory and compute rooflines from the spec, as the bench reported them.
    spec = j["hw_spec"]
    gbps = w["rates"]["gbps"]; tflops = w["rates"]["tflops"]
    ver = w["outcome"]["verification"]
    ok = "pass" if ver["passed"] else "FAIL"
    m, n, k = (int(x) for x in s.split("x"))
    print(f"{s:>18} {w['name']:<82} {t:8.1f} {vt:9.1f} {ratio:6.3f} {gbps:5.0f} {tflops:7.0f} {w['rates']['roofline_pct']:5.1f} {ok:>8}")
    rows.append((s, ratio))
    if n <= 256:
        skinny.append(ratio)
if skinny:
    g = math.exp(sum(math.log(r) for r in skinny) / len(skinny))
    print(f"skinny shapes: {len(skinny)}, geometric-mean speed vs vendor {g:.3f}x, min {min(skinny):.3f}x")
print("GB/s: compulsory bytes / time; %roof: datasheet roofline bound / time")
PY
