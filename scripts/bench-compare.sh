#!/usr/bin/env bash
# Runs the criterion benches of two git revisions on this machine (a GPU machine for the GPU
# benches) and prints criterion's comparison: BASE is measured first and saved as a baseline,
# then the working tree is measured against it.
#
# usage: scripts/bench-compare.sh [BASE_REV=main] [criterion filter]
set -euo pipefail
BASE="${1:-main}"
FILTER="${2:-}"
root="$(git rev-parse --show-toplevel)"
tmp="$(mktemp -d)"
trap 'git -C "$root" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add --detach "$tmp/base" "$BASE" >/dev/null
export CARGO_TARGET_DIR="$root/target"
(cd "$tmp/base" && cargo bench -- --save-baseline base $FILTER) >"$tmp/base.log" 2>&1
(cd "$root" && cargo bench -- --baseline base $FILTER) 2>&1 | tee "$tmp/new.log" |
  grep -E "^[A-Za-z0-9_./-]+ *$|time:|change:|Performance has|No change|regressed|improved" || true
