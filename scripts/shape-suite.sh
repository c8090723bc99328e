#!/usr/bin/env bash
# Runs the shape suite (docs/shapes.md) on a GPU. For every shape gemmtune searches the kernel
# space (MODE=tune, the default: `gemmtune tune`, every kernel verified, the winner re-timed and
# verified again beside the vendor library) or sweeps a bounded space (MODE=sweep: `gemmtune
# bench --sweep`). Prints, per shape, the best config, its time, the vendor time measured in the
# same run, the ratio, the rates and whether the winner passed verification.
#
# usage: scripts/shape-suite.sh [GEMMTUNE_BINARY] [OUT_DIR]
#   env: MODE (tune|sweep), BACKEND (default auto), MAX_CONFIGS (sweep, default 120),
#        MAX_EVALS (tune, default 160), SHAPES (override the list), EXTRA_ARGS
set -euo pipefail
BIN="${1:-target/release/gemmtune}"
OUT="${2:-shape-suite-out}"
MODE="${MODE:-tune}"
BACKEND="${BACKEND:-auto}"
mkdir -p "$OUT"
SHAPES="${SHAPES:-16032x109x16384 16032x113x16384 6144x64x4096 4096x128x4096 28672x32x4096 4096x128x14336 10240x128x8192 8192x64x8192 57344x16x8192 8192x256x28672 37888x64x3584 3584x64x18944 128256x32x4096 4096x4096x4096 8192x8192x8192}"
for s in $SHAPES; do
  IFS=x read -r M N K <<<"$s"
  echo "== $s" >&2
  if [ "$MODE" = sweep ]; then
    "$BIN" bench --backend "$BACKEND" --m "$M" --n "$N" --k "$K" --sweep --max-configs "${MAX_CONFIGS:-120}" \
      --retime 3 --json ${EXTRA_ARGS:-} >"$OUT/$s.json" 2>"$OUT/$s.log" || echo "   failed: $(tail -n 3 "$OUT/$s.log")" >&2
  else
    "$BIN" tune --backend "$BACKEND" --m "$M" --n "$N" --k "$K" --max-evals "${MAX_EVALS:-160}" \
      --out "$OUT/$s.run" --json ${EXTRA_ARGS:-} >"$OUT/$s.json" 2>"$OUT/$s.log" || echo "   failed: $(tail -n 3 "$OUT/$s.log")" >&2
  fi
done
python3 "$(dirname "$0")/suite_table.py" "$OUT" $SHAPES
