// loader/gt_tma_loader.h: operand stages through the Hopper tensor memory accelerator. A ring
// of STAGES LDS slots with one mbarrier each: thread 0 announces a stage's bytes and issues one
// box per operand and 64 of K (the tensor maps in the arguments describe A and B as
// (K, rows, batch) with the 128-byte swizzle of layout/gt_sw128_tile.h), every thread waits
// for the slot's phase. Edges cost nothing: the maps zero-fill whatever lies outside the
// matrices.
#pragma once

template <class Cfg, class TileA, class TileB> struct GtTmaRing {
    static constexpr int STAGES = Cfg::STAGES, DU = Cfg::DU;
    static constexpr int STAGE_BYTES = TileA::BYTES + TileB::BYTES;
    gt_u32 lds, bar0;  // LDS address of slot 0 and of the first barrier

    GT_DEVICE GtTmaRing(unsigned char* smem, gt_u64* bars) : lds(gt_lds_addr(smem)), bar0(gt_lds_addr(bars)) {}
    // Thread 0 initialises the barriers; the caller's next barrier publishes them.
    GT_DEVICE void init(int tid) const {
        if (tid == 0) {
#pragma unroll
            for (int s = 0; s < STAGES; ++s) gt_mbar_init(bar0 + 8 * s, 1);
            gt_mbar_init_fence();
        }
    }
    // Thread 0 only: loads the K slice at k0 of the tile at (m0, n0) of `batch` into `slot`.
    GT_DEVICE void load(const GtGemmArgs& args, int slot, int k0, int m0, int n0, int batch) const {
        const gt_u32 bar = bar0 + 8 * slot, st = lds + gt_u32(slot * STAGE_BYTES);
        gt_mbar_expect(bar, STAGE_BYTES);
#pragma unroll
        for (int j = 0; j < DU / 64; ++j) {
            gt_tma_load_3d(st + gt_u32(j * TileA::SLAB_BYTES), &args.tma_a, k0 + 64 * j, m0, batch, bar);
            gt_tma_load_3d(st + gt_u32(TileA::BYTES + j * TileB::SLAB_BYTES), &args.tma_b, k0 + 64 * j, n0, batch,
                           bar);
        }
    }
    // Waits for the t-th stage loaded since the ring was set up: the (t / STAGES)-th fill of
    // slot t % STAGES completes that phase of its barrier.
    GT_DEVICE void wait(int t) const { gt_mbar_wait(bar0 + 8 * (t % STAGES), gt_u32(t / STAGES) & 1u); }
};
