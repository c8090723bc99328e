// mainloop/gt_mainloop_lds.h: the mainloop of the warp-level paths. Every thread loads its
// share of each stage (OPERANDS: the tile layouts and their loader) into a ring of
// PrefetchGlobalRead LDS stages; each wave multiplies its wave tile out of the landed stage
// with COMPUTE (mainloop/gt_warp_mma.h: matrix-core atoms on tiles in their stored
// orientation, loader/gt_vector_loader.h; or mainloop/gt_fma.h: f32 FMA on MN-major tiles,
// loader/gt_transpose_loader.h).
//
//   global --(GRVW-element vectors, cp.async on sm_80+, or through registers)--> LDS ring
//          of STAGES --(atom fragments / FMA operands)--> f32 accumulators in registers
#pragma once

template <class Cfg, template <class, class, class> class COMPUTE, class OPERANDS> struct GtLdsMainloop {
    typedef typename OPERANDS::TileA TileA;
    typedef typename OPERANDS::TileB TileB;
    typedef GtView<TileA, OPERANDS::A_K_CONTIG> ViewA;
    typedef GtView<TileB, OPERANDS::B_K_CONTIG> ViewB;
    typedef COMPUTE<Cfg, ViewA, ViewB> Compute;
    typedef typename OPERANDS::Loader Loader;
    static constexpr int STAGES = Cfg::STAGES;
    static constexpr int STAGE_BYTES = TileA::BYTES + TileB::BYTES;
    static constexpr int ACC = Compute::ACC;
    // The output tile is staged at the start of the LDS, after the stages are done with it.
    static constexpr bool ASYNC_TENSOR = false;

    // The waves are laid out WG0 x WG1 over the tile, wave w at (w % WG0, w / WG0).
    GT_DEVICE static GtPos position(int tid) {
        const int lane = tid % Cfg::WAVE, wave = tid / Cfg::WAVE;
        return GtPos{tid, lane, (wave % Cfg::WG0) * Cfg::WT0, (wave / Cfg::WG0) * Cfg::WT1, 0, 0};
    }
    GT_DEVICE static unsigned char* lds_base(unsigned char* smem) { return smem; }
    GT_DEVICE static void acc_coord(int lane, int idx, int& m, int& n) { Compute::acc_coord(lane, idx, m, n); }

    // Loads the K slice at k0 of the tile at (m0, n0) of `batch` into LDS slot `slot` (landed
    // in LDS, or in flight by cp.async, when it returns).
    GT_DEVICE static void load(const GtGemmArgs& args, unsigned char* smem, int slot, int tid, int m0, int n0,
                               int batch, int k0) {
        Loader::load_stage(args, smem + slot * STAGE_BYTES, tid, m0, n0, batch, k0);
    }

    // Multiplies the operand tiles of LDS stage `slot` into `acc`.
    GT_DEVICE static void consume(float (&acc)[ACC], unsigned char* smem, int slot, const GtPos& pos) {
        unsigned char* const st = smem + slot * STAGE_BYTES;
        const ViewA va{reinterpret_cast<const typename Cfg::TA*>(st)};
        const ViewB vb{reinterpret_cast<const typename Cfg::TB*>(st + TileA::BYTES)};
        Compute::compute_stage(acc, va, vb, pos.wm0, pos.wn0, pos.lane);
    }

    // Accumulates the K tiles of `kr` of the MT0 x MT1 tile at (m0, n0) of batch `batch` into
    // `acc` (which the caller zeroed). On return every copy has landed and every warp is past
    // its last read of the operand tiles: the LDS is free for the output tile.
    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* smem, const GtPos& pos, int m0, int n0,
                              int batch, const GtKRange<Cfg::DU>& kr, float (&acc)[ACC]) {
        auto load_stage = [&](int slot, int local) { load(args, smem, slot, pos.tid, m0, n0, batch, kr.k0(local)); };
        auto compute_stage = [&](int slot) { consume(acc, smem, slot, pos); };

        if (STAGES == 1) {
            for (int t = 0; t < kr.count; ++t) {
                gt_barrier();  // the previous tile's readers are done with the single slot
                load_stage(0, t);
                gt_copy_commit();
                gt_copy_wait<0>();
                gt_barrier();
                compute_stage(0);
            }
        } else {
            // Ring of STAGES slots: STAGES-1 tiles in flight while one is multiplied. One commit
            // per step (possibly empty) keeps "tile t has landed" == "at most STAGES-2 pending".
            // Loads that pass through registers are issued before the multiply and land in
            // their slot after it, before the barrier that makes them visible.
#pragma unroll
            for (int s = 0; s < STAGES - 1; ++s) {
                if (s < kr.count) load_stage(s, s);
                gt_copy_commit();
            }
            typename Loader::Regs regs;
            // Tile t's place in the ring, and that of the tile loaded while it is multiplied.
            GtRingPos<STAGES> p(0), nx(STAGES - 1);
            for (int t = 0; t < kr.count; ++t, p.next(), nx.next()) {
                gt_copy_wait<(STAGES >= 2 ? STAGES - 2 : 0)>();
                gt_barrier();  // tile t visible to all; slot (t-1) % STAGES free for reuse
                const int next = t + STAGES - 1;
                unsigned char* const next_slot = smem + nx.slot * STAGE_BYTES;
                if (next < kr.count) Loader::issue(args, next_slot, pos.tid, m0, n0, batch, kr.k0(next), regs);
                gt_copy_commit();
                compute_stage(p.slot);
                if (next < kr.count) Loader::land(next_slot, pos.tid, regs);
            }
        }
        gt_copy_wait<0>();
        gt_barrier();  // all reads of the operand tiles are done: the LDS becomes the output tile
    }
};
