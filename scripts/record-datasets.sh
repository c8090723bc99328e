#!/usr/bin/env bash
# Records the replay datasets committed under datasets/ (run on a GPU machine): an exhaustive
# sweep of a bounded space for the seed shape (16032x109x16384 bf16 TN) and for a square shape
# (4096^3 bf16 TN). Every config is verified; the vendor library is recorded in the header.
#
# usage: scripts/record-datasets.sh [GEMMTUNE_BINARY] [OUT_DIR]
set -euo pipefail
BIN="${1:-target/release/gemmtune}"
OUT="${2:-datasets}"
mkdir -p "$OUT"
"$BIN" sweep --backend cuda --m 16032 --n 109 --k 16384 \
  --fix MT0=64,128,256 --fix MT1=112,128 --fix DepthU=64 --fix WavesM=2,4,8 --fix WavesN=1 \
  --fix PGR=3,4,6 --fix PLR=0,1 --fix GSU=1,2,4 --fix GSUAlgo=1 --max-configs 100000 \
  --out "$OUT/seed_16032x109x16384_tn_bf16.jsonl"
"$BIN" sweep --backend cuda --m 4096 --n 4096 --k 4096 \
  --fix MT0=128,256 --fix MT1=128,256 --fix DepthU=64 --fix WavesM=4,8 --fix WavesN=1,2 \
  --fix PGR=3,4,6 --fix PLR=0,1 --fix GSU=1 --max-configs 100000 \
  --out "$OUT/square_4096_tn_bf16.jsonl"
