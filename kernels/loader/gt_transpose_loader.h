// loader/gt_transpose_loader.h: global -> LDS operand loads for the FMA path, which keeps both
// operand tiles MN-major in LDS ([k][m] and [k][n]) whatever their global layout, so each
// lane reads its runs of rows with one vector per k (mainloop/gt_fma.h) and holds one k of
// operands at a time. An operand that is MN-contiguous in global memory is copied as it is
// (cp.async, loader/gt_vector_loader.h's gt_load_tile); a K-contiguous one is read in
// GlobalReadVectorWidth-element vectors along K into registers and written to LDS transposed,
// one element at a time. The two halves of that copy are separate calls (issue, land;
// loader/gt_register_loader.h) so the mainloop can multiply the current stage while the global
// reads are in flight.
//
//   global (K-contiguous) --(GRVW-element vectors)--> registers --(elements)--> LDS [k][mn]
//   global (MN-contiguous) --(cp.async vectors)--> LDS [k][mn]
#pragma once

// The K-contiguous operand tile of ROWS (mn) x DU (k) at (row0, col0) of `g` (leading
// dimension `ld`, row_lim x col_lim valid), in flight in registers: each of THREADS threads
// holds N vectors of VEC elements. Elements outside the matrix read as zero.
template <class T, int ROWS, int DU, int VEC, int THREADS> struct GtTransposedTile {
    static constexpr bool THROUGH = true;
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

// The FMA path's operand tiles: both MN-major; the K-contiguous ones go through registers.
template <class Cfg> struct GtMnMajorOperands {
    typedef GtLdsTile<typename Cfg::TA, Cfg::DU, Cfg::MT0, Cfg::LPA, Cfg::SWIZZLE> TileA;
    typedef GtLdsTile<typename Cfg::TB, Cfg::DU, Cfg::MT1, Cfg::LPB, Cfg::SWIZZLE> TileB;
    static constexpr bool A_K_CONTIG = false, B_K_CONTIG = false;
    typedef typename GtPick<Cfg::TRANS_A, GtTransposedTile<typename Cfg::TA, Cfg::MT0, Cfg::DU, Cfg::GRVW, Cfg::THREADS>,
                            GtNoRegs>::type RegsA;
    typedef typename GtPick<!Cfg::TRANS_B, GtTransposedTile<typename Cfg::TB, Cfg::MT1, Cfg::DU, Cfg::GRVW, Cfg::THREADS>,
                            GtNoRegs>::type RegsB;
    typedef GtRegisterLoader<Cfg, TileA, TileB, RegsA, RegsB> Loader;
};
