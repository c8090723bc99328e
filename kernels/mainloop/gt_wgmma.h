// mainloop/gt_wgmma.h: the warpgroup compute of one LDS stage (wgmma, sm_90a). Warpgroup g
// (warps 4g..4g+3, consecutive along M) owns a WGT0 x WGT1 tile of C: SLICES slices of 64 rows,
// each one m64n<WGT1>k16 wgmma per 16 of K, reading both operands in place from LDS through
// matrix descriptors (atom/gt_sm90.h). `gt_wgmma_m64k16` is generated for the instruction's N
// (codegen.rs), with N/2 accumulator operands.
//
// SwapAB computes the transposed tile instead, D^T = B^T A^T: the instruction's 64-row slices
// run along N (B's rows) and its N along M (A's rows, any multiple of 8 up to 256). A skinny
// problem can then take M tiles such as 48, 80 or 224 rows, which fill the compute units in
// one wave where multiples of 64 leave part of them idle.
#pragma once

template <class Cfg, class TileA, class TileB> struct GtWgmma {
    static constexpr bool SWAP = Cfg::SWAP_AB;
    static constexpr int WGS_M = Cfg::WG0 / 4;
    static constexpr int WGT0 = Cfg::MT0 / WGS_M, WGT1 = Cfg::MT1 / Cfg::WG1;
    // The warpgroup tile's extent cut into 64-row slices, and the instruction's N.
    static constexpr int SLICED = SWAP ? WGT1 : WGT0, INSTR_N = SWAP ? WGT0 : WGT1;
    static constexpr int SLICES = SLICED / 64, KSTEPS = Cfg::DU / 16;
    static constexpr int ACC_SLICE = INSTR_N / 2;
    static constexpr int ACC = SLICES * ACC_SLICE;
    static_assert(!GT_DEVICE_LACKS_SM90A, "MI64x8x16 (wgmma) needs the sm_90a target");
    static_assert(Cfg::TRANS_A && !Cfg::TRANS_B, "the wgmma path needs both operands K-contiguous (layout TN)");
    static_assert(Cfg::WG0 % 4 == 0 && Cfg::MT0 % WGS_M == 0 && SLICED % 64 == 0,
                  "warpgroups of 4 warps along M, each a whole number of 64-row slices");
    static_assert(INSTR_N % 8 == 0 && INSTR_N <= 256, "the instruction's N is a multiple of 8, at most 256");
    static_assert(Cfg::WGMMA_N == INSTR_N, "the generated wgmma function must match the warpgroup tile");
    // The operand tile the slices come from, and the one the instruction's N runs along.
    typedef typename GtPick<SWAP, TileB, TileA>::type TileS;
    typedef typename GtPick<SWAP, TileA, TileB>::type TileN;

    // Issues the wgmmas of one LDS stage for this warpgroup as one commit group; the caller
    // waits for it. `ds` and `dn` are the low descriptor words of this warpgroup's first sliced
    // row and first instruction-N row in the stage (A's and B's, or B's and A's when swapped);
    // each wgmma's is a constant offset >> 4 from them: 32 bytes per k16 step inside a slab, a
    // slab per 64 of K, 8 KiB per 64-row slice. 32-bit adds only: the high word is a constant.
    GT_DEVICE static void compute_stage(float (&acc)[ACC], gt_u32 ds, gt_u32 dn) {
        gt_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
            const gt_u64 dnk = gt_wgmma_desc(dn + gt_u32(TileN::byte_off(0, kk * 16) >> 4));
#pragma unroll
            for (int s = 0; s < SLICES; ++s) {
                const gt_u64 dsk = gt_wgmma_desc(ds + gt_u32(TileS::byte_off(s * 64, kk * 16) >> 4));
                gt_wgmma_m64k16(*reinterpret_cast<float(*)[ACC_SLICE]>(&acc[s * ACC_SLICE]), dsk, dnk);
            }
        }
        gt_wgmma_commit();
    }

    // Waits until at most N of this warpgroup's stages are still being multiplied, then fences
    // the accumulators so that no access to them moves before the wait.
    template <int N> GT_DEVICE static void settle(float (&acc)[ACC]) {
        gt_wgmma_wait<N>();
#pragma unroll
        for (int i = 0; i < ACC; ++i) gt_reg_fence(acc[i]);
    }

    // Accumulator register `idx` of this lane -> (m, n) relative to its warp's origin (row 16w
    // of the warpgroup tile's sliced extent, w = warp within the warpgroup). Per slice and per 8
    // instruction columns j, the 4 registers are (r, c), (r, c+1), (r+8, c), (r+8, c+1) with
    // r = lane/4, c = 8j + 2*(lane%4); rows are m and columns n, or the other way when swapped.
    GT_DEVICE static void acc_coord(int lane, int idx, int& m, int& n) {
        const int s = idx / ACC_SLICE, r = idx % ACC_SLICE;
        const int j = r / 4, q = r % 4;
        const int row = s * 64 + (lane >> 2) + (q >> 1) * 8, col = j * 8 + (lane & 3) * 2 + (q & 1);
        m = SWAP ? col : row;
        n = SWAP ? row : col;
    }
};
