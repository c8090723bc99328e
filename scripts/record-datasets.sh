#!/usr/bin/env bash
# Records the replay datasets under datasets/ (run on a GPU machine): exhaustive sweeps of
# bounded spaces, every config verified, the vendor library in each header. The hard set is
# chosen where a search has work to do (the default config is not the best): other layouts
# (NN, NT, TT bf16), fp8 e4m3 TN, N just past a tile multiple, GEMV (N = 1 and 4), small M
# with long K, batched (8 x 2048^3 and an attention-like 32 x 256x256x128), f32, and mid-size
# GEMMs whose last wave of tiles is partial (bf16 TN and NN, e4m3, f32 read as tf32).
#
# Each dataset gets its provenance twice: in its header (`provenance`: date, command, version;
# `device`: name, driver, compiler) and beside it in NAME.provenance.json (the GPU and driver
# as nvidia-smi reports them, the date, the command, the gemmtune version and git commit, and
# how long the sweep took). A dataset the binary cannot run (no kernel for its types or
# layout) is skipped with the reason; rerun the script once the kernels exist. Each sweep is
# bounded by its --fix list (60 to 202 configs, about 1100 in all) and by MAX_CONFIGS,
# so the hard set takes a few minutes on an H100.
#
# The AMD space is recorded in the simulator (`SETS=amd`, no GPU needed; committed as
# datasets/sim_mi300x_*): the MI300X spec's MFMA instructions, wave64 and 64 KiB of LDS make a
# space of its own, which a search learns across the AMD shapes.
#
# usage: scripts/record-datasets.sh [GEMMTUNE_BINARY] [OUT_DIR]
#   env: SETS    hard (default), seed (the two original datasets), amd (simulated MI300X),
#                or all (the three GPU sets; amd is separate as it needs no GPU)
#        ONLY    space-separated dataset names to record (default: the whole set)
#        BACKEND cuda (default), or sim with HW_SPEC=hw_specs/....toml for a simulated preview
#        MAX_CONFIGS  cap per dataset (default 256; half ranked by the model, half random)
#        GIT_COMMIT   the commit to record where the tree has no .git (default: git rev-parse HEAD)
set -uo pipefail
BIN="${1:-target/release/gemmtune}"
OUT="${2:-datasets}"
SETS="${SETS:-hard}"
BACKEND="${BACKEND:-cuda}"
MAX_CONFIGS="${MAX_CONFIGS:-256}"
mkdir -p "$OUT"
backend_args=(--backend "$BACKEND")
if [ -n "${HW_SPEC:-}" ]; then backend_args+=(--hw-spec "$HW_SPEC"); fi

recorded=() skipped=() failed=()

# provenance NAME SECONDS COMMAND...: writes OUT/NAME.provenance.json
provenance() {
  local name="$1" secs="$2"; shift 2
  local gpu="" driver="" cuda=""
  if [ "$BACKEND" != sim ] && command -v nvidia-smi >/dev/null 2>&1; then
    gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
    driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)"
    cuda="$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1)"
  elif [ "$BACKEND" = sim ]; then
    gpu="simulated $(basename "${HW_SPEC:-h200}" .toml)"; driver="sim"
  fi
  python3 - "$OUT/$name.provenance.json" "$name" "$gpu" "$driver" "$cuda" "$secs" \
    "$("$BIN" --version 2>/dev/null)" "${GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}" "$@" <<'PY'
import json, sys, datetime
path, name, gpu, driver, cuda, secs, version, commit, *command = sys.argv[1:]
json.dump({
    "dataset": name + ".jsonl",
    "device": gpu, "driver": driver, "cuda": cuda,
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "command": " ".join(command),
    "gemmtune": version, "git_commit": commit, "seconds": float(secs),
}, open(path, "w"), indent=2)
open(path, "a").write("\n")
PY
}

# record NAME PROBLEM_ARGS FIX_ARGS
record() {
  local name="$1" problem="$2" fixes="$3"
  if [ -n "${ONLY:-}" ] && ! [[ " $ONLY " == *" $name "* ]]; then return; fi
  local cmd=("$BIN" sweep "${backend_args[@]}" $problem $fixes --max-configs "$MAX_CONFIGS"
             --out "$OUT/$name.jsonl")
  echo "== $name: ${cmd[*]}" >&2
  local start end log="$OUT/.$name.log"
  start=$(date +%s.%N)
  "${cmd[@]}" >"$log" 2>&1
  local rc=$?
  end=$(date +%s.%N)
  local secs; secs=$(python3 -c "print(round($end - $start, 1))")
  if [ $rc -eq 0 ]; then
    provenance "$name" "$secs" "${cmd[@]}"
    echo "   $(tail -n 2 "$log" | tr '\n' ' ') [${secs} s]" >&2
    recorded+=("$name")
    rm -f "$log"
  elif [ $rc -eq 2 ] && grep -qiE "no valid config|unsupported|not supported" "$log"; then
    # Usage-level refusal: the binary has no kernel for this problem yet.
    echo "   skipped: $(grep -iE "no valid config|unsupported|not supported" "$log" | head -n 1)" >&2
    skipped+=("$name")
    rm -f "$OUT/$name.jsonl" "$log"
  else
    echo "   FAILED (exit $rc), log in $log: $(tail -n 3 "$log" | tr '\n' ' ')" >&2
    failed+=("$name")
  fi
}

BF16_TN_WGMMA="--fix DepthU=64 --fix WG1=1 --fix PLR=1 --fix SW=1"

if [ "$SETS" = seed ] || [ "$SETS" = all ]; then
  record seed_16032x109x16384_tn_bf16 "--m 16032 --n 109 --k 16384" \
    "--fix MT0=64,128,256 --fix MT1=112,128 --fix DepthU=64 --fix WG0=2,4,8 --fix WG1=1 --fix PGR=3,4,6 --fix PLR=0,1 --fix GSU=1,2,4 --fix GSUAlgo=1"
  record square_4096_tn_bf16 "--m 4096 --n 4096 --k 4096" \
    "--fix MT0=128,256 --fix MT1=128,256 --fix DepthU=64 --fix WG0=4,8 --fix WG1=1,2 --fix PGR=3,4,6 --fix PLR=0,1 --fix GSU=1"
fi

if [ "$SETS" = hard ] || [ "$SETS" = all ]; then
  # Other layouts: the warp-level (mma.sync) path with padded and swizzled LDS, and the
  # warpgroup path where it takes the layout. About 90 configs each.
  LAYOUT="--fix MT0=64,128,256 --fix MT1=64,128,256 --fix DepthU=64 --fix WG0=2,4 --fix WG1=2 --fix PGR=3,4 --fix PLR=1 --fix GSU=1 --fix GSUAlgo=1 --fix SAB=0"
  record nn_8192x1024x4096_bf16 "--m 8192 --n 1024 --k 4096 --transA N --transB N" "$LAYOUT"
  record nt_4096x2048x8192_bf16 "--m 4096 --n 2048 --k 8192 --transA N --transB T" "$LAYOUT"
  record tt_2048x8192x4096_bf16 "--m 2048 --n 8192 --k 4096 --transA T --transB T" "$LAYOUT"
  # fp8 e4m3 in, bf16 out, TN, on the warpgroup path (one 128-byte swizzle row of K per
  # stage). 96 configs.
  record tn_8192x8192x8192_f8 "--m 8192 --n 8192 --k 8192 --a_type f8_r --b_type f8_r" \
    "--fix MT0=128,256 --fix MT1=128,256 --fix DepthU=128 --fix WG0=4,8 --fix WG1=1,2 --fix PGR=3,4,6 --fix PLR=1 --fix GSU=1 --fix GSUAlgo=1 --fix PW=0,1 --fix SW=1"
  # N just past a tile multiple (260 = 256 + 4): N tiles of 96, 128 and 144 pad differently.
  # 74 configs.
  record tn_16032x260x16384_bf16 "--m 16032 --n 260 --k 16384" \
    "--fix MT0=64,128,192,256 --fix MT1=96,128,144 --fix WG0=4,8 --fix PGR=4,6 --fix GSU=1,2 --fix GSUAlgo=3 --fix PW=1 --fix SAB=0,1 $BF16_TN_WGMMA"
  # GEMV: N = 1 and N = 4, swapped and unswapped warpgroup tiles, stream-K and in-kernel split
  # sums. 78 and 60 configs.
  record gemv_4096x1x4096_bf16 "--m 4096 --n 1 --k 4096" \
    "--fix MT0=32,48,64,128 --fix MT1=64 --fix DepthU=64,128 --fix WG0=4 --fix WG1=1 --fix PGR=8,12 --fix PLR=1 --fix GSU=1,2,4 --fix GSUAlgo=2,3 --fix PW=0,1 --fix SAB=0,1 --fix SW=1"
  record gemv_14336x4x4096_bf16 "--m 14336 --n 4 --k 4096" \
    "--fix MT0=48,64,96,128 --fix MT1=64 --fix DepthU=64,128 --fix WG0=4 --fix WG1=1 --fix PGR=8,12 --fix PLR=1 --fix GSU=1,2,4 --fix GSUAlgo=2,3 --fix PW=0,1 --fix SAB=0,1 --fix SW=1"
  # Small M, long K: split-K kinds (reduction kernel, in-kernel sum) against none. 90 configs.
  record smallm_3584x128x18944_bf16 "--m 3584 --n 128 --k 18944" \
    "--fix MT0=48,64,128 --fix MT1=64,128 --fix WG0=4 --fix PGR=4,8 --fix GSU=1,2,4 --fix GSUAlgo=1,3 --fix PW=1 --fix SAB=0,1 $BF16_TN_WGMMA"
  # Batched: 8 x 2048^3 (104 configs) and an attention-like 32 x 256x256x128 (73 configs).
  record batched_8x2048x2048x2048_bf16 "--m 2048 --n 2048 --k 2048 --batch_count 8" \
    "--fix MI=64x8x16 --fix MT0=128,256 --fix MT1=128,256 --fix WG0=4,8 --fix WG1=1,2 --fix PGR=3,4,6 --fix GSU=1 --fix PW=0,1 --fix DepthU=64 --fix PLR=1 --fix SW=1"
  record attn_32x256x256x128_bf16 "--m 256 --n 256 --k 128 --batch_count 32" \
    "--fix MT0=64,128,256 --fix MT1=64,128,256 --fix DepthU=64 --fix WG0=4 --fix WG1=2 --fix PGR=2,3,4 --fix PLR=1 --fix GSU=1 --fix PW=0 --fix SW=1"
  # f32 in and out: the FMA path (MN-major LDS tiles, up to 128 outputs per lane). 202 configs.
  record tn_4096x4096x4096_f32 "--m 4096 --n 4096 --k 4096 --a_type f32_r --b_type f32_r --c_type f32_r --d_type f32_r" \
    "--fix MT0=128,256 --fix MT1=64,128 --fix DepthU=16,32 --fix WG0=1,2,4 --fix WG1=1,2,4 --fix PGR=2,3 --fix PLR=0,1 --fix GSU=1 --fix LPA=4 --fix LPB=4"
  # Mid-size (10-40 us): how the last wave of tiles fills the GPU sets the time, so tile
  # widths that fill their waves (128x144 makes 261 tiles of 1152x4096, 1.98 waves of 132) and
  # the persistent kernel compete with the default's 128x256 data-parallel tiles. The same
  # space in bf16 TN, NN (3072x1024x3072), e4m3 and f32 read as tf32. 50 to 70 configs each.
  MID="--fix WG0=4,8 --fix WG1=1 --fix PLR=1 --fix GSU=1 --fix GSUAlgo=1 --fix PW=0,1 --fix PersistentKernel=0,1 --fix SAB=0 --fix SW=1"
  MID_N="--fix MT0=128,256 --fix MT1=128,144,160,192,256"
  record mid_1152x4096x1152_bf16 "--m 1152 --n 4096 --k 1152" "$MID_N --fix DepthU=64 --fix PGR=4,6 $MID"
  record nn_3072x1024x3072_bf16 "--m 3072 --n 1024 --k 3072 --transA N --transB N" \
    "--fix MT0=128,256 --fix MT1=128,160,208,256 --fix DepthU=64 --fix PGR=4,5 $MID"
  record mid_1152x4096x1152_f8 "--m 1152 --n 4096 --k 1152 --a_type f8_r --b_type f8_r" \
    "$MID_N --fix DepthU=128 --fix PGR=4,6 $MID"
  record mid_1152x4096x1152_xf32 "--m 1152 --n 4096 --k 1152 --a_type f32_r --b_type f32_r --c_type f32_r --d_type f32_r --compute_type c_xf32_r" \
    "$MID_N --fix DepthU=32 --fix PGR=3,4 $MID"
fi

if [ "$SETS" = amd ]; then
  # Exhaustive (the simulator costs nothing), 10 modelled samples per config.
  BACKEND=sim HW_SPEC=hw_specs/mi300x.toml MAX_CONFIGS=100000
  backend_args=(--backend sim --hw-spec "$HW_SPEC")
  AMD="--iters 10 --fix DepthU=32,64 --fix WG0=1,2 --fix WG1=1,2 --fix PGR=1,2 --fix PLR=1 --fix SW=0"
  record sim_mi300x_16032x109x16384_tn_bf16 "--m 16032 --n 109 --k 16384" \
    "--fix MT0=64,128,256 --fix MT1=64,128 --fix GSU=1,2,4 --fix GSUAlgo=1 $AMD"
  record sim_mi300x_4096x4096x4096_tn_bf16 "--m 4096 --n 4096 --k 4096" \
    "--fix MT0=64,128,256 --fix MT1=64,128,256 --fix GSU=1 $AMD"
  record sim_mi300x_3584x128x18944_tn_bf16 "--m 3584 --n 128 --k 18944" \
    "--fix MT0=64,128 --fix MT1=64,128 --fix GSU=1,2,4,8 --fix GSUAlgo=1 $AMD"
fi

echo "recorded ${#recorded[@]}: ${recorded[*]:-}" >&2
echo "skipped ${#skipped[@]} (no kernel yet): ${skipped[*]:-}" >&2
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED ${#failed[@]}: ${failed[*]}" >&2
  exit 1
fi
