// mainloop/gt_wgmma.h: the warpgroup compute of one LDS stage (wgmma, sm_90a). Warpgroup g
// (warps 4g..4g+3, consecutive along M) owns a WGT0 x WGT1 tile of C: SLICES slices of 64 rows,
// each one m64n<WGT1>k<32 bytes> wgmma per 32 bytes of K (k16 for 16-bit types, k32 for 8-bit
// ones), reading both operands in place from LDS through matrix descriptors (atom/gt_sm90.h),
// K-major or, for 16-bit types, MN-major (the instruction's transpose bits). `gt_wgmma_op` is
// generated for the instruction's N, types and transpose bits (codegen.rs), with N/2
// accumulator operands.
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
    // K elements per instruction: 32 bytes of K.
    static constexpr int KSTEP = 32 / int(sizeof(typename Cfg::TA));
    static constexpr int SLICES = SLICED / 64, KSTEPS = Cfg::DU / KSTEP;
    static constexpr int ACC_SLICE = INSTR_N / 2;
    static constexpr int ACC = SLICES * ACC_SLICE;
    static_assert(!GT_DEVICE_LACKS_SM90A, "MI64x8x16 (wgmma) needs the sm_90a target");
    static_assert(sizeof(typename Cfg::TA) == sizeof(typename Cfg::TB), "wgmma operands are both 16-bit, both 8-bit or both tf32");
    static_assert(sizeof(typename Cfg::TA) == 2 || (TileA::K_MAJOR && TileB::K_MAJOR),
                  "8-bit and tf32 wgmma operands must be K-major (layout TN, or packed K-major)");
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
    // each wgmma's is a constant offset >> 4 from them (the tiles' desc_off: for K-major tiles
    // 32 bytes per step inside a slab, a slab per 128 bytes of K, 8 KiB per 64-row slice).
    // 32-bit adds only: the high words are constants.
    GT_DEVICE static void compute_stage(float (&acc)[ACC], gt_u32 ds, gt_u32 dn) {
        gt_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
            const gt_u64 dnk = gt_wgmma_desc<TileN>(dn + gt_u32(TileN::desc_off(0, kk * KSTEP) >> 4));
#pragma unroll
            for (int s = 0; s < SLICES; ++s) {
                const gt_u64 dsk = gt_wgmma_desc<TileS>(ds + gt_u32(TileS::desc_off(s * 64, kk * KSTEP) >> 4));
                gt_wgmma_op(*reinterpret_cast<float(*)[ACC_SLICE]>(&acc[s * ACC_SLICE]), dsk, dnk);
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
