#!/usr/bin/env bash
# Does the default search (the model-based one once the database holds other shapes) reach
# its best sooner than the pattern search on a real GPU? Trains one database with `gemmtune
# tune` on the TRAIN shapes, then tunes each TEST shape (absent from it) twice, on copies of
# it: `--strategy pattern` and the default. Prints per test shape the evaluations each needed
# to come within 2% of the better of the two final bests, and both bests.
#
#   scripts/search-on-gpu.sh BIN OUT       env: EVALS (per test tune, 40), BACKEND (cuda; sim to try it),
#                                          TESTS (a file of test shapes, one line of problem flags each)
# An OUT that already holds train.sqlite keeps it (the training is not run again), so the test
# shapes can be split over several runs against one training.
set -uo pipefail
BIN=$1
OUT=$2
mkdir -p "$OUT"
TRAIN=(
  "--m 4096 --n 128 --k 14336"
  "--m 8192 --n 64 --k 8192"
  "--m 10240 --n 128 --k 8192"
  "--m 16032 --n 260 --k 16384"
  "--m 3584 --n 109 --k 18944"
)
TEST=(
  "--m 3584 --n 160 --k 18944"
  "--m 6144 --n 96 --k 4096"
  "--m 16032 --n 320 --k 16384"
)
if [ -n "${TESTS:-}" ]; then
  mapfile -t TEST < <(grep -v '^[[:space:]]*\(#\|$\)' "$TESTS")
fi
[ -s "$OUT/train.sqlite" ] && TRAIN=()
for t in "${TRAIN[@]}"; do
  # shellcheck disable=SC2086
  "$BIN" tune --backend "${BACKEND:-cuda}" $t --max-evals 24 --db "$OUT/train.sqlite" --out "$OUT/train" -q >/dev/null 2>>"$OUT/train.log" ||
    echo "train $t failed" >&2
done
i=0
for t in "${TEST[@]}"; do
  i=$((i + 1))
  for s in pattern default; do
    cp "$OUT/train.sqlite" "$OUT/$s$i.sqlite"
    # shellcheck disable=SC2086
    "$BIN" tune --backend "${BACKEND:-cuda}" $t --strategy "$s" --max-evals "${EVALS:-40}" --json --db "$OUT/$s$i.sqlite" \
      --out "$OUT/run-$s$i" >"$OUT/$s$i.json" 2>"$OUT/$s$i.log" || echo "test $t $s failed" >&2
  done
  python3 - "$OUT/pattern$i.json" "$OUT/default$i.json" "$t" <<'PY'
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:3]]
best = min(min(e["best_us"] for e in r["trace"]) for r in runs)
def reach(r):
    return next((e["evaluations"] for e in r["trace"] if e["best_us"] <= best * 1.02), None)
p, d = runs
print(f"{p['problem_label']:>26}: within 2% of {best:.1f} us after pattern {reach(p)} / "
      f"default ({d['strategy']}) {reach(d)} evaluations; bests {min(e['best_us'] for e in p['trace']):.1f} / "
      f"{min(e['best_us'] for e in d['trace']):.1f} us, cuBLASLt {d['vendor_median_us']:.1f}")
PY
done
