// loader/gt_transpose_loader.h: global -> LDS operand loads for the FMA path, which keeps both
// operand tiles MN-major in LDS ([k][m] and [k][n]) whatever their global layout, so each
// lane reads its runs of rows with one vector per k (mainloop/gt_fma.h) and holds one k of
// operands at a time. An operand that is MN-contiguous in global memory is copied as it is
// (cp.async, loader/gt_vector_loader.h's gt_load_tile); a K-contiguous one is read in
// GlobalReadVectorWidth-element vectors along K into registers and written to LDS transposed,
// one element at a time. The two halves of that copy are separate calls (issue, land) so the
// mainloop can multiply the current stage while the global reads are in flight.
//
//   global (K-contiguous) --(GRVW-element vectors)--> registers --(elements)--> LDS [k][mn]
//   global (MN-contiguous) --(cp.async vectors)--> LDS [k][mn]
#pragma once

// The K-contiguous operand tile of ROWS (mn) x DU (k) at (row0, col0) of `g` (leading
// dimension `ld`, row_lim x col_lim valid), in flight in registers: each of THREADS threads
// holds N vectors of VEC elements. Elements outside the matrix read as zero.
template <class T, int ROWS, int DU, int VEC, int THREADS> struct GtTransposedTile {
    static constexpr int ES = int(sizeof(T));
    static constexpr int VPR = DU / VEC;
    static constexpr int TOTAL = ROWS * VPR;
    static constexpr int N = (TOTAL + THREADS - 1) / THREADS;
    static constexpr bool EVEN = TOTAL % THREADS == 0;
    static_assert(DU % VEC == 0, "a K slice must hold whole vectors");
    typedef typename GtVec<VEC * ES>::type V;
    V x[N];

    template <bool GUARD>
    GT_DEVICE void issue(const T* g, gt_i64 ld, int row0, int col0, gt_i64 row_lim, gt_i64 col_lim, int tid) {
#pragma unroll
        for (int i = 0; i < N; ++i) {
            const int v = tid + i * THREADS;
            if (!EVEN && v >= TOTAL) break;
            const int r = v / VPR, c = (v % VPR) * VEC;
            const T* src = g + (gt_i64)(row0 + r) * ld + (col0 + c);
            if (!GUARD) {
                x[i] = *reinterpret_cast<const V*>(src);
            } else {
                T* e = reinterpret_cast<T*>(&x[i]);
                const bool row_ok = row0 + r < row_lim;
#pragma unroll
                for (int j = 0; j < VEC; ++j)
                    e[j] = row_ok && (gt_i64)(col0 + c + j) < col_lim ? src[j] : gt_zero<T>();
            }
        }
    }

    // Writes the vectors to the MN-major LDS tile: element (mn = r, k = c + j) at [k][mn].
    template <class Tile> GT_DEVICE void land(T* lds, int tid) const {
#pragma unroll
        for (int i = 0; i < N; ++i) {
            const int v = tid + i * THREADS;
            if (!EVEN && v >= TOTAL) break;
            const int r = v / VPR, c = (v % VPR) * VEC;
            const T* e = reinterpret_cast<const T*>(&x[i]);
#pragma unroll
            for (int j = 0; j < VEC; ++j) lds[Tile::off(c + j, r)] = e[j];
        }
    }
};

template <class Cfg, class TileA, class TileB> struct GtTransposeLoader {
    typedef typename Cfg::TA TA;
    typedef typename Cfg::TB TB;
    static constexpr int MT0 = Cfg::MT0, MT1 = Cfg::MT1, DU = Cfg::DU, T = Cfg::THREADS, V = Cfg::GRVW;
    static constexpr bool A_TRANSPOSED = Cfg::TRANS_A, B_TRANSPOSED = !Cfg::TRANS_B;
    // Registers of the operands that go through them; a placeholder of one element otherwise.
    typedef GtTransposedTile<TA, A_TRANSPOSED ? MT0 : 1, A_TRANSPOSED ? DU : V, V, T> RegsA;
    typedef GtTransposedTile<TB, B_TRANSPOSED ? MT1 : 1, B_TRANSPOSED ? DU : V, V, T> RegsB;
    struct Regs {
        RegsA a;
        RegsB b;
    };

    // One operand's ROWS x DU slice at (mn0, k0) (mn_lim x K valid): into its registers `r`
    // when TRANSPOSED, else straight into its LDS tile `lds`. A slice inside the matrix takes
    // the path without bounds tests.
    template <bool TRANSPOSED, class Tile, int ROWS, class E, class R>
    GT_DEVICE static void issue_operand(const E* g, gt_i64 ld, int mn0, int k0, gt_i64 mn_lim, gt_i64 K,
                                        bool k_inside, E* lds, R& r, int tid) {
        const bool inside = mn0 + ROWS <= mn_lim && k_inside;
        if constexpr (TRANSPOSED) {
            if (inside) {
                r.template issue<false>(g, ld, mn0, k0, mn_lim, K, tid);
            } else {
                r.template issue<true>(g, ld, mn0, k0, mn_lim, K, tid);
            }
        } else {
            if (inside) {
                gt_load_tile<Tile, DU, ROWS, V, false, T>(lds, g, ld, k0, mn0, K, mn_lim, tid);
            } else {
                gt_load_tile<Tile, DU, ROWS, V, true, T>(lds, g, ld, k0, mn0, K, mn_lim, tid);
            }
        }
    }

    // Starts the loads of the DU-deep K slice at k0 of the tile at (m0, n0) of `batch`: the
    // MN-contiguous operands straight into LDS stage `stage`, the K-contiguous ones into `r`.
    GT_DEVICE static void issue(const GtGemmArgs& args, unsigned char* stage, int tid, int m0, int n0, int batch,
                                int k0, Regs& r) {
        const gt_i64 M = args.m, N = args.n, K = args.k;
        const TA* A = reinterpret_cast<const TA*>(args.a) + (gt_i64)batch * args.stride_a;
        const TB* B = reinterpret_cast<const TB*>(args.b) + (gt_i64)batch * args.stride_b;
        const bool k_inside = k0 + DU <= K;
        issue_operand<A_TRANSPOSED, TileA, MT0>(A, args.lda, m0, k0, M, K, k_inside, reinterpret_cast<TA*>(stage),
                                                r.a, tid);
        issue_operand<B_TRANSPOSED, TileB, MT1>(B, args.ldb, n0, k0, N, K, k_inside,
                                                reinterpret_cast<TB*>(stage + TileA::BYTES), r.b, tid);
    }

    // Writes the registers `issue` filled into LDS stage `stage`.
    GT_DEVICE static void land(unsigned char* stage, int tid, const Regs& r) {
        if constexpr (A_TRANSPOSED) r.a.template land<TileA>(reinterpret_cast<TA*>(stage), tid);
        if constexpr (B_TRANSPOSED) r.b.template land<TileB>(reinterpret_cast<TB*>(stage + TileA::BYTES), tid);
    }

    // Both halves at once, for the stages loaded before the mainloop starts multiplying.
    GT_DEVICE static void load_stage(const GtGemmArgs& args, unsigned char* stage, int tid, int m0, int n0,
                                     int batch, int k0) {
        Regs r;
        issue(args, stage, tid, m0, n0, batch, k0, r);
        land(stage, tid, r);
    }
};

// The FMA path's operand tiles: both MN-major, loaded by GtTransposeLoader.
template <class Cfg> struct GtMnMajorOperands {
    typedef GtLdsTile<typename Cfg::TA, Cfg::DU, Cfg::MT0, Cfg::LPA, Cfg::SWIZZLE> TileA;
    typedef GtLdsTile<typename Cfg::TB, Cfg::DU, Cfg::MT1, Cfg::LPB, Cfg::SWIZZLE> TileB;
    static constexpr bool A_K_CONTIG = false, B_K_CONTIG = false;
    typedef GtTransposeLoader<Cfg, TileA, TileB> Loader;
};
