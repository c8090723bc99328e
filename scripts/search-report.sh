#!/usr/bin/env bash
# Regenerates docs/search.md from the recorded sweeps in datasets/ (no GPU needed): the
# default strategy (the model-based search, learning from every other dataset: leave one
# shape out), random, pattern and genetic search, 20 seeds each, median evaluations to come
# within 2% of each dataset's best. Record the GPU datasets first (scripts/record-datasets.sh).
#
# usage: scripts/search-report.sh [GEMMTUNE_BINARY]
set -euo pipefail
BIN="${1:-target/release/gemmtune}"
cd "$(dirname "$0")/.."
"$BIN" eval-strategies datasets/*.jsonl --seeds 20 --strategies default,random,pattern,genetic \
  --markdown docs/search.md
