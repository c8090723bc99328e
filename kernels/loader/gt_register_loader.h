// loader/gt_register_loader.h: the stage loader of the warp-level LDS paths: A's tile, then
// B's. An operand whose LDS tile keeps its global orientation (GtNoRegs) is copied straight
// into it by `issue` (loader/gt_vector_loader.h: cp.async on sm_80+). One whose LDS
// orientation differs travels through registers in two calls: `issue` starts its global reads
// into a register tile (RegsA / RegsB), `land` writes them to LDS reoriented, so the mainloop
// multiplies the current stage while the reads are in flight.
//
//   global --(vectors, cp.async)--> LDS in the stored orientation            (GtNoRegs)
//   global --(vectors)--> register tile --(land: transposed writes)--> LDS   (RegsX)
//
// The register tiles: loader/gt_transpose_loader.h (K-contiguous -> MN-major, the FMA path)
// and loader/gt_kpack_loader.h (MN-contiguous -> K-major packs, TransposeLDS).
#pragma once

// The register tile of an operand that needs none.
struct GtNoRegs {
    static constexpr bool THROUGH = false;
};

template <class Cfg, class TileA, class TileB, class RegsA, class RegsB> struct GtRegisterLoader {
    typedef typename Cfg::TA TA;
    typedef typename Cfg::TB TB;
    static constexpr int MT0 = Cfg::MT0, MT1 = Cfg::MT1, DU = Cfg::DU, T = Cfg::THREADS, V = Cfg::GRVW;
    // Whether each operand runs along K in global memory (A with transA = T, B with transB = N).
    static constexpr bool A_KC = Cfg::TRANS_A, B_KC = !Cfg::TRANS_B;
    struct Regs {
        RegsA a;
        RegsB b;
    };

    // One operand's ROWS x DU slice at (mn0, k0) (mn_lim x K valid), copied into its LDS tile
    // `lds` in the stored orientation: rows of mn when KC, rows of k otherwise.
    template <bool GUARD, bool KC, class Tile, int ROWS, class E>
    GT_DEVICE static void copy_stored(E* lds, const E* g, gt_i64 ld, int mn0, int k0, gt_i64 mn_lim, gt_i64 K,
                                      int tid) {
        if constexpr (KC) {
            gt_load_tile<Tile, ROWS, DU, V, GUARD, T>(lds, g, ld, mn0, k0, mn_lim, K, tid);
        } else {
            gt_load_tile<Tile, DU, ROWS, V, GUARD, T>(lds, g, ld, k0, mn0, K, mn_lim, tid);
        }
    }

    // One operand's slice: into its registers `r` when R goes through them, else straight into
    // its LDS tile. A slice inside the matrix takes the path without bounds tests (a partial
    // N tile must not slow down the A stream, and vice versa).
    template <bool KC, class Tile, int ROWS, class E, class R>
    GT_DEVICE static void issue_operand(const E* g, gt_i64 ld, int mn0, int k0, gt_i64 mn_lim, gt_i64 K,
                                        bool k_inside, E* lds, R& r, int tid) {
        const bool inside = mn0 + ROWS <= mn_lim && k_inside;
        if (inside) {
            issue_inside<KC, Tile, ROWS>(g, ld, mn0, k0, mn_lim, K, lds, r, tid);
        } else if constexpr (R::THROUGH) {
            r.template issue<true>(g, ld, mn0, k0, mn_lim, K, tid);
        } else {
            copy_stored<true, KC, Tile, ROWS>(lds, g, ld, mn0, k0, mn_lim, K, tid);
        }
    }

    // Whether the mainloop takes the branch-free loop for interior tiles (issue<true>): only
    // where no operand goes through registers. With one that does, the compiler, free to move
    // its global reads, sinks them halfway down the multiplies to shorten their registers'
    // lives. On an H200, 4096^3 f32 (NVRTC; cuBLASLt in brackets): NT (none) on 256x128x16,
    // four stages, 2798.5 us with it against 2945.9 without [2650]; NN (B through registers)
    // 3003.0 against 2944.2 [2672.8]; TN (both) on 256x128x8 3118.1 against 2947.3 [2727.6];
    // 3000x1000x2000 NN on 256x96x16 325.2 against 310.4 [295.0].
    static constexpr bool BRANCH_FREE_INTERIOR = !RegsA::THROUGH && !RegsB::THROUGH;

    // Whether every slice of K range `kr` of the tile at (m0, n0) lies inside the matrices, so
    // that its loads need no bounds tests at all (issue<true>).
    GT_DEVICE static bool interior(const GtGemmArgs& args, int m0, int n0, const GtKRange<DU>& kr) {
        return m0 + MT0 <= args.m && n0 + MT1 <= args.n && (gt_i64)(kr.begin + kr.count) * DU <= args.k;
    }

    // Starts the loads of the DU-deep K slice at k0 of the tile at (m0, n0) of `batch`: the
    // operands without registers straight into LDS stage `stage`, the others into `r`.
    // INSIDE: the caller knows the slice is inside the matrices (interior), and no test or
    // branch is emitted, so the loads can be scheduled among the multiplies around them.
    template <bool INSIDE = false>
    GT_DEVICE static void issue(const GtGemmArgs& args, unsigned char* stage, int tid, int m0, int n0, int batch,
                                int k0, Regs& r) {
        const gt_i64 M = args.m, N = args.n, K = args.k;
        const TA* A = reinterpret_cast<const TA*>(args.a) + (gt_i64)batch * args.stride_a;
        const TB* B = reinterpret_cast<const TB*>(args.b) + (gt_i64)batch * args.stride_b;
        TA* const lds_a = reinterpret_cast<TA*>(stage);
        TB* const lds_b = reinterpret_cast<TB*>(stage + TileA::BYTES);
        if constexpr (INSIDE) {
            issue_inside<A_KC, TileA, MT0>(A, args.lda, m0, k0, M, K, lds_a, r.a, tid);
            issue_inside<B_KC, TileB, MT1>(B, args.ldb, n0, k0, N, K, lds_b, r.b, tid);
        } else {
            const bool k_inside = k0 + DU <= K;
            issue_operand<A_KC, TileA, MT0>(A, args.lda, m0, k0, M, K, k_inside, lds_a, r.a, tid);
            issue_operand<B_KC, TileB, MT1>(B, args.ldb, n0, k0, N, K, k_inside, lds_b, r.b, tid);
        }
    }

    // One operand's slice known to lie inside its matrix: the loads without bounds tests.
    template <bool KC, class Tile, int ROWS, class E, class R>
    GT_DEVICE static void issue_inside(const E* g, gt_i64 ld, int mn0, int k0, gt_i64 mn_lim, gt_i64 K, E* lds, R& r,
                                       int tid) {
        if constexpr (R::THROUGH) {
            r.template issue<false>(g, ld, mn0, k0, mn_lim, K, tid);
        } else {
            copy_stored<false, KC, Tile, ROWS>(lds, g, ld, mn0, k0, mn_lim, K, tid);
        }
    }

    // Writes the registers `issue` filled into LDS stage `stage`.
    GT_DEVICE static void land(unsigned char* stage, int tid, const Regs& r) {
        if constexpr (RegsA::THROUGH) r.a.template land<TileA>(reinterpret_cast<TA*>(stage), tid);
        if constexpr (RegsB::THROUGH) r.b.template land<TileB>(reinterpret_cast<TB*>(stage + TileA::BYTES), tid);
    }

    // Both halves at once, for the stages loaded before the mainloop starts multiplying.
    GT_DEVICE static void load_stage(const GtGemmArgs& args, unsigned char* stage, int tid, int m0, int n0,
                                     int batch, int k0) {
        Regs r;
        issue(args, stage, tid, m0, n0, batch, k0, r);
        land(stage, tid, r);
    }
};

// The matrix-core path's operand tiles: each in its stored orientation, copied straight in.
template <class Cfg> struct GtStoredOperands {
    typedef GtLdsTileA<Cfg> TileA;
    typedef GtLdsTileB<Cfg> TileB;
    static constexpr bool A_K_CONTIG = Cfg::TRANS_A, B_K_CONTIG = !Cfg::TRANS_B;
    typedef GtRegisterLoader<Cfg, TileA, TileB, GtNoRegs, GtNoRegs> Loader;
};
