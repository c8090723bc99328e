#!/usr/bin/env bash
# Points gemmtune at Debian 12's upstream clang for the AMD targets its ROCm 5.2 hipcc does not
# know, and writes the environment that says so to DIR/env.sh (source it).
#
#   gfx90a  Debian's hipcc 5.2 (clang 15): gemmtune's default, nothing to set
#   gfx942  clang++-19 + lld-19
#   gfx950  clang++-22 + lld-22 (bookworm-security); clang 20 is the first to know gfx950
#
# Needs: hipcc libamdhip64-dev rocm-device-libs clang-19 lld-19 llvm-19 clang-22 lld-22
# llvm-22 (apt). Both clangs find ROCm 5.2's headers in /usr/include; what ROCm 5.2 lacks is
# made up here:
# - its device libraries stop at oclc_isa_version_940.bc, so DIR/amdgcn-bitcode holds links to
#   every Debian bitcode file plus ISA-version files for 9.4.2 and 9.5.0 (the 9.4.0 file with
#   its one constant changed, assembled by llvm-19 so that both clangs can read it);
# - clang 22 builds code object v6 by default, for which 5.2 has no ABI bitcode: ask for v5
#   (ROCm 6 and 7 load v5);
# - the 5.2 headers read __AMDGCN_WAVEFRONT_SIZE, which clang 22 no longer defines: every
#   Instinct GPU is wave64;
# - the 5.2 headers call __atomic_work_item_fence, defined in 5.2's hip.bc, which clang 19
#   links by itself and clang 22 no longer does: link it explicitly.
# A real ROCm 6/7 install needs none of this: gemmtune uses its hipcc / amdclang++.
#
# Usage: scripts/debian-amd-toolchains.sh DIR && source DIR/env.sh
set -euo pipefail

dir="${1:?usage: $0 DIR}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
src=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode
bc="$dir/amdgcn-bitcode"

for tool in clang++-19 clang++-22 ld.lld-19 ld.lld-22 llvm-dis-19 llvm-as-19; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is missing (apt-get install clang-19 lld-19 llvm-19 clang-22 lld-22 llvm-22)" >&2; exit 1; }
done
[ -f "$src/oclc_isa_version_940.bc" ] || { echo "$0: $src has no ROCm device libraries (apt-get install rocm-device-libs)" >&2; exit 1; }

mkdir -p "$bc"
for f in "$src"/*.bc; do ln -sf "$f" "$bc/"; done
for v in 942 950; do
  llvm-dis-19 "$src/oclc_isa_version_940.bc" -o - \
    | sed "s/constant i32 9400,/constant i32 ${v:0:1}${v:1:1}0${v:2:1},/" \
    | llvm-as-19 -o "$bc/oclc_isa_version_$v.bc"
  llvm-dis-19 "$bc/oclc_isa_version_$v.bc" -o - | grep -q "constant i32 ${v:0:1}${v:1:1}0${v:2:1}," \
    || { echo "$0: could not make oclc_isa_version_$v.bc" >&2; exit 1; }
done

cat >"$dir/env.sh" <<EOF
# Written by scripts/debian-amd-toolchains.sh: the HIP compilers gemmtune uses per AMD arch.
export GEMMTUNE_HIP_COMPILER_GFX942="$(command -v clang++-19) --rocm-device-lib-path=$bc"
export GEMMTUNE_HIP_COMPILER_GFX950="$(command -v clang++-22) --rocm-device-lib-path=$bc -mcode-object-version=5 -D__AMDGCN_WAVEFRONT_SIZE=64 -Xclang -mlink-builtin-bitcode -Xclang $bc/hip.bc"
EOF
echo "wrote $dir/env.sh"
