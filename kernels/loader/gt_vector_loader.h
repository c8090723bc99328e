// loader/gt_vector_loader.h: global -> LDS operand loads in vectors of GlobalReadVectorWidth
// elements, each thread moving its share of a stage. On sm_80+ a vector travels by cp.async
// (completed by the mainloop's commit/wait), elsewhere (AMD, older NVIDIA) by a load and an
// LDS store, so the mainloop has one shape everywhere. Elements outside the matrix are
// zero-filled, so the compute loop never tests bounds; tiles entirely inside the matrix take a
// load path without any bounds test.
#pragma once

// Moves one ROWS x COLS tile (stored orientation) at (row0, col0) of `g` (leading dimension
// `ld`, row_lim x col_lim valid) into `lds`. Each of THREADS threads moves TOTAL / THREADS
// vectors of VEC elements. A vector lands in LDS as pieces of PIECE bytes: the largest power of
// two dividing both the vector and the LDS row pitch, so every piece is aligned whatever the
// padding (a 16-byte vector into rows padded by 8 bytes moves as two 8-byte pieces).
template <class Tile, int ROWS, int COLS, int VEC, bool GUARD, int THREADS>
GT_DEVICE void gt_load_tile(typename Tile::Elem* lds, const typename Tile::Elem* g, gt_i64 ld,
                            int row0, int col0, gt_i64 row_lim, gt_i64 col_lim, int tid) {
    typedef typename Tile::Elem T;
    constexpr int ES = int(sizeof(T));
    constexpr int VEC_BYTES = VEC * ES;
    constexpr int PIECE = gt_min(gt_pow2_factor(VEC_BYTES), gt_pow2_factor(Tile::ROW_BYTES));
    constexpr int PIECES = VEC_BYTES / PIECE;
    constexpr int VPR = COLS / VEC;
    constexpr int TOTAL = ROWS * VPR;
    static_assert(COLS % VEC == 0, "a tile row must hold whole vectors");
    // When the vectors do not divide evenly among the threads, the last round is partial.
    constexpr int ROUNDS = (TOTAL + THREADS - 1) / THREADS;
    constexpr bool EVEN = TOTAL % THREADS == 0;
    // Partly unrolled: narrow vectors mean many loads per thread, and fully unrolling them
    // would keep every address live in registers at once.
#pragma unroll 4
    for (int i = 0; i < ROUNDS; ++i) {
        const int v = tid + i * THREADS;
        if (!EVEN && v >= TOTAL) break;
        const int r = v / VPR;
        const int c = (v % VPR) * VEC;
        const T* src = g + (gt_i64)(row0 + r) * ld + (col0 + c);
        int valid = VEC_BYTES;
        if (GUARD) {
            const gt_i64 left = col_lim - (gt_i64)(col0 + c);
            valid = (row0 + r < row_lim && left > 0)
                        ? int(left < VEC ? left : VEC) * ES
                        : 0;
            if (valid == 0) src = g;  // nothing is read; keep the address inside the buffer
        }
#pragma unroll
        for (int p = 0; p < PIECES; ++p) {
            T* dst = lds + Tile::off(r, c + p * PIECE / ES);
            const char* s = reinterpret_cast<const char*>(src) + (valid > p * PIECE ? p * PIECE : 0);
            const int left = valid - p * PIECE;
            const int sb = left <= 0 ? 0 : (left >= PIECE ? PIECE : left);
            gt_copy_async<PIECE>(dst, s, sb);
        }
    }
}

// Loads of one pipeline stage: A's tile, then B's, each in its stored orientation. Every copy
// goes straight to LDS, so the split into issue and land (loader/gt_register_loader.h) has
// nothing to land.
template <class Cfg, class TileA, class TileB> struct GtVectorLoader {
    typedef typename Cfg::TA TA;
    typedef typename Cfg::TB TB;
    static constexpr int MT0 = Cfg::MT0, MT1 = Cfg::MT1, DU = Cfg::DU;
    static constexpr bool TRANS_A = Cfg::TRANS_A, TRANS_B = Cfg::TRANS_B;

    // Loads the DU-deep K slice starting at k0 of the MT0 x MT1 tile at (m0, n0) of batch
    // `batch` into the LDS stage at `stage` (A's tile, then B's).
    GT_DEVICE static void load_stage(const GtGemmArgs& args, unsigned char* stage, int tid, int m0, int n0,
                                     int batch, int k0) {
        const gt_i64 M = args.m, N = args.n, K = args.k;
        const TA* A = reinterpret_cast<const TA*>(args.a) + (gt_i64)batch * args.stride_a;
        const TB* B = reinterpret_cast<const TB*>(args.b) + (gt_i64)batch * args.stride_b;
        const bool m_inside = m0 + MT0 <= M, n_inside = n0 + MT1 <= N;
        TA* la = reinterpret_cast<TA*>(stage);
        TB* lb = reinterpret_cast<TB*>(stage + TileA::BYTES);
        // Stored orientation: (row, col) of A is (m, k) for transA = T and (k, m) otherwise.
        const int ar0 = TRANS_A ? m0 : k0, ac0 = TRANS_A ? k0 : m0;
        const gt_i64 arl = TRANS_A ? M : K, acl = TRANS_A ? K : M;
        const int br0 = TRANS_B ? k0 : n0, bc0 = TRANS_B ? n0 : k0;
        const gt_i64 brl = TRANS_B ? K : N, bcl = TRANS_B ? N : K;
        constexpr int AR = TRANS_A ? MT0 : DU, AC = TRANS_A ? DU : MT0;
        constexpr int BR = TRANS_B ? DU : MT1, BC = TRANS_B ? MT1 : DU;
        constexpr int T = Cfg::THREADS, V = Cfg::GRVW;
        // Each operand takes the bounds-free path when its own tile is inside the matrix (a
        // partial N tile must not slow down the A stream, and vice versa).
        const bool k_inside = k0 + DU <= K;
        if (m_inside && k_inside) {
            gt_load_tile<TileA, AR, AC, V, false, T>(la, A, args.lda, ar0, ac0, arl, acl, tid);
        } else {
            gt_load_tile<TileA, AR, AC, V, true, T>(la, A, args.lda, ar0, ac0, arl, acl, tid);
        }
        if (n_inside && k_inside) {
            gt_load_tile<TileB, BR, BC, V, false, T>(lb, B, args.ldb, br0, bc0, brl, bcl, tid);
        } else {
            gt_load_tile<TileB, BR, BC, V, true, T>(lb, B, args.ldb, br0, bc0, brl, bcl, tid);
        }
    }

    struct Regs {};
    GT_DEVICE static void issue(const GtGemmArgs& args, unsigned char* stage, int tid, int m0, int n0, int batch,
                                int k0, Regs&) {
        load_stage(args, stage, tid, m0, n0, batch, k0);
    }
    GT_DEVICE static void land(unsigned char*, int, const Regs&) {}
};

// The matrix-core path's operand tiles: each in its stored orientation, loaded by
// GtVectorLoader.
template <class Cfg> struct GtStoredOperands {
    typedef GtLdsTileA<Cfg> TileA;
    typedef GtLdsTileB<Cfg> TileB;
    static constexpr bool A_K_CONTIG = Cfg::TRANS_A, B_K_CONTIG = !Cfg::TRANS_B;
    typedef GtVectorLoader<Cfg, TileA, TileB> Loader;
};
