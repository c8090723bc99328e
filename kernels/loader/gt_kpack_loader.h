// loader/gt_kpack_loader.h: TransposeLDS, the matrix-core path's loads for an operand that is
// MN-contiguous in global memory (A with transA = N, B with transB = T). Each thread reads a
// block of KB consecutive k (a 16-byte pack, or 8 bytes of one) by VEC consecutive mn as KB
// vectors of VEC elements along mn, transposes the block in registers and writes it as VEC
// runs along K into the K-major pack layout (layout/gt_kpack_tile.h). The atoms then read that operand
// with the vector reads of a K-contiguous one; the K-contiguous operand of the stage is copied
// as it is stored (loader/gt_register_loader.h).
//
//   global [k][mn] --(KB vectors of VEC mn)--> registers --(transpose)--> VEC runs of KB k
//   --> LDS [k / KP][mn][KP]
//
// Neighbouring lanes take neighbouring mn blocks of one pack, so each of the KB global reads
// of a wave is one contiguous run of 64 * VEC elements. VEC is chosen so that every thread
// has a block where the tile allows it: fewer, wider blocks would leave most of the waves
// idle during the loads and pile the transposes onto the others.
#pragma once

// The widest power of two <= min(want, cap) that divides rows (at least lo where rows allows).
__host__ __device__ constexpr int gt_kpack_vec(int want, int lo, int cap, int rows) {
    int v = 1;
    while (v * 2 <= cap && (v * 2 <= want || v * 2 <= lo) && rows % (v * 2) == 0) v *= 2;
    return v;
}

// The MN-contiguous operand slice of DU (k) x ROWS (mn) at (k0, mn0) of `g` (leading dimension
// `ld`, rows of k), in flight in registers: N blocks of KB x VEC elements per thread.
template <class T, int ROWS, int DU, int GRVW, int THREADS> struct GtKPackRegs {
    static constexpr bool THROUGH = true;
    static constexpr int ES = int(sizeof(T)), KP = 16 / ES;
    // A block's depth: a whole pack of a 16-bit type, half a pack (8 bytes) of an 8-bit one,
    // whose 16 rows would each need an address register pair of their own (gfx942: 260
    // VGPRs for an NT e5m2 128x128 tile on 16-row blocks, 4 of them spilled).
    static constexpr int KB = KP < 8 ? KP : 8;
    // Elements per thread per stage over a block's depth; global reads of at least 4 bytes.
    static constexpr int VEC = gt_kpack_vec(ROWS * DU / (THREADS * KB), 4 / ES, GRVW, ROWS);
    static constexpr int BM = ROWS / VEC, BK = DU / KB, TOTAL = BM * BK;
    static constexpr int N = (TOTAL + THREADS - 1) / THREADS;
    static constexpr bool EVEN = TOTAL % THREADS == 0;
    static_assert(DU % KP == 0, "TransposeLDS needs DepthU in whole 16-byte packs of K");
    static_assert(ROWS % VEC == 0, "blocks must tile the operand's rows");
    typedef typename GtVec<VEC * ES>::type V;
    typedef typename GtVec<KB * ES>::type Run;
    V x[N][KB];

    // Block b of the slice: mn block b % BM, K pack b / BM.
    template <bool GUARD>
    GT_DEVICE void issue(const T* g, gt_i64 ld, int mn0, int k0, gt_i64 mn_lim, gt_i64 k_lim, int tid) {
#pragma unroll
        for (int i = 0; i < N; ++i) {
            const int b = tid + i * THREADS;
            if (!EVEN && b >= TOTAL) break;
            const int mn = mn0 + (b % BM) * VEC, k = k0 + (b / BM) * KB;
#pragma unroll
            for (int r = 0; r < KB; ++r) {
                const T* src = g + (gt_i64)(k + r) * ld + mn;
                if (!GUARD) {
                    x[i][r] = *reinterpret_cast<const V*>(src);
                } else {
                    T* e = reinterpret_cast<T*>(&x[i][r]);
                    const bool k_ok = (gt_i64)(k + r) < k_lim;
#pragma unroll
                    for (int j = 0; j < VEC; ++j) e[j] = k_ok && (gt_i64)(mn + j) < mn_lim ? src[j] : gt_zero<T>();
                }
            }
        }
    }

    // Element j of row r of block i, as the low ES bytes of a word. With whole words per row
    // the element is shifted out of its word (v_perm / prmt material for the compiler);
    // rows narrower than a word are read element by element.
    GT_DEVICE gt_u32 elem(int i, int r, int j) const {
        if constexpr (VEC * ES % 4 == 0) {
            const gt_u32 word = reinterpret_cast<const gt_u32*>(&x[i][r])[j * ES / 4];
            return ES == 4 ? word : (word >> ((j * ES) % 4 * 8)) & ((1u << (8 * ES)) - 1u);
        } else {
            return gt_u32(reinterpret_cast<const T*>(&x[i][r])[j].bits);
        }
    }

    // Writes every block as VEC runs of KB k (a pack or half of one) per mn: word q of the run
    // of column j holds rows q * 4 / ES .. of that column, lowest k in the lowest bytes.
    template <class Tile> GT_DEVICE void land(T* lds, int tid) const {
        static_assert(Tile::KPACK == KP, "the LDS tile's packs are the blocks' depth");
        constexpr int PER_WORD = 4 / ES, WORDS = KB * ES / 4;
#pragma unroll
        for (int i = 0; i < N; ++i) {
            const int b = tid + i * THREADS;
            if (!EVEN && b >= TOTAL) break;
            const int mn = (b % BM) * VEC, k = (b / BM) * KB;
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
                Run run;
                gt_u32* q = reinterpret_cast<gt_u32*>(&run);
#pragma unroll
                for (int w = 0; w < WORDS; ++w) {
                    gt_u32 word = 0;
#pragma unroll
                    for (int e = 0; e < PER_WORD; ++e) word |= elem(i, w * PER_WORD + e, j) << (8 * ES * e);
                    q[w] = word;
                }
                *reinterpret_cast<Run*>(lds + Tile::off(mn + j, k)) = run;
            }
        }
    }
};

// The matrix-core path's operand tiles with TransposeLDS: both K-major in LDS. A K-contiguous
// operand keeps its stored tile (padding, swizzle) and its copy; an MN-contiguous one is
// transposed into K-major packs on the way.
template <class Cfg> struct GtKMajorOperands {
    typedef typename Cfg::TA TA;
    typedef typename Cfg::TB TB;
    static constexpr bool PACK_A = !Cfg::TRANS_A, PACK_B = Cfg::TRANS_B;
    typedef typename GtPick<PACK_A, GtKPackTile<TA, Cfg::MT0, Cfg::DU>, GtLdsTileA<Cfg>>::type TileA;
    typedef typename GtPick<PACK_B, GtKPackTile<TB, Cfg::MT1, Cfg::DU>, GtLdsTileB<Cfg>>::type TileB;
    static constexpr bool A_K_CONTIG = true, B_K_CONTIG = true;
    typedef typename GtPick<PACK_A, GtKPackRegs<TA, Cfg::MT0, Cfg::DU, Cfg::GRVW, Cfg::THREADS>, GtNoRegs>::type RegsA;
    typedef typename GtPick<PACK_B, GtKPackRegs<TB, Cfg::MT1, Cfg::DU, Cfg::GRVW, Cfg::THREADS>, GtNoRegs>::type RegsB;
    typedef GtRegisterLoader<Cfg, TileA, TileB, RegsA, RegsB> Loader;
};
