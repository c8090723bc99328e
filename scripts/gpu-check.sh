#!/usr/bin/env bash
# Final check on an NVIDIA GPU: benchmarks the seed shapes and edge shapes in all four layouts
# with `gemmtune bench --backend cuda` (every kernel verified against the GPU reference, cuBLASLt
# timed in the same run), then cross-checks cuBLAS's time for the seed shape with PyTorch's
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
