// mainloop/gt_warp_mma.h: the per-wave compute of one LDS stage with matrix-core atoms
// (mma.sync on NVIDIA, MFMA on AMD; atom/gt_mma.h). Each wave owns a WT0 x WT1 wave tile of
// TM x TN atoms and walks the stage's DepthU in steps of the atom's K, reading its fragments
// from the LDS views; with PrefetchLocalRead the fragments of the next step are read while
// the current one multiplies.
#pragma once

template <class Cfg, class ViewA, class ViewB> struct GtWarpMma {
    typedef typename GtAtomFor<typename Cfg::TA, Cfg::MI_M, Cfg::MI_N, Cfg::MI_K, typename Cfg::TB>::type Atom;
    static constexpr int TM = Cfg::WT0 / Atom::M, TN = Cfg::WT1 / Atom::N, KSTEPS = Cfg::DU / Atom::K;
    static_assert(Cfg::WT0 % Atom::M == 0 && Cfg::WT1 % Atom::N == 0 && Cfg::DU % Atom::K == 0,
                  "wave tile and DepthU must be whole matrix instructions");
    static constexpr int ACC = TM * TN * Atom::C_REGS;
    // No cross-stage prefetch (mainloop/gt_fma.h has one): each stage reads its own first step.
    static constexpr bool CARRIES = false;
    struct Carry {};
    typedef typename Atom::FragA FragA;
    typedef typename Atom::FragB FragB;

    GT_DEVICE static void load_frags(FragA (&fa)[TM], FragB (&fb)[TN], const ViewA& va, const ViewB& vb,
                                     int wm0, int wn0, int kk, int lane) {
#pragma unroll
        for (int i = 0; i < TM; ++i) Atom::load_a(fa[i], va, wm0 + i * Atom::M, kk * Atom::K, lane);
#pragma unroll
        for (int j = 0; j < TN; ++j) Atom::load_b(fb[j], vb, kk * Atom::K, wn0 + j * Atom::N, lane);
    }

    GT_DEVICE static void mma_tile(float (&acc)[ACC], const FragA (&fa)[TM], const FragB (&fb)[TN]) {
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                Atom::mma(*reinterpret_cast<float(*)[Atom::C_REGS]>(&acc[(i * TN + j) * Atom::C_REGS]), fa[i],
                          fb[j]);
    }

    GT_DEVICE static void compute_stage(float (&acc)[ACC], const ViewA& va, const ViewB& vb, int wm0, int wn0,
                                        int lane) {
        if constexpr (Cfg::PLR != 0) {
            // PrefetchLocalRead: the fragments of step kk+1 are read while step kk multiplies.
            FragA fa[2][TM];
            FragB fb[2][TN];
            load_frags(fa[0], fb[0], va, vb, wm0, wn0, 0, lane);
#pragma unroll
            for (int kk = 0; kk < KSTEPS; ++kk) {
                if (kk + 1 < KSTEPS) load_frags(fa[(kk + 1) & 1], fb[(kk + 1) & 1], va, vb, wm0, wn0, kk + 1, lane);
                mma_tile(acc, fa[kk & 1], fb[kk & 1]);
            }
        } else {
#pragma unroll
            for (int kk = 0; kk < KSTEPS; ++kk) {
                FragA fa[TM];
                FragB fb[TN];
                load_frags(fa, fb, va, vb, wm0, wn0, kk, lane);
                mma_tile(acc, fa, fb);
            }
        }
    }

    // Accumulator register `idx` of this lane -> (m, n) inside the wave tile.
    GT_DEVICE static void acc_coord(int lane, int idx, int& m, int& n) {
        const int tile = idx / Atom::C_REGS, r = idx % Atom::C_REGS;
        Atom::c_coord(lane, r, m, n);
        m += (tile / TN) * Atom::M;
        n += (tile % TN) * Atom::N;
    }
};
