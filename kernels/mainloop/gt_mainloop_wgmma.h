// mainloop/gt_mainloop_wgmma.h: the mainloop of the warpgroup path (sm_90a). Thread 0 keeps a
// ring of STAGES LDS slots filled through the tensor memory accelerator
// (loader/gt_tma_loader.h); the warpgroups multiply each landed slot in place with wgmma
// (mainloop/gt_wgmma.h) and wait for all but PrefetchLocalRead of their stages before a slot
// is reused.
//
//   global --(tensor-map boxes, K-major or MN-major, swizzled)--> LDS ring of STAGES
//          --(wgmma on descriptors, asynchronous)--> f32 accumulators in registers
#pragma once

template <class Cfg> struct GtWgmmaMainloop {
    typedef GtWgmmaTile<typename Cfg::TA, Cfg::MT0, Cfg::DU, Cfg::A_CHUNK> TileA;
    typedef GtWgmmaTile<typename Cfg::TB, Cfg::MT1, Cfg::DU, Cfg::B_CHUNK> TileB;
    typedef GtWgmma<Cfg, TileA, TileB> Compute;
    // A descriptor of an MN-major tile starts at a whole chunk: every warpgroup's origin along
    // M (N) must be one.
    static_assert(Cfg::A_CHUNK == 0 || Cfg::WG0 == 4 || Compute::WGT0 % Cfg::A_CHUNK == 0,
                  "warpgroups along M start at whole chunks of an M-major A");
    static_assert(Cfg::B_CHUNK == 0 || Cfg::WG1 == 1 || Compute::WGT1 % Cfg::B_CHUNK == 0,
                  "warpgroups along N start at whole chunks of an N-major B");
    typedef GtTmaRing<Cfg, TileA, TileB> Ring;
    static constexpr bool SWAP = Cfg::SWAP_AB;
    static constexpr int STAGES = Cfg::STAGES;
    static constexpr int STAGE_BYTES = TileA::BYTES + TileB::BYTES;
    static constexpr int ACC = Compute::ACC;
    static constexpr bool ASYNC_TENSOR = true;

    // Warpgroup origin (wgm0, wgn0); this warp's accumulator rows start 16 rows per warp
    // further along the sliced extent (N when swapped).
    GT_DEVICE static GtPos position(int tid) {
        const int lane = tid % Cfg::WAVE, wave = tid / Cfg::WAVE;
        const int wgm0 = (wave % Cfg::WG0 / 4) * Compute::WGT0, wgn0 = (wave / Cfg::WG0) * Compute::WGT1,
                  w16 = (wave % 4) * 16;
        return GtPos{tid, lane, wgm0 + (SWAP ? 0 : w16), wgn0 + (SWAP ? w16 : 0), wgm0, wgn0};
    }
    // The swizzle is a function of the shared address: the tiles are aligned to its period
    // (the LDS size includes this slack).
    GT_DEVICE static unsigned char* lds_base(unsigned char* smem) {
        return smem + ((GT_SW128_PERIOD - int(gt_lds_addr(smem) & (GT_SW128_PERIOD - 1))) & (GT_SW128_PERIOD - 1));
    }
    GT_DEVICE static void acc_coord(int lane, int idx, int& m, int& n) { Compute::acc_coord(lane, idx, m, n); }

    // The ring and the descriptor words of this warpgroup's rows in slot 0, computed once: a
    // slot's are a constant offset from them.
    struct Stages {
        Ring ring;
        gt_u32 ds0, dn0;  // low descriptor words of this warpgroup's first sliced and N rows
        // Byte offsets in a slot of this warpgroup's first A row and first B row.
        GT_DEVICE static int a_row0(const GtPos& pos) { return TileA::desc_off(pos.wgm0, 0); }
        GT_DEVICE static int b_row0(const GtPos& pos) { return TileA::BYTES + TileB::desc_off(pos.wgn0, 0); }
        GT_DEVICE Stages(const GtGemmArgs& args, unsigned char* smem, gt_u64* bars, const GtPos& pos)
            : ring(smem, bars),
              ds0(gt_wgmma_desc_lo<typename Compute::TileS>(ring.lds + gt_u32(SWAP ? b_row0(pos) : a_row0(pos)))),
              dn0(gt_wgmma_desc_lo<typename Compute::TileN>(ring.lds + gt_u32(SWAP ? a_row0(pos) : b_row0(pos)))) {
            ring.init(args, pos.tid);
        }
        // Issues this warpgroup's wgmmas on `slot` as one commit group; the caller waits.
        GT_DEVICE void multiply(float (&acc)[ACC], int slot) const {
            const gt_u32 off = gt_u32(slot * (STAGE_BYTES >> 4));
            Compute::compute_stage(acc, ds0 + off, dn0 + off);
        }
    };

    // Accumulates the K tiles of `kr` of the MT0 x MT1 tile at (m0, n0) of batch `batch` into
    // `acc` (which the caller zeroed). On return every load has landed and every warpgroup is
    // done multiplying: the LDS is free for the output tile.
    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* smem, const GtPos& pos, int m0, int n0,
                              int batch, const GtKRange<Cfg::DU>& kr, float (&acc)[ACC]) {
        __shared__ __align__(8) gt_u64 gt_slot_bars[STAGES];
        const Stages st(args, smem, gt_slot_bars, pos);
        gt_barrier();
        auto load_stage = [&](int slot, int local) {
            if (pos.tid == 0) st.ring.load(args, slot, kr.k0(local), m0, n0, batch);
        };
        // With PrefetchLocalRead = 1 one stage stays in wgmma while the next is issued; the
        // slot it reads is not reloaded until every warpgroup has waited for it (a barrier
        // later). So AHEAD tiles are in flight from global memory, IN_FLIGHT in the tensor
        // cores, one being issued: a memory-bound shape wants AHEAD large, a compute-bound one
        // IN_FLIGHT = 1.
        constexpr int IN_FLIGHT = Cfg::PLR;
        static_assert(IN_FLIGHT == 0 || STAGES >= 3, "wgmma with PrefetchLocalRead=1 needs 3+ stages");
        constexpr int AHEAD = STAGES - 1 - IN_FLIGHT;
        if (STAGES == 1) {
            for (int t = 0; t < kr.count; ++t) {
                gt_barrier();  // the previous tile's wgmmas are done (each warpgroup waited)
                load_stage(0, t);
                st.ring.wait(t);
                st.multiply(acc, 0);
                Compute::template settle<0>(acc);
            }
        } else {
#pragma unroll
            for (int s = 0; s < AHEAD; ++s)
                if (s < kr.count) load_stage(s, s);
            // `p` is stage t's place in the ring, `ahead` that of stage t + AHEAD.
            GtRingPos<STAGES> p(0), ahead(AHEAD);
            for (int t = 0; t < kr.count; ++t, p.next(), ahead.next()) {
                st.ring.wait(p);
                // Every warpgroup has finished the stage IN_FLIGHT + 1 tiles back, whose slot
                // the load below reuses.
                gt_barrier();
                st.multiply(acc, p.slot);
                const int next = t + AHEAD;
                if (next < kr.count) load_stage(ahead.slot, next);
                Compute::template settle<IN_FLIGHT>(acc);
            }
        }
        Compute::template settle<0>(acc);
        gt_copy_wait<0>();
        gt_barrier();  // all reads of the operand tiles are done: the LDS becomes the output tile
    }
};
