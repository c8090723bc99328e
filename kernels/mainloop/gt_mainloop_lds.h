// mainloop/gt_mainloop_lds.h: the mainloop of the warp-level paths. Every thread loads its
// share of each stage (OPERANDS: the tile layouts and their loader) into a ring of
// PrefetchGlobalRead LDS stages; each wave multiplies its wave tile out of the landed stage
// with COMPUTE (mainloop/gt_warp_mma.h: matrix-core atoms on tiles in their stored
// orientation, loader/gt_vector_loader.h; or mainloop/gt_fma.h: f32 FMA on MN-major tiles,
// loader/gt_transpose_loader.h).
//
//   global --(GRVW-element vectors, cp.async on sm_80+, or through registers)--> LDS ring
//          of STAGES --(atom fragments / FMA operands)--> f32 accumulators in registers
//
// Where no operand goes through registers, tiles inside the matrices with enough K run a loop
// without bounds tests or branches around the loads (ring<true>); edge tiles, short K and the
// other operand kinds the general one (ring<false>; GtRegisterLoader::BRANCH_FREE_INTERIOR).
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

    GT_DEVICE static ViewA view_a(unsigned char* smem, int slot) {
        return ViewA{reinterpret_cast<const typename Cfg::TA*>(smem + slot * STAGE_BYTES)};
    }
    GT_DEVICE static ViewB view_b(unsigned char* smem, int slot) {
        return ViewB{reinterpret_cast<const typename Cfg::TB*>(smem + slot * STAGE_BYTES + TileA::BYTES)};
    }

    // Multiplies the operand tiles of LDS stage `slot` into `acc`.
    GT_DEVICE static void consume(float (&acc)[ACC], unsigned char* smem, int slot, const GtPos& pos) {
        Compute::compute_stage(acc, view_a(smem, slot), view_b(smem, slot), pos.wm0, pos.wn0, pos.lane);
    }

    // The loads in two halves (loader/gt_register_loader.h): `issue` starts the K slice at k0
    // into LDS stage `stage` (`stage_at`) or into `r`, `land` writes what went into `r` there.
    typedef typename Loader::Regs Regs;
    GT_DEVICE static unsigned char* stage_at(unsigned char* smem, int slot) { return smem + slot * STAGE_BYTES; }
    template <bool INSIDE = false>
    GT_DEVICE static void issue(const GtGemmArgs& args, unsigned char* stage, int tid, int m0, int n0, int batch,
                                int k0, Regs& r) {
        Loader::template issue<INSIDE>(args, stage, tid, m0, n0, batch, k0, r);
    }
    GT_DEVICE static void land(unsigned char* stage, int tid, const Regs& r) { Loader::land(stage, tid, r); }

    // A compute that CARRIES (see `ring`): `prime` reads the first operands of the stage at
    // ring position `p`, `consume_carried` multiplies that stage and leaves the first operands
    // of the one after it in `c`. (Given the position rather than its slot number, NVRTC
    // compiles the ring as it did with these calls written out in it: 217 registers for the
    // 256x128x8 f32 kernel, where a slot number gave 219 and another schedule.)
    typedef typename Compute::Carry Carry;
    static constexpr bool CARRIES = Compute::CARRIES && STAGES >= 3;
    GT_DEVICE static void prime(Carry& c, unsigned char* smem, const GtRingPos<STAGES>& p, const GtPos& pos) {
        Compute::prime(c, view_a(smem, p.slot), view_b(smem, p.slot), pos.wm0, pos.wn0, pos.lane);
    }
    GT_DEVICE static void consume_carried(float (&acc)[ACC], Carry& c, unsigned char* smem,
                                          const GtRingPos<STAGES>& p, const GtPos& pos) {
        const int after = p.slot + 1 == STAGES ? 0 : p.slot + 1;
        Compute::compute_stage_carried(acc, c, view_a(smem, p.slot), view_b(smem, p.slot), view_a(smem, after),
                                       view_b(smem, after), pos.wm0, pos.wn0, pos.lane);
    }

    // Accumulates the K tiles of `kr` of the MT0 x MT1 tile at (m0, n0) of batch `batch` into
    // `acc` (which the caller zeroed). On return every copy has landed and every warp is past
    // its last read of the operand tiles: the LDS is free for the output tile.
    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* smem, const GtPos& pos, int m0, int n0,
                              int batch, const GtKRange<Cfg::DU>& kr, float (&acc)[ACC]) {
        if (STAGES == 1) {
            for (int t = 0; t < kr.count; ++t) {
                gt_barrier();  // the previous tile's readers are done with the single slot
                load(args, smem, 0, pos.tid, m0, n0, batch, kr.k0(t));
                gt_copy_commit();
                gt_copy_wait<0>();
                gt_barrier();
                consume(acc, smem, 0, pos);
            }
        } else if (Loader::BRANCH_FREE_INTERIOR && kr.count >= 2 * STAGES && Loader::interior(args, m0, n0, kr)) {
            ring<true>(args, smem, pos, m0, n0, batch, kr, acc);
        } else {
            ring<false>(args, smem, pos, m0, n0, batch, kr, acc);
        }
        gt_copy_wait<0>();
        gt_barrier();  // all reads of the operand tiles are done: the LDS becomes the output tile
    }

    // Ring of STAGES slots: STAGES-1 tiles in flight while one is multiplied. One commit per
    // step (possibly empty) keeps "tile t has landed" == "at most STAGES-2 pending". Loads that
    // pass through registers are issued before the multiply and land in their slot after it,
    // before the barrier that makes them visible.
    // A compute that CARRIES reads the first operands of tile t+1 during tile t's last
    // multiplies, so tile t+1 must be visible too: one tile fewer stays in flight (register
    // loads already land two stages ahead with three or more stages), and slot (t-1) % STAGES,
    // the one refilled, is still read by nobody.
    // INTERIOR (every slice inside the matrices, K long enough): the loads take no bounds
    // tests, and the last STAGES-1 steps load the range's last slice again, into slots nobody
    // reads, rather than branch around the loads: the loop body is one block, so the compiler
    // spreads the loads' address arithmetic among the multiplies instead of running it, a
    // dependent chain, between the barrier and the first multiply, where both warps of each
    // scheduler wait in it at once (loader/gt_register_loader.h says where it pays).
    template <bool INTERIOR>
    GT_DEVICE static void ring(const GtGemmArgs& args, unsigned char* smem, const GtPos& pos, int m0, int n0,
                               int batch, const GtKRange<Cfg::DU>& kr, float (&acc)[ACC]) {
        constexpr int IN_FLIGHT = CARRIES ? STAGES - 3 : STAGES - 2;
#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < kr.count) load(args, smem, s, pos.tid, m0, n0, batch, kr.k0(s));
            gt_copy_commit();
        }
        Regs regs;
        Carry carry;
        // Tile t's place in the ring, and that of the tile loaded while it is multiplied.
        GtRingPos<STAGES> p(0), nx(STAGES - 1);
        for (int t = 0; t < kr.count; ++t, p.next(), nx.next()) {
            gt_copy_wait<IN_FLIGHT>();
            gt_barrier();  // tile t visible to all; slot (t-1) % STAGES free for reuse
            const int next = t + STAGES - 1;
            unsigned char* const next_stage = stage_at(smem, nx.slot);
            if constexpr (CARRIES) {
                if (t == 0) prime(carry, smem, p, pos);
            }
            if constexpr (INTERIOR) {
                const int k0 = kr.k0(next < kr.count ? next : kr.count - 1);
                issue<true>(args, next_stage, pos.tid, m0, n0, batch, k0, regs);
            } else if (next < kr.count) {
                issue(args, next_stage, pos.tid, m0, n0, batch, kr.k0(next), regs);
            }
            gt_copy_commit();
            // After the last tile the slot after it holds no tile of this range: the values a
            // carrying compute reads from it are never multiplied.
            if constexpr (CARRIES) {
                consume_carried(acc, carry, smem, p, pos);
            } else {
                consume(acc, smem, p.slot, pos);
            }
            if (INTERIOR || next < kr.count) land(next_stage, pos.tid, regs);
        }
    }
};
