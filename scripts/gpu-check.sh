#!/usr/bin/env bash
# Final check on an NVIDIA GPU: benchmarks the seed shapes and edge shapes in all four layouts
# with `gemmtune bench --backend cuda` (every kernel verified against the GPU reference, cuBLASLt
# timed in the same run), checks that planted failures are isolated, verifies stream-K kernels
# on every path and edge shape, verifies warpgroup kernels with the producer warp and with the
# transposed tile (SwapAB), then cross-checks cuBLAS's time for the seed shape with PyTorch's
# torch.nn.functional.linear. Where the CLI has no `bench` command yet, it runs the GPU smoke
# tests instead.
#
# Usage: scripts/gpu-check.sh [path/to/gemmtune] [path/to/cuda_smoke-test-binary]
set -euo pipefail

GEMMTUNE=${1:-target/release/gemmtune}
SMOKE=${2:-}
export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64:${LD_LIBRARY_PATH:-}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

# M N K layout type beta: the seed shapes, then edges (N and K not multiples of any tile,
# unaligned leading dimensions, beta != 0, f32 on the FMA path).
SHAPES=(
  "16032 109 16384 TN bf16_r 0"
  "16032 113 16384 TN bf16_r 0"
)
for layout in NN NT TN TT; do
  SHAPES+=("200 113 5 $layout bf16_r 0" "333 109 77 $layout bf16_r 0.5" "1000 520 1100 $layout f16_r 1" "96 80 64 $layout f32_r 0.25")
done

if "$GEMMTUNE" bench --help >/dev/null 2>&1; then
  status=0
  for s in "${SHAPES[@]}"; do
    read -r m n k layout t beta <<<"$s"
    echo "== $m x $n x $k $layout $t beta=$beta"
    "$GEMMTUNE" bench --backend cuda -m "$m" -n "$n" -k "$k" \
      --transA "${layout:0:1}" --transB "${layout:1:1}" \
      --a_type "$t" --b_type "$t" --c_type "$t" --d_type "$t" --compute_type c_f32_r \
      --beta "$beta" || status=1
  done
elif [[ -n "$SMOKE" && -x "$SMOKE" ]]; then
  echo "gemmtune has no bench command: running the GPU smoke tests"
  status=0
  "$SMOKE" --include-ignored --nocapture --test-threads=1 || status=$?
else
  echo "neither \`$GEMMTUNE bench\` nor a smoke-test binary is available" >&2
  exit 2
fi

# Planted failures on the real GPU: a kernel that writes out of bounds (a sticky illegal
# address: the worker dies and restarts), one that spins forever (killed after --timeout), one
# that computes a wrong result and one that does not compile. Each must fail alone, with its
# reason, while the other kernel of the run is measured.
if "$GEMMTUNE" bench --help >/dev/null 2>&1; then
  OK_CFG=MT64x64x32_MI16x8x16_WG2x2_PGR2_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0
  for kind in oob hang wrong compile; do
    BAD_CFG=MT128x64x32_MI16x8x16_WG2x2_PGR2_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0
    echo "== planted $kind"
    "$GEMMTUNE" bench --backend cuda -m 1024 -n 64 -k 512 --plant "MT128x64x32=$kind" --timeout 10 \
      --config "$BAD_CFG" --config "$OK_CFG" --retime 0 --force --json > /tmp/planted.json || status=1
    python3 - "$kind" <<'PY' || status=1
import json, sys
kind = sys.argv[1]
j = json.load(open("/tmp/planted.json"))
rows = {r["name"]: r for r in j["configs"]}
bad = [r for n, r in rows.items() if n.startswith("MT128x64x32")][0]
good = [r for n, r in rows.items() if n.startswith("MT64x64x32")][0]
want = {"oob": "launch_failed", "hang": "timeout", "wrong": "wrong_result", "compile": "compile_failed"}[kind]
got = bad["outcome"]["status"]
print(f"planted {kind}: {got} (want {want}); other kernel: {good['outcome']['status']}; reason: {str(bad['outcome'])[:160]}")
sys.exit(0 if got == want and good["outcome"]["status"] == "timed" else 1)
PY
  done
fi

# Stream-K (GSU<n>S: persistent workgroups, tiles shared between workgroups summed in the
# kernel by the last to finish): every config of a small sweep with the algorithm fixed, on the
# edge shapes in all four layouts (mma.sync and FMA atoms), then the warpgroup (wgmma) path on
# aligned TN shapes, batched and with beta, where the producer-warp kernels are checked too.
# Every kernel must verify.
if "$GEMMTUNE" bench --help >/dev/null 2>&1; then
  # Runs `bench --json` with the given arguments; every kernel must verify, there must be
  # `want` of them, and each must have config[field] == value (a JSON literal). With RETIME=n
  # the n fastest are launched, verified and timed once more after all the others.
  all_verified() {  # want field value, then bench arguments
    local want=$1 field=$2 value=$3; shift 3
    "$GEMMTUNE" bench --backend cuda --retime "${RETIME:-0}" --no-vendor --json "$@" > /tmp/checked.json || return 1
    python3 - "$want" "$field" "$value" "$*" <<'PY'
import json, sys
want, field, value, what = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
rows = json.load(open("/tmp/checked.json"))["configs"]
ok = [r for r in rows if r["outcome"].get("status") == "timed" and r["outcome"].get("verification", {}).get("passed")]
mine = [r for r in rows if r["config"].get(field) == value]
atoms = sorted({"x".join(map(str, r["config"]["mi"])) for r in rows})
print(f"{field}={value} {what}: {len(ok)}/{len(rows)} verified, {len(mine)} with {field}={value}, atoms {atoms}")
for r in rows:
    if r not in ok:
        print(f"  FAILED {r['name']}: {str(r['outcome'])[:200]}")
sys.exit(0 if len(rows) == want and len(ok) == want and len(mine) == want else 1)
PY
  }
  for layout in NN NT TN TT; do
    for s in "200 113 5 bf16_r 0 1" "333 109 77 bf16_r 0.5 1" "1000 520 1100 f16_r 1 3" "96 80 64 f32_r 0.25 1"; do
      read -r m n k t beta b <<<"$s"
      all_verified 6 gsu_algo '"StreamK"' -m "$m" -n "$n" -k "$k" --transA "${layout:0:1}" --transB "${layout:1:1}" \
        --a_type "$t" --b_type "$t" --c_type "$t" --d_type "$t" --compute_type c_f32_r --beta "$beta" \
        --batch_count "$b" --sweep --fix GlobalSplitUAlgorithm=2 --fix GlobalReadVectorWidth=1,2,4 \
        --fix MacroTile0=16,32,64,128,256 --fix SwapAB=0 \
        --fix StoreVectorWidth=1,2,4 --max-configs 6 || status=1
    done
  done
  # Split-K summed in the main kernel (GSU<n>K: the split of a tile that finishes last adds
  # the others' partials): a small sweep on edge shapes in all four layouts, every kernel
  # verified twice, the second time after every kernel's timed launches (the flags must be
  # clean again after every launch).
  for layout in NN NT TN TT; do
    for s in "200 113 40 bf16_r 0 1" "1000 520 1100 f16_r 1 3" "96 80 200 f32_r 0.25 1"; do
      read -r m n k t beta b <<<"$s"
      RETIME=4 all_verified 4 gsu_algo '"SingleKernel"' -m "$m" -n "$n" -k "$k" --transA "${layout:0:1}" --transB "${layout:1:1}" \
        --a_type "$t" --b_type "$t" --c_type "$t" --d_type "$t" --compute_type c_f32_r --beta "$beta" \
        --batch_count "$b" --sweep --fix GlobalSplitUAlgorithm=3 --fix GlobalSplitU=2,3,4 --fix GlobalReadVectorWidth=1,2,4 \
        --fix SwapAB=0 --fix StoreVectorWidth=1,2,4 --max-configs 4 || status=1
    done
  done
  WG=MI64x8x16
  SK=(--config "MT128x112x64_${WG}_WG8x1_PGR5_PLR0_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0"
      --config "MT64x64x64_${WG}_WG4x1_PGR4_PLR0_LPA0_LPB0_SW1_GSU2S_WGM8_GRVW8_SVW8_SU0"
      --config "MT128x128x64_${WG}_WG8x1_PGR5_PLR1_LPA0_LPB0_SW1_GSU1S_WGM4_GRVW8_SVW8_SU0")
  # Warpgroup kernels with the producer warp (ProducerWarp=1, `_PW1`): one and two
  # warpgroups along M and N, one and two stages in the tensor cores, split-K of both kinds.
  PW=(--config "MT64x64x64_${WG}_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU1_WGM2_GRVW8_SVW8_SU0_PW1"
      --config "MT128x112x64_${WG}_WG8x1_PGR5_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1"
      --config "MT128x128x64_${WG}_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM4_GRVW8_SVW8_SU0_PW1"
      --config "MT64x128x64_${WG}_WG4x1_PGR8_PLR0_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW8_SU0_PW1"
      --config "MT128x64x64_${WG}_WG8x1_PGR3_PLR1_LPA0_LPB0_SW1_GSU3A_WGM8_GRVW8_SVW8_SU0_PW1")
  # Swapped warpgroup kernels (SwapAB=1, `_SAB1`: the instruction's slices along N, M tiles
  # in steps of 16): one and two warpgroups along M and N, with and without the producer warp,
  # split-K of all three kinds.
  SAB=(--config "MT80x128x64_${WG}_WG4x2_PGR6_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_SAB1"
       --config "MT48x128x64_${WG}_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_SAB1"
       --config "MT224x64x64_${WG}_WG4x1_PGR5_PLR1_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW8_SU0_PW1_SAB1"
       --config "MT128x128x64_${WG}_WG8x1_PGR5_PLR0_LPA0_LPB0_SW1_GSU3A_WGM4_GRVW8_SVW8_SU0_SAB1"
       --config "MT112x64x64_${WG}_WG4x1_PGR4_PLR0_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0_SAB1")
  # M tiles that are not powers of two on the mma.sync path too (the epilogue's LDS permutation
  # must stay inside the tile).
  MT48=(--config "MT48x64x32_MI16x8x16_WG1x2_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0"
        --config "MT48x128x64_${WG}_WG4x1_PGR4_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_SAB1")
  # Pipelines deeper than 8 stages, rings whose size is not a power of two: with and without
  # the producer warp, swapped, split-K and stream-K.
  DEEP=(--config "MT64x64x64_${WG}_WG4x1_PGR13_PLR1_LPA0_LPB0_SW1_GSU1_WGM4_GRVW8_SVW4_SU0_PW1"
        --config "MT48x64x64_${WG}_WG4x1_PGR16_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_SAB1"
        --config "MT64x64x64_${WG}_WG4x1_PGR11_PLR0_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW8_SU0"
        --config "MT64x64x64_${WG}_WG4x1_PGR10_PLR1_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0")
  # Warpgroup kernels summing their split partials in the main kernel: with and without the
  # producer warp, swapped, two to four splits.
  ONE=(--config "MT128x64x64_${WG}_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU2K_WGM1_GRVW8_SVW8_SU0_PW1"
       --config "MT64x64x64_${WG}_WG4x1_PGR6_PLR1_LPA0_LPB0_SW1_GSU3K_WGM8_GRVW8_SVW4_SU0"
       --config "MT48x64x64_${WG}_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU2K_WGM8_GRVW4_SVW8_SU0_PW1_SAB1"
       --config "MT128x128x64_${WG}_WG8x1_PGR5_PLR1_LPA0_LPB0_SW1_GSU4K_WGM8_GRVW8_SVW8_SU0_PW1")
  for s in "336 109 776 bf16_r 0.5 1" "1000 520 1104 f16_r 1 3" "4096 128 4096 bf16_r 0 2" "16032 109 16384 bf16_r 0 1"; do
    read -r m n k t beta b <<<"$s"
    common=(-m "$m" -n "$n" -k "$k" --transA T --transB N --a_type "$t" --b_type "$t" --c_type "$t"
      --d_type "$t" --compute_type c_f32_r --beta "$beta" --batch_count "$b")
    all_verified 3 gsu_algo '"StreamK"' "${common[@]}" "${SK[@]}" || status=1
    all_verified 5 pw 1 "${common[@]}" "${PW[@]}" || status=1
    all_verified 5 sab 1 "${common[@]}" "${SAB[@]}" || status=1
    all_verified 2 mt0 48 "${common[@]}" "${MT48[@]}" || status=1
    all_verified 4 mt1 64 "${common[@]}" "${DEEP[@]}" || status=1
    RETIME=4 all_verified 4 gsu_algo '"SingleKernel"' "${common[@]}" "${ONE[@]}" || status=1
  done
fi

# cuBLAS through PyTorch on the seed shape: D^T = B^T A (linear(x=B^T, W=A^T)), bf16.
python3 - <<'PY' || echo "PyTorch cross-check skipped (no torch with CUDA)"
import torch
M, N, K = 16032, 109, 16384
w = torch.randn(M, K, dtype=torch.bfloat16, device="cuda")   # A stored K x M, transA = T
x = torch.randn(N, K, dtype=torch.bfloat16, device="cuda")   # B stored K x N, transB = N
for _ in range(5):
    torch.nn.functional.linear(x, w)
torch.cuda.synchronize()
start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for _ in range(50):
    torch.nn.functional.linear(x, w)
stop.record()
torch.cuda.synchronize()
us = start.elapsed_time(stop) * 1000 / 50
print(f"torch.nn.functional.linear {M}x{N}x{K} bf16: {us:.1f} us ({(M*K + N*K + M*N) * 2 / us / 1e3:.0f} GB/s)")
PY
exit "$status"
