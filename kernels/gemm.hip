// gemm.hip: the parameterised GEMM template, D = alpha * op(A) * op(B) + beta * C, column-major.
//
// codegen (src/compile/codegen.rs) specialises it with `#define GT_*` lines; the constraints in
// src/space/constraints.rs say which combinations are valid, and every valid one must compile
// and be correct. One workgroup computes one MT0 x MT1 tile of D (of one batch, blockIdx.z) over
// its share of K (blockIdx.y of GSU splits):
//
//   global --(GRVW-element vectors; cp.async on sm_80+;
//            MI 64x8x16: tensor-map boxes through the tensor memory accelerator)--> LDS ring of PGR stages
//          --(atom fragments: ldmatrix + mma.sync / MFMA, or f32 FMA for MI 1x1x1)--> registers
//          (MI 64x8x16, GT_WGMMA: warpgroups of 4 warps multiply the LDS tiles in place with
//           asynchronous wgmma, sm_90a, into accumulator registers; with GT_PRODUCER_WARP one
//           extra warp issues the loads and the warpgroups only multiply)
//          --(f32 tile staged through LDS)--> SVW-element stores of D (GSU = 1)
//                                          or f32 partials in the workspace (GSU > 1), which
//                                             <name>_epilogue turns into D (a second launch,
//                                             a programmatic dependent on sm_90),
//                                          or (GT_GSU_SINGLE_KERNEL) are summed by the split
//                                             of the tile that finishes last, which stores D.
//
// With stream-K (GT_STREAM_K) the grid is GSU persistent workgroups per compute unit instead,
// each walking an equal share of all (tile, K tile) iterations; tiles shared by several
// workgroups are summed in the kernel itself by the last one to finish (see GtStreamK).
//
// Operand tiles are kept in LDS in their global orientation (rows along the operand's strided
// dimension, each row contiguous along the stored leading dimension, plus LPA/LPB elements of
// padding or an XOR swizzle of 16-byte chunks), so a global vector is one contiguous LDS write;
// the atoms read transposed when they need to (ldmatrix .trans). The wgmma path keeps both
// operands K-major in the 128-byte swizzle layout its descriptors describe (GtSw128Tile), which
// is also what its tensor maps write. Elements outside the matrix are zero-filled while loading,
// so the compute loop never tests bounds; tiles entirely inside the matrix take a load path
// without any bounds test.
#include "gt_args.h"
#include "gt_platform.h"
#include "gt_mma.h"

// Failures planted on purpose (`gemmtune --plant`), to test that the harness isolates them.
#ifdef GT_PLANT_COMPILE_ERROR
#error "planted compile failure (gemmtune --plant)"
#endif

typedef GT_TYPE_A TA;
typedef GT_TYPE_B TB;
typedef GT_TYPE_C TC;
typedef GT_TYPE_D TD;

constexpr int MT0 = GT_MT0, MT1 = GT_MT1, DU = GT_DU;
constexpr int WG0 = GT_WG0, WG1 = GT_WG1;
constexpr int WAVE = GT_VENDOR_AMD ? 64 : 32;
constexpr int THREADS = GT_THREADS;
// ProducerWarp (GT_PRODUCER_WARP, wgmma only): one warp beyond the THREADS that compute issues
// the loads. Codegen names it only when set.
#ifndef GT_PRODUCER_WARP
#define GT_PRODUCER_WARP 0
#endif
static_assert(!GT_PRODUCER_WARP || (GT_WGMMA && !GT_STREAM_K), "ProducerWarp is for the wgmma path, without stream-K");
constexpr int LAUNCH_THREADS = THREADS + (GT_PRODUCER_WARP ? WAVE : 0);
// GT_GSU_SINGLE_KERNEL (GSU > 1 only): the split partials are summed in the main kernel by the
// last split of each tile to finish, instead of by a reduction kernel. Named only when set.
#ifndef GT_GSU_SINGLE_KERNEL
#define GT_GSU_SINGLE_KERNEL 0
#endif
static_assert(!GT_GSU_SINGLE_KERNEL || (GT_GSU > 1 && !GT_STREAM_K && !GT_GSU_ATOMIC),
              "the single-kernel reduction is a way to sum GSU > 1 workspace partials");
// Whether split partials go to the workspace for the <name>_epilogue kernel to sum.
#define GT_REDUCTION_KERNEL (GT_GSU > 1 && !GT_STREAM_K && !GT_GSU_SINGLE_KERNEL)
constexpr int STAGES = GT_PGR;
constexpr int WT0 = MT0 / WG0, WT1 = MT1 / WG1;
constexpr bool USE_MMA = GT_MI_M > 1;
constexpr bool TRANS_A = GT_TRANS_A, TRANS_B = GT_TRANS_B;
constexpr bool SWIZZLE = GT_SWIZZLE;

static_assert(THREADS == WG0 * WG1 * WAVE, "GT_THREADS must equal WG0 * WG1 * wave size");
static_assert(MT0 % WG0 == 0 && MT1 % WG1 == 0, "waves must split the macro tile evenly");
static_assert(STAGES >= 1 && STAGES <= (GT_WGMMA ? 16 : 4), "PrefetchGlobalRead is 1..4 (1..16 with wgmma)");

// Compile-time helpers, usable in device code (nvcc needs __host__ __device__ for that).
__host__ __device__ constexpr int gt_min(int a, int b) { return a < b ? a : b; }
__host__ __device__ constexpr int gt_abs(int a) { return a < 0 ? -a : a; }
// Largest power of two dividing x (x > 0).
__host__ __device__ constexpr int gt_pow2_factor(int x) { return x & -x; }

// ---- LDS layout of one operand tile ----------------------------------------------------------
// ROWS rows of COLS contiguous elements (+ PAD). With SWZ, the 16-byte chunks of row r are
// permuted by XOR with r modulo SPAN (the largest power of two <= 8 that divides the chunks per
// row), which spreads the rows an ldmatrix reads together over distinct banks.
template <class T, int ROWS, int COLS, int PAD, bool SWZ> struct GtLdsTile {
    typedef T Elem;
    static constexpr int LD = COLS + PAD;
    static constexpr int ELEMS = ROWS * LD;
    static constexpr int BYTES = ELEMS * int(sizeof(T));
    static constexpr int ROW_BYTES = LD * int(sizeof(T));
    static constexpr int CHUNKS = COLS * int(sizeof(T)) / 16;
    static constexpr int SPAN = SWZ ? gt_min(gt_pow2_factor(CHUNKS > 0 ? CHUNKS : 1), 8) : 1;
    static_assert(!SWZ || (PAD == 0 && COLS * sizeof(T) % 16 == 0),
                  "the LDS swizzle needs unpadded rows of whole 16-byte chunks");
    static_assert(BYTES % 16 == 0, "every LDS tile must keep the next one 16-byte aligned");

    GT_DEVICE static int off(int row, int col) {
        if (SWZ) {
            const int byte = col * int(sizeof(T));
            const int chunk = (byte >> 4) ^ (row & (SPAN - 1));
            return row * LD + ((chunk << 4) | (byte & 15)) / int(sizeof(T));
        }
        return row * LD + col;
    }
};

// The view of an operand tile the atoms and the FMA loop read: element (mn, k), where mn is
// m for A and n for B, whatever the LDS orientation.
template <class Tile, bool KC> struct GtView {
    typedef typename Tile::Elem T;
    static constexpr bool K_CONTIG = KC;
    static constexpr bool ROWS_16B = sizeof(T) == 2 && Tile::ROW_BYTES % 16 == 0;
    const T* base;
    GT_DEVICE const T* ptr(int mn, int k) const {
        return base + (KC ? Tile::off(mn, k) : Tile::off(k, mn));
    }
    GT_DEVICE T at(int mn, int k) const { return *ptr(mn, k); }
};

#if GT_WGMMA
// ---- LDS layout of a wgmma operand tile (K-major, 128-byte swizzle) --------------------------
// ROWS rows (m or n) of COLS elements of K, cut into slabs of 128 bytes of K: slab s holds
// columns [64s, 64s + 64) (16-bit elements) of every row, one 128-byte row after another, and
// 16-byte chunk c of row r sits at chunk c ^ (r % 8). That is the layout the descriptor's
// swizzle mode 1 reads (see gt_mma_nvidia.h) and what a tensor map with 128-byte swizzle
// writes, one box of 64 elements by ROWS per slab (GtTmaRing).
template <class T, int ROWS, int COLS> struct GtSw128Tile {
    typedef T Elem;
    static constexpr int ES = int(sizeof(T));
    static constexpr int SLAB_COLS = GT_SW128_ROW_BYTES / ES;
    static constexpr int SLAB_BYTES = ROWS * GT_SW128_ROW_BYTES;
    static constexpr int BYTES = (COLS / SLAB_COLS) * SLAB_BYTES;
    // Pitch seen by the loader: vectors never straddle a 16-byte chunk.
    static constexpr int ROW_BYTES = GT_SW128_ROW_BYTES;
    static constexpr int ELEMS = BYTES / ES;
    static_assert(ES == 2 && COLS % SLAB_COLS == 0 && ROWS % 8 == 0,
                  "wgmma tiles are 16-bit, whole 128-byte rows, whole 8-row groups");
    static_assert(SLAB_BYTES % GT_SW128_PERIOD == 0, "every slab keeps the swizzle period aligned");

    // Byte offset of (row, col); for a row that is a multiple of 8 and a col that is a multiple
    // of 8 this is also the logical address a descriptor starts at.
    GT_DEVICE static constexpr int byte_off(int row, int col) {
        return (col / SLAB_COLS) * SLAB_BYTES + row * GT_SW128_ROW_BYTES +
               ((((col % SLAB_COLS) * ES >> 4) ^ (row & 7)) << 4) + ((col % SLAB_COLS) * ES & 15);
    }
    GT_DEVICE static int off(int row, int col) { return byte_off(row, col) / ES; }
};
static_assert(TRANS_A && !TRANS_B, "the wgmma path needs both operands K-contiguous (layout TN)");
typedef GtSw128Tile<TA, MT0, DU> TileA;
typedef GtSw128Tile<TB, MT1, DU> TileB;
#else
// A: K-contiguous rows of m when transA = T, else M-contiguous rows of k (same for B with n).
typedef GtLdsTile<TA, TRANS_A ? MT0 : DU, TRANS_A ? DU : MT0, GT_LPA, SWIZZLE> TileA;
typedef GtLdsTile<TB, TRANS_B ? DU : MT1, TRANS_B ? MT1 : DU, GT_LPB, SWIZZLE> TileB;
#endif
typedef GtView<TileA, TRANS_A> ViewA;
typedef GtView<TileB, !TRANS_B> ViewB;
constexpr int STAGE_BYTES = TileA::BYTES + TileB::BYTES;

// ---- global -> LDS tile loads ----------------------------------------------------------------
// Each thread moves TOTAL / THREADS vectors of VEC elements. A vector lands in LDS as pieces of
// PIECE bytes: the largest power of two dividing both the vector and the LDS row pitch, so every
// piece is aligned whatever the padding (a 16-byte vector into rows padded by 8 bytes moves as
// two 8-byte pieces). Pieces of 4+ bytes use cp.async on sm_80+.
template <class Tile, int ROWS, int COLS, int VEC, bool GUARD>
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


// ---- the per-wave compute of one LDS stage ---------------------------------------------------
#if GT_WGMMA
// Warpgroup g (warps 4g..4g+3, consecutive along M) owns a WGT0 x WGT1 tile of C: SLICES
// slices of 64 rows, each one m64n<WGT1>k16 wgmma per 16 of K. gt_wgmma_m64k16 is generated
// for the instruction's N (codegen.rs), with N/2 accumulator operands.
//
// SwapAB (GT_SWAP_AB) computes the transposed tile instead, D^T = B^T A^T: the instruction's
// 64-row slices run along N (B's rows) and its N along M (A's rows, any multiple of 8 up to
// 256). A skinny problem can then take M tiles such as 48, 80 or 224 rows, which fill the
// compute units in one wave where multiples of 64 leave part of them idle.
#ifndef GT_SWAP_AB
#define GT_SWAP_AB 0
#endif
constexpr bool SWAP = GT_SWAP_AB;
constexpr int WGS_M = WG0 / 4;
constexpr int WGT0 = MT0 / WGS_M, WGT1 = MT1 / WG1;
// The warpgroup tile's extent cut into 64-row slices, and the instruction's N.
constexpr int SLICED = SWAP ? WGT1 : WGT0, INSTR_N = SWAP ? WGT0 : WGT1;
constexpr int SLICES = SLICED / 64, KSTEPS = DU / 16;
constexpr int ACC_SLICE = INSTR_N / 2;
constexpr int ACC = SLICES * ACC_SLICE;
static_assert(WG0 % 4 == 0 && MT0 % WGS_M == 0 && SLICED % 64 == 0,
              "warpgroups of 4 warps along M, each a whole number of 64-row slices");
static_assert(INSTR_N % 8 == 0 && INSTR_N <= 256, "the instruction's N is a multiple of 8, at most 256");
static_assert(GT_WGMMA_N == INSTR_N, "the generated wgmma function must match the warpgroup tile");

template <bool C, class X, class Y> struct GtPick { typedef X type; };
template <class X, class Y> struct GtPick<false, X, Y> { typedef Y type; };
// The operand tile the slices come from, and the one the instruction's N runs along.
typedef GtPick<SWAP, TileB, TileA>::type TileS;
typedef GtPick<SWAP, TileA, TileB>::type TileN;

// Issues the wgmmas of one LDS stage for this warpgroup as one commit group; the caller waits
// for it. `ds` and `dn` are the low descriptor words of this warpgroup's first sliced row and
// first instruction-N row in the stage (A's and B's, or B's and A's when swapped); each
// wgmma's is a constant offset >> 4 from them: 32 bytes per k16 step inside a slab, a slab per
// 64 of K, 8 KiB per 64-row slice. 32-bit adds only: the high word is a constant.
GT_DEVICE void gt_compute_stage(float (&acc)[ACC], gt_u32 ds, gt_u32 dn) {
    gt_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk) {
        const gt_u64 dnk = gt_wgmma_desc(dn + gt_u32(TileN::byte_off(0, kk * 16) >> 4));
#pragma unroll
        for (int s = 0; s < SLICES; ++s) {
            const gt_u64 dsk = gt_wgmma_desc(ds + gt_u32(TileS::byte_off(s * 64, kk * 16) >> 4));
            gt_wgmma_m64k16(*reinterpret_cast<float(*)[ACC_SLICE]>(&acc[s * ACC_SLICE]), dsk, dnk);
        }
    }
    gt_wgmma_commit();
}

// Waits until at most N of this warpgroup's stages are still being multiplied, then fences
// the accumulators so that no access to them moves before the wait.
template <int N> GT_DEVICE void gt_wgmma_settle(float (&acc)[ACC]) {
    gt_wgmma_wait<N>();
#pragma unroll
    for (int i = 0; i < ACC; ++i) gt_reg_fence(acc[i]);
}

// Accumulator register `idx` of this lane -> (m, n) relative to its warp's origin (row 16w of
// the warpgroup tile's sliced extent, w = warp within the warpgroup). Per slice and per 8
// instruction columns j, the 4 registers are (r, c), (r, c+1), (r+8, c), (r+8, c+1) with
// r = lane/4, c = 8j + 2*(lane%4); rows are m and columns n, or the other way when swapped.
GT_DEVICE void gt_acc_coord(int lane, int idx, int& m, int& n) {
    const int s = idx / ACC_SLICE, r = idx % ACC_SLICE;
    const int j = r / 4, q = r % 4;
    const int row = s * 64 + (lane >> 2) + (q >> 1) * 8, col = j * 8 + (lane & 3) * 2 + (q & 1);
    m = SWAP ? col : row;
    n = SWAP ? row : col;
}
#elif GT_MI_M > 1
constexpr int TM = WT0 / GtAtom::M, TN = WT1 / GtAtom::N, KSTEPS = DU / GtAtom::K;
static_assert(WT0 % GtAtom::M == 0 && WT1 % GtAtom::N == 0 && DU % GtAtom::K == 0,
              "wave tile and DepthU must be whole matrix instructions");
constexpr int ACC = TM * TN * GtAtom::C_REGS;

GT_DEVICE void gt_load_frags(GtAtom::FragA (&fa)[TM], GtAtom::FragB (&fb)[TN], const ViewA& va,
                             const ViewB& vb, int wm0, int wn0, int kk, int lane) {
#pragma unroll
    for (int i = 0; i < TM; ++i) GtAtom::load_a(fa[i], va, wm0 + i * GtAtom::M, kk * GtAtom::K, lane);
#pragma unroll
    for (int j = 0; j < TN; ++j) GtAtom::load_b(fb[j], vb, kk * GtAtom::K, wn0 + j * GtAtom::N, lane);
}

GT_DEVICE void gt_mma_tile(float (&acc)[ACC], const GtAtom::FragA (&fa)[TM],
                           const GtAtom::FragB (&fb)[TN]) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            GtAtom::mma(*reinterpret_cast<float(*)[GtAtom::C_REGS]>(&acc[(i * TN + j) * GtAtom::C_REGS]),
                        fa[i], fb[j]);
}

GT_DEVICE void gt_compute_stage(float (&acc)[ACC], const ViewA& va, const ViewB& vb, int wm0,
                                int wn0, int lane) {
#if GT_PLR
    // PrefetchLocalRead: the fragments of step kk+1 are read while step kk multiplies.
    GtAtom::FragA fa[2][TM];
    GtAtom::FragB fb[2][TN];
    gt_load_frags(fa[0], fb[0], va, vb, wm0, wn0, 0, lane);
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk) {
        if (kk + 1 < KSTEPS) gt_load_frags(fa[(kk + 1) & 1], fb[(kk + 1) & 1], va, vb, wm0, wn0, kk + 1, lane);
        gt_mma_tile(acc, fa[kk & 1], fb[kk & 1]);
    }
#else
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk) {
        GtAtom::FragA fa[TM];
        GtAtom::FragB fb[TN];
        gt_load_frags(fa, fb, va, vb, wm0, wn0, kk, lane);
        gt_mma_tile(acc, fa, fb);
    }
#endif
}

// Accumulator register `idx` of this lane -> (m, n) inside the wave tile.
GT_DEVICE void gt_acc_coord(int lane, int idx, int& m, int& n) {
    const int tile = idx / GtAtom::C_REGS, r = idx % GtAtom::C_REGS;
    GtAtom::c_coord(lane, r, m, n);
    m += (tile / TN) * GtAtom::M;
    n += (tile % TN) * GtAtom::N;
}
#else
// FMA path: the wave tile is split over a LM x LN grid of lanes, each owning an FM x FN
// sub-tile of rows lm + i*LM and columns ln + j*LN (strided, so neighbouring lanes read
// neighbouring LDS words). LM is the power of two that makes the sub-tile squarest.
__host__ __device__ constexpr int gt_fma_lm() {
    int best = 0, best_score = 1 << 30;
    for (int lm = 1; lm <= WAVE; lm *= 2) {
        const int ln = WAVE / lm;
        if (WT0 % lm != 0 || WT1 % ln != 0) continue;
        const int score = gt_abs(WT0 / lm - WT1 / ln);
        if (score < best_score) { best = lm; best_score = score; }
    }
    return best;
}
constexpr int LM = gt_fma_lm();
static_assert(LM > 0, "FMA wave tile must give every lane a whole sub-tile");
constexpr int LN = WAVE / LM, FM = WT0 / LM, FN = WT1 / LN;
constexpr int ACC = FM * FN;

GT_DEVICE void gt_compute_stage(float (&acc)[ACC], const ViewA& va, const ViewB& vb, int wm0,
                                int wn0, int lane) {
    const int lm = lane % LM, ln = lane / LM;
#pragma unroll 4
    for (int k = 0; k < DU; ++k) {
        float a[FM], b[FN];
#pragma unroll
        for (int i = 0; i < FM; ++i) a[i] = gt_to_f32(va.at(wm0 + lm + i * LM, k));
#pragma unroll
        for (int j = 0; j < FN; ++j) b[j] = gt_to_f32(vb.at(wn0 + ln + j * LN, k));
#pragma unroll
        for (int i = 0; i < FM; ++i)
#pragma unroll
            for (int j = 0; j < FN; ++j) acc[i * FN + j] = fmaf(a[i], b[j], acc[i * FN + j]);
    }
}

GT_DEVICE void gt_acc_coord(int lane, int idx, int& m, int& n) {
    m = lane % LM + (idx / FN) * LM;
    n = lane / LM + (idx % FN) * LN;
}
#endif

// ---- epilogue staging tile: f32 [MT1][MT0], m XOR-permuted in groups of 8 by n so the MMA
// lanes that write one column group hit different banks; groups of 8 stay contiguous, so an
// SVW-wide read (SVW <= 8) is one contiguous, SVW-aligned run.
// The mask keeps m inside its aligned group of 8 * (mask + 1) rows, which MT0 must hold whole.
// An unswapped wgmma store writes 8 rows of columns n, n+2, n+4, n+6: permuting by n / 2 gives
// those four columns four different groups of banks (by n, n and n+4 would share them).
constexpr int EPI_MASK = gt_min(gt_pow2_factor(MT0 / 8), 4) - 1;
#if GT_WGMMA
constexpr int EPI_SHIFT = SWAP ? 0 : 1;
#else
constexpr int EPI_SHIFT = 0;
#endif
GT_DEVICE int gt_epi_off(int m, int n) { return n * MT0 + (m ^ (((n >> EPI_SHIFT) & EPI_MASK) << 3)); }
static_assert(GT_SVW <= 8 && MT0 % GT_SVW == 0, "StoreVectorWidth must divide MT0, at most 8");

// Four floats moved as one 16-byte vector (staged runs here, partial tiles in the fix-ups).
struct __align__(16) GtF4 { float x, y, z, w; };

// Reads the staged run of V floats at `src` (V-aligned) as vectors. For V = 8, lanes of odd
// quads read their second half first: eight lanes reading 32-byte runs 32 bytes apart would
// hit each bank twice per 16-byte load, staggered they cover all 32 banks once.
template <int V> GT_DEVICE void gt_read_run(const float* src, float (&x)[V], int lane) {
    if constexpr (V == 8) {
        const GtF4* const run = reinterpret_cast<const GtF4*>(src);
        const int first = (lane >> 2) & 1;
        const GtF4 a = run[first], b = run[first ^ 1];
        // Selected, not indexed: a lane-dependent index would put x in local memory.
        const GtF4 lo = first ? b : a, hi = first ? a : b;
        x[0] = lo.x;
        x[1] = lo.y;
        x[2] = lo.z;
        x[3] = lo.w;
        x[4] = hi.x;
        x[5] = hi.y;
        x[6] = hi.z;
        x[7] = hi.w;
    } else if constexpr (V == 4) {
        const GtF4 v = *reinterpret_cast<const GtF4*>(src);
        x[0] = v.x;
        x[1] = v.y;
        x[2] = v.z;
        x[3] = v.w;
    } else {
#pragma unroll
        for (int e = 0; e < V; ++e) x[e] = src[e];
    }
}

template <class T> GT_DEVICE bool gt_aligned(const T* p, int bytes) {
    return (reinterpret_cast<gt_u64>(p) & gt_u64(bytes - 1)) == 0;
}

// ---- workgroup -> tile mapping ---------------------------------------------------------------
// WorkGroupMapping: consecutive workgroups walk down a group of WGM tile rows (along M) before
// moving to the next tile column, so the B columns they share stay in L2.
GT_DEVICE void gt_tile_of(int id, int tiles_m, int tiles_n, int& tm, int& tn) {
    const int per_group = GT_WGM * tiles_n;
    const int group = id / per_group;
    const int first_m = group * GT_WGM;
    const int rows = (tiles_m - first_m) < GT_WGM ? (tiles_m - first_m) : GT_WGM;
    const int in_group = id - group * per_group;
    tm = first_m + in_group % rows;
    tn = in_group / rows;
}

// Where this thread's warp sits in the workgroup tile.
struct GtPos {
    int tid, lane;
    int wm0, wn0;   // the warp's accumulator origin
    int wgm0, wgn0; // the warpgroup's origin (wgmma path)
};

// ---- one pipeline stage ---------------------------------------------------------------------
// Loads the DU-deep K slice starting at k0 of the MT0 x MT1 tile at (m0, n0) of batch `batch`
// into the LDS stage at `stage` (A's tile, then B's).
GT_DEVICE void gt_load_stage(const GtGemmArgs& args, unsigned char* stage, int tid, int m0, int n0,
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
    // Each operand takes the bounds-free path when its own tile is inside the matrix (a
    // partial N tile must not slow down the A stream, and vice versa).
    const bool k_inside = k0 + DU <= K;
    if (m_inside && k_inside) {
        gt_load_tile<TileA, AR, AC, GT_GRVW, false>(la, A, args.lda, ar0, ac0, arl, acl, tid);
    } else {
        gt_load_tile<TileA, AR, AC, GT_GRVW, true>(la, A, args.lda, ar0, ac0, arl, acl, tid);
    }
    if (n_inside && k_inside) {
        gt_load_tile<TileB, BR, BC, GT_GRVW, false>(lb, B, args.ldb, br0, bc0, brl, bcl, tid);
    } else {
        gt_load_tile<TileB, BR, BC, GT_GRVW, true>(lb, B, args.ldb, br0, bc0, brl, bcl, tid);
    }
}

#if !GT_WGMMA
// Multiplies the operand tiles of LDS stage `slot` into `acc` (the warpgroup path multiplies
// through GtTmaRing::multiply instead).
GT_DEVICE void gt_consume_stage(float (&acc)[ACC], unsigned char* smem, int slot, const GtPos& pos) {
    unsigned char* const st = smem + slot * STAGE_BYTES;
    const ViewA va{reinterpret_cast<const TA*>(st)};
    const ViewB vb{reinterpret_cast<const TB*>(st + TileA::BYTES)};
    gt_compute_stage(acc, va, vb, pos.wm0, pos.wn0, pos.lane);
}
#else
// ---- wgmma operand stages through the tensor memory accelerator -----------------------------
// A ring of STAGES LDS slots with one mbarrier each: thread 0 announces a stage's bytes and
// issues one box per operand and 64 of K (the tensor maps in the arguments describe A and B as
// (K, rows, batch) with the 128-byte swizzle GtSw128Tile has), every thread waits for the
// slot's phase. Edges cost nothing: the maps zero-fill whatever lies outside the matrices.
// The ring also knows the descriptor words of this warpgroup's rows in slot 0, computed once:
// a slot's are a constant offset from them.
struct GtTmaRing {
    gt_u32 lds, bar0;  // LDS address of slot 0 and of the first barrier
    gt_u32 ds0, dn0;   // low descriptor words of this warpgroup's first sliced and N rows in slot 0

    // Byte offsets in a slot of this warpgroup's first A row and first B row.
    GT_DEVICE static int a_row0(const GtPos& pos) { return TileA::byte_off(pos.wgm0, 0); }
    GT_DEVICE static int b_row0(const GtPos& pos) { return TileA::BYTES + TileB::byte_off(pos.wgn0, 0); }

    // Thread 0 initialises the barriers; the caller's next barrier publishes them.
    GT_DEVICE GtTmaRing(unsigned char* smem, gt_u64* bars, const GtPos& pos)
        : lds(gt_lds_addr(smem)), bar0(gt_lds_addr(bars)),
          ds0(gt_wgmma_desc_lo(lds + gt_u32(SWAP ? b_row0(pos) : a_row0(pos)))),
          dn0(gt_wgmma_desc_lo(lds + gt_u32(SWAP ? a_row0(pos) : b_row0(pos)))) {
        if (pos.tid == 0) {
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
            gt_tma_load_3d(st + gt_u32(TileA::BYTES + j * TileB::SLAB_BYTES), &args.tma_b, k0 + 64 * j,
                           n0, batch, bar);
        }
    }
    // Waits for the t-th stage loaded since the ring was set up: the (t / STAGES)-th fill of
    // slot t % STAGES completes that phase of its barrier.
    GT_DEVICE void wait(int t) const { gt_mbar_wait(bar0 + 8 * (t % STAGES), gt_u32(t / STAGES) & 1u); }
    // Issues this warpgroup's wgmmas on `slot` as one commit group; the caller waits for it.
    GT_DEVICE void multiply(float (&acc)[ACC], int slot) const {
        const gt_u32 off = gt_u32(slot * (STAGE_BYTES >> 4));
        gt_compute_stage(acc, ds0 + off, dn0 + off);
    }
};
#endif

// The K tiles one workgroup accumulates: [begin, begin + count), visited from `start` on and
// wrapping around (StaggerU).
struct GtKRange {
    int begin, count, start;
    // K offset of the local-th tile visited.
    GT_DEVICE int k0(int local) const {
        int kt = start + local;
        if (kt >= count) kt -= count;
        return (begin + kt) * DU;
    }
};

#if GT_PRODUCER_WARP
// ---- warp-specialised main loop (ProducerWarp) ---------------------------------------------
// One warp more than the warpgroups, the producer, keeps the ring full: its lane 0 waits for
// a slot to be released, then issues the slot's tensor-map loads. The warpgroups only wait
// for their data, multiply, and release a slot once their wgmmas on it are done: every
// consumer warp arrives on the slot's "free" barrier. No workgroup barrier sits in the loop,
// so a slot is refilled as soon as the last warp is done with it and the warpgroups never
// wait for each other; all STAGES slots can be in flight.
constexpr int CONSUMER_WARPS = THREADS / WAVE;
// Same contract as gt_mainloop.
GT_DEVICE void gt_mainloop_ws(const GtGemmArgs& args, unsigned char* smem, const GtPos& pos, int m0,
                              int n0, int batch, const GtKRange& kr, float (&acc)[ACC]) {
    __shared__ __align__(8) gt_u64 gt_slot_bars[STAGES];
    __shared__ __align__(8) gt_u64 gt_free_bars[STAGES];
    const GtTmaRing ring(smem, gt_slot_bars, pos);
    const gt_u32 free0 = gt_lds_addr(gt_free_bars);
    if (pos.tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) gt_mbar_init(free0 + 8 * s, CONSUMER_WARPS);
        gt_mbar_init_fence();
    }
    gt_barrier();
    if (pos.tid >= THREADS) {
        if (pos.lane == 0) {
            for (int t = 0; t < kr.count; ++t) {
                const int slot = t % STAGES;
                // The f-th refill of a slot waits for the release of the fill before it,
                // which completes phase f - 1 of the slot's free barrier.
                if (t >= STAGES) gt_mbar_wait(free0 + 8 * slot, gt_u32(t / STAGES - 1) & 1u);
                ring.load(args, slot, kr.k0(t), m0, n0, batch);
            }
        }
        __syncwarp();  // the warp reaches the barrier below converged
    } else {
        // IN_FLIGHT stages stay in the tensor cores while the next one is issued; the stage
        // before them is done and its slot goes back to the producer.
        constexpr int IN_FLIGHT = GT_PLR;
        for (int t = 0; t < kr.count; ++t) {
            ring.wait(t);
            ring.multiply(acc, t % STAGES);
            gt_wgmma_settle<IN_FLIGHT>(acc);
            if (t >= IN_FLIGHT && pos.lane == 0) gt_mbar_arrive(free0 + 8 * ((t - IN_FLIGHT) % STAGES));
        }
        gt_wgmma_settle<0>(acc);
    }
    // Every load was waited for, and the warpgroups finish their last wgmmas independently:
    // the LDS becomes the output tile only when all are done.
    gt_barrier();
}
#endif

// ---- main loop -------------------------------------------------------------------------------
// Accumulates the K tiles of `kr` of the MT0 x MT1 tile at (m0, n0) of batch `batch` into
// `acc` (which the caller zeroed). On return every copy has landed and every warp is past its
// last read of the operand tiles: the LDS is free for the output tile.
GT_DEVICE void gt_mainloop(const GtGemmArgs& args, unsigned char* smem, const GtPos& pos, int m0,
                           int n0, int batch, const GtKRange& kr, float (&acc)[ACC]) {
#if GT_WGMMA
    __shared__ __align__(8) gt_u64 gt_slot_bars[STAGES];
    const GtTmaRing ring(smem, gt_slot_bars, pos);
    gt_barrier();
    auto load_stage = [&](int slot, int local) {
        if (pos.tid == 0) ring.load(args, slot, kr.k0(local), m0, n0, batch);
    };
    // With PrefetchLocalRead = 1 one stage stays in wgmma while the next is issued; the slot
    // it reads is not reloaded until every warpgroup has waited for it (a barrier later). So
    // AHEAD tiles are in flight from global memory, IN_FLIGHT in the tensor cores, one being
    // issued: a memory-bound shape wants AHEAD large, a compute-bound one IN_FLIGHT = 1.
    constexpr int IN_FLIGHT = GT_PLR;
    static_assert(IN_FLIGHT == 0 || STAGES >= 3, "wgmma with PrefetchLocalRead=1 needs 3+ stages");
    constexpr int AHEAD = STAGES - 1 - IN_FLIGHT;
    if (STAGES == 1) {
        for (int t = 0; t < kr.count; ++t) {
            gt_barrier();  // the previous tile's wgmmas are done (each warpgroup waited)
            load_stage(0, t);
            ring.wait(t);
            ring.multiply(acc, 0);
            gt_wgmma_settle<0>(acc);
        }
    } else {
#pragma unroll
        for (int s = 0; s < AHEAD; ++s)
            if (s < kr.count) load_stage(s, s);
        for (int t = 0; t < kr.count; ++t) {
            ring.wait(t);
            // Every warpgroup has finished the stage IN_FLIGHT + 1 tiles back, whose slot the
            // load below reuses.
            gt_barrier();
            ring.multiply(acc, t % STAGES);
            const int next = t + AHEAD;
            if (next < kr.count) load_stage(next % STAGES, next);
            gt_wgmma_settle<IN_FLIGHT>(acc);
        }
    }
    gt_wgmma_settle<0>(acc);
#else
    auto load_stage = [&](int slot, int local) {
        gt_load_stage(args, smem + slot * STAGE_BYTES, pos.tid, m0, n0, batch, kr.k0(local));
    };
    auto compute_stage = [&](int slot) { gt_consume_stage(acc, smem, slot, pos); };

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
#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < kr.count) load_stage(s, s);
            gt_copy_commit();
        }
        for (int t = 0; t < kr.count; ++t) {
            gt_copy_wait<(STAGES >= 2 ? STAGES - 2 : 0)>();
            gt_barrier();  // tile t visible to all; slot (t-1) % STAGES free for reuse
            const int next = t + STAGES - 1;
            if (next < kr.count) load_stage(next % STAGES, next);
            gt_copy_commit();
            compute_stage(t % STAGES);
        }
    }
#endif
    gt_copy_wait<0>();
    gt_barrier();  // all reads of the operand tiles are done: the LDS becomes the output tile
}

// ---- epilogue --------------------------------------------------------------------------------
// The accumulators go to the f32 staging tile in LDS (the caller synchronises afterwards).
GT_DEVICE void gt_stage_acc(float* ctile, float (&acc)[ACC], const GtPos& pos) {
#ifdef GT_PLANT_WRONG
#pragma unroll
    for (int i = 0; i < ACC; ++i) acc[i] *= 1.5f;
#endif
#pragma unroll
    for (int i = 0; i < ACC; ++i) {
        int m, n;
        gt_acc_coord(pos.lane, i, m, n);
        ctile[gt_epi_off(pos.wm0 + m, pos.wn0 + n)] = acc[i];
    }
}

// Writes V consecutive elements of D along M from (m, n) of batch `batch`, the first `count`
// of them inside the matrix: D = alpha * x (+ beta * C), as one packed store when all V are
// inside and the address is aligned to it.
template <int V>
GT_DEVICE void gt_write_d(const GtGemmArgs& args, const float (&x)[V], gt_i64 batch, gt_i64 n,
                          gt_i64 m, int count) {
    TD* D = reinterpret_cast<TD*>(args.d) + batch * args.stride_d + n * args.ldd + m;
    float y[V];
#pragma unroll
    for (int e = 0; e < V; ++e) y[e] = args.alpha * x[e];
#if !GT_BETA_ZERO
    const TC* C = reinterpret_cast<const TC*>(args.c) + batch * args.stride_c + n * args.ldc + m;
#pragma unroll
    for (int e = 0; e < V; ++e)
        if (e < count) y[e] += args.beta * gt_to_f32(C[e]);
#endif
    constexpr int VB = V * int(sizeof(TD));
    if (count == V && gt_aligned(D, VB)) {
        typename GtVec<VB>::type pack;
        TD* t = reinterpret_cast<TD*>(&pack);
#pragma unroll
        for (int e = 0; e < V; ++e) t[e] = gt_from_f32<TD>(y[e]);
        *reinterpret_cast<typename GtVec<VB>::type*>(D) = pack;
    } else {
#pragma unroll
        for (int e = 0; e < V; ++e)
            if (e < count) D[e] = gt_from_f32<TD>(y[e]);
    }
}

// The staged tile at (m0, n0) of batch `batch` goes out in SVW-element vectors along M: to D
// with alpha/beta applied, or (split-K with a reduction kernel) as split `split`'s f32 partial.
GT_DEVICE void gt_store_tile(const GtGemmArgs& args, const float* ctile, int m0, int n0, int batch,
                             int split, int tid) {
    const gt_i64 M = args.m, N = args.n;
    constexpr int SVW = GT_SVW;
    constexpr int VPC = MT0 / SVW;
    for (int v = tid; v < MT1 * VPC; v += THREADS) {
        const int n = v / VPC, m = (v % VPC) * SVW;
        const gt_i64 gm = m0 + m, gn = n0 + n;
        if (gn >= N || gm >= M) continue;
        const int count = (M - gm) < SVW ? int(M - gm) : SVW;
        float x[SVW];
        gt_read_run<SVW>(ctile + gt_epi_off(m, n), x, v % WAVE);
#if GT_REDUCTION_KERNEL
        float* ws = args.workspace;
        const gt_i64 total = M * N * args.batch;
        const gt_i64 at = (gt_i64)batch * M * N + gn * M + gm;
#if GT_GSU_ATOMIC
#pragma unroll
        for (int e = 0; e < SVW; ++e)
            if (e < count) gt_atomic_add_f32(ws + at + e, x[e]);
#else
#pragma unroll
        for (int e = 0; e < SVW; ++e)
            if (e < count) ws[(gt_i64)split * total + at + e] = x[e];
#endif
#else
        (void)split;
        gt_write_d(args, x, batch, gn, gm, count);
#endif
    }
}

#if GT_STREAM_K
// ---- stream-K --------------------------------------------------------------------------------
// The grid is a fixed number of persistent workgroups (GSU per compute unit). The work is the
// sequence of (tile, K tile) iterations, tile-major; workgroup c takes the contiguous range
// [start(c), start(c + 1)) of it, the first `r` workgroups one iteration more than the rest, so
// every compute unit gets the same work whatever the tile count. A tile whose iterations fall
// to several workgroups is finished by the last of them to arrive, which stores D
// (gt_finish_shared_tile below).
// Iteration counts are 32-bit (the space refuses stream-K beyond 2^31 iterations): this
// bookkeeping stays live across the main loop, and 64-bit values there cost registers the
// loop's address arithmetic needs.
struct GtStreamK {
    gt_u32 q, r;  // iterations per workgroup; workgroups with one more
    GT_DEVICE gt_u32 start(gt_u32 c) const { return c * q + (c < r ? c : r); }
    // The workgroup whose range holds iteration x.
    GT_DEVICE gt_u32 owner(gt_u32 x) const {
        const gt_u32 big = r * (q + 1);
        return x < big ? x / (q + 1) : r + (x - big) / q;
    }
};

#endif

#if GT_STREAM_K || GT_GSU_SINGLE_KERNEL
// ---- output tiles shared between workgroups --------------------------------------------------
// Contributors lo..hi (stream-K workgroups or split-K splits) each hold an f32 partial of one
// output tile. Each writes its own to its workspace slot and counts itself in the tile's flag;
// the one that sees the count complete adds the partials in contributor order (deterministic:
// the same sum whichever finishes last), leaves the sum in its staging tile and resets the flag
// to zero, so the flags are clean for the next launch. Nobody waits for anybody: no deadlock
// whatever the number of workgroups resident at once.
constexpr int TILE_VECS = MT0 * MT1 / 4;
static_assert(MT0 * MT1 % 4 == 0, "partial tiles move in 16-byte vectors");
GT_DEVICE void gt_add(GtF4& s, const GtF4& v) {
    s.x += v.x;
    s.y += v.y;
    s.z += v.z;
    s.w += v.w;
}
// Vectors of the tile one thread sums per pass: all of a pass's loads of one partial are in
// flight together, so a pass costs one L2 round trip per contributor, not one per vector.
constexpr int FIX_VECS = gt_min((TILE_VECS + THREADS - 1) / THREADS, 8);

// Finishes the staged partial tile `ctile` of contributor `me`; `slot(c)` is contributor c's
// workspace slot. Returns whether this workgroup was the last contributor, in which case
// `ctile` now holds the complete sum. Every thread of the launch calls it (a producer warp
// only takes part in the barriers).
template <class Slot>
GT_DEVICE bool gt_finish_shared_tile(float* ctile, Slot slot, gt_u32* flag, gt_u32 lo, gt_u32 hi,
                                     gt_u32 me, int tid, int* last_flag) {
    GtF4* const staged = reinterpret_cast<GtF4*>(ctile);
    if (tid < THREADS) {
        GtF4* const mine = slot(me);
        for (int i = tid; i < TILE_VECS; i += THREADS) mine[i] = staged[i];
    }
    // The barrier orders every thread's partial before thread 0's device-scope fence, which
    // publishes them all before the count (and, after it, makes the others' visible here).
    gt_barrier();
    if (tid == 0) {
        gt_fence_device();
        const gt_u32 before = gt_atomic_add_u32(flag, 1u);
        gt_fence_device();
        *last_flag = before == hi - lo;
    }
    gt_barrier();
    if (!*last_flag) return false;
    for (int base = 0; tid < THREADS && base < TILE_VECS; base += FIX_VECS * THREADS) {
        GtF4 sum[FIX_VECS];
#pragma unroll
        for (int j = 0; j < FIX_VECS; ++j) sum[j] = GtF4{0.0f, 0.0f, 0.0f, 0.0f};
        // This workgroup's own partial is read back from LDS.
        for (gt_u32 c = lo; c <= hi; ++c) {
            const GtF4* src = c == me ? staged : slot(c);
            GtF4 v[FIX_VECS];
#pragma unroll
            for (int j = 0; j < FIX_VECS; ++j) {
                const int i = base + tid + j * THREADS;
                if (i < TILE_VECS) v[j] = src[i];
            }
#pragma unroll
            for (int j = 0; j < FIX_VECS; ++j)
                if (base + tid + j * THREADS < TILE_VECS) gt_add(sum[j], v[j]);
        }
        // Every thread reads and writes only its own vectors of the staging tile.
#pragma unroll
        for (int j = 0; j < FIX_VECS; ++j) {
            const int i = base + tid + j * THREADS;
            if (i < TILE_VECS) staged[i] = sum[j];
        }
    }
    if (tid == 0) *flag = 0u;
    gt_barrier();
    return true;
}
#endif

#if GT_STREAM_K
// Finishes the staged partial tile `tile` (iterations [first, first + ktiles)) computed by this
// workgroup: contributors are the workgroups whose ranges hold those iterations, each with two
// workspace slots (0 for the first tile of its range, 1 for the last; no range needs more).
GT_DEVICE bool gt_stream_k_fixup(const GtGemmArgs& args, float* ctile, const GtStreamK& sk,
                                 gt_u32 tile, gt_u32 first, gt_u32 ktiles, int tid, int* last_flag) {
    auto slot = [&](gt_u32 c) {
        return reinterpret_cast<GtF4*>(args.workspace) +
               gt_i64(c * 2 + (sk.start(c) >= first ? 0 : 1)) * TILE_VECS;
    };
    return gt_finish_shared_tile(ctile, slot, args.flags + tile, sk.owner(first),
                                 sk.owner(first + ktiles - 1), blockIdx.x, tid, last_flag);
}
#endif

#if GT_GSU_SINGLE_KERNEL
// Finishes this split's staged partial of output tile `tile` (linear over the batch): split c's
// slot is the c-th of the tile's GSU consecutive ones.
GT_DEVICE bool gt_split_k_fixup(const GtGemmArgs& args, float* ctile, gt_u32 tile, int split, int tid,
                                int* last_flag) {
    GtF4* const first = reinterpret_cast<GtF4*>(args.workspace) + gt_i64(tile) * GT_GSU * TILE_VECS;
    auto slot = [&](gt_u32 c) { return first + gt_i64(c) * TILE_VECS; };
    return gt_finish_shared_tile(ctile, slot, args.flags + tile, 0u, gt_u32(GT_GSU - 1), gt_u32(split), tid,
                                 last_flag);
}
#endif

// Tensor maps are read by the copy instructions from the kernel's parameter space, which
// needs the parameter to be a __grid_constant__.
#if GT_WGMMA
#define GT_ARGS_PARAM const __grid_constant__ GtGemmArgs args
#else
#define GT_ARGS_PARAM GtGemmArgs args
#endif

extern "C" __global__ void __launch_bounds__(LAUNCH_THREADS) GT_KERNEL_NAME(GT_ARGS_PARAM) {
    extern __shared__ __align__(16) unsigned char gt_smem[];

    const int tid = threadIdx.x;
#ifdef GT_PLANT_HANG
    for (;;) gt_pause();
#endif
#ifdef GT_PLANT_OOB
    // Far outside any allocation: an illegal address the driver reports as sticky.
    if (tid == 0 && blockIdx.x == 0) reinterpret_cast<volatile float*>(args.d)[1ll << 40] = 1.0f;
#endif
    const int lane = tid % WAVE, wave = tid / WAVE;
#if GT_WGMMA
    // Warpgroup origin (wgm0, wgn0); this warp's accumulator rows start 16 rows per warp
    // further along the sliced extent (N when swapped).
    const int wgm0 = (wave % WG0 / 4) * WGT0, wgn0 = (wave / WG0) * WGT1, w16 = (wave % 4) * 16;
    const GtPos pos{tid, lane, wgm0 + (SWAP ? 0 : w16), wgn0 + (SWAP ? w16 : 0), wgm0, wgn0};
    // The swizzle is a function of the shared address: align the tiles to its period (the
    // LDS size includes this slack).
    unsigned char* const smem =
        gt_smem + ((GT_SW128_PERIOD - int(gt_lds_addr(gt_smem) & (GT_SW128_PERIOD - 1))) &
                   (GT_SW128_PERIOD - 1));
#else
    const GtPos pos{tid, lane, (wave % WG0) * WT0, (wave / WG0) * WT1, 0, 0};
    unsigned char* const smem = gt_smem;
#endif
    const gt_i64 M = args.m, N = args.n, K = args.k;
    const int tiles_m = int((M + MT0 - 1) / MT0), tiles_n = int((N + MT1 - 1) / MT1);
    const int ktiles = int((K + DU - 1) / DU);
    float acc[ACC];

#if GT_STREAM_K
    // One pipeline over this workgroup's whole range of (tile, K tile) iterations: the loads
    // run ahead across tile boundaries, so a tile change costs no pipeline drain and refill.
    // The output tile is staged in its own LDS region after the stage ring, so it can be
    // written out while the next tile's operands are in flight.
    __shared__ int last_flag;
    float* const stile = reinterpret_cast<float*>(smem + STAGES * STAGE_BYTES);
    const gt_u32 tiles_mn = gt_u32(tiles_m) * gt_u32(tiles_n), kt = gt_u32(ktiles);
    const gt_u32 work = tiles_mn * gt_u32(args.batch) * kt;
    const GtStreamK sk{work / gridDim.x, work % gridDim.x};
    const gt_u32 w_begin = sk.start(blockIdx.x), w_end = sk.start(blockIdx.x + 1);
    const int iters = int(w_end - w_begin);
    // Tile `tile` -> its origin and batch.
    auto place = [&](gt_u32 tile, int& m0, int& n0, int& batch) {
        batch = int(tile / tiles_mn);
        int tm, tn;
        gt_tile_of(int(tile - gt_u32(batch) * tiles_mn), tiles_m, tiles_n, tm, tn);
        m0 = tm * MT0;
        n0 = tn * MT1;
    };
    // The producer walks the range in order, tracking its tile instead of dividing per load.
    gt_u32 ld_tile = w_begin / kt;
    int ld_k = int(w_begin - ld_tile * kt), ld_m0, ld_n0, ld_batch;
    place(ld_tile, ld_m0, ld_n0, ld_batch);
#if GT_WGMMA
    // Tensor-map loads by one thread, as in gt_mainloop.
    __shared__ __align__(8) gt_u64 gt_slot_bars[STAGES];
    const GtTmaRing ring(smem, gt_slot_bars, pos);
    gt_barrier();
    auto load_one = [&](int slot) {
        if (tid == 0) ring.load(args, slot, ld_k * DU, ld_m0, ld_n0, ld_batch);
    };
#else
    auto load_one = [&](int slot) {
        gt_load_stage(args, smem + slot * STAGE_BYTES, tid, ld_m0, ld_n0, ld_batch, ld_k * DU);
    };
#endif
    auto load_next = [&](int i) {
        load_one(i % STAGES);
        if (++ld_k == ktiles) {
            ld_k = 0;
            place(++ld_tile, ld_m0, ld_n0, ld_batch);
        }
    };
    // The consumer finishes a tile at its last iteration in this range.
    gt_u32 boundary = (w_begin / kt + 1) * kt;
    auto finish = [&](int i) {
        const gt_u32 tile = (w_begin + gt_u32(i)) / kt, first = tile * kt;
        int m0, n0, batch;
        place(tile, m0, n0, batch);
        gt_stage_acc(stile, acc, pos);
        gt_barrier();
        const bool whole = first >= w_begin && first + kt <= w_end;
        if (whole || gt_stream_k_fixup(args, stile, sk, tile, first, kt, tid, &last_flag))
            gt_store_tile(args, stile, m0, n0, batch, 0, tid);
        gt_barrier();  // the staging tile is read out before the next tile is staged
#pragma unroll
        for (int j = 0; j < ACC; ++j) acc[j] = 0.0f;
        boundary += kt;
    };
#pragma unroll
    for (int j = 0; j < ACC; ++j) acc[j] = 0.0f;
#if GT_WGMMA
    constexpr int IN_FLIGHT = GT_PLR;
    constexpr int AHEAD = STAGES - 1 - IN_FLIGHT;
    static_assert(AHEAD >= 1, "stream-K pipelines need a stage in flight");
#pragma unroll
    for (int s = 0; s < AHEAD; ++s)
        if (s < iters) load_next(s);
    for (int i = 0; i < iters; ++i) {
        ring.wait(i);
        gt_barrier();  // the stage the load below reuses is no longer read
        ring.multiply(acc, i % STAGES);
        if (i + AHEAD < iters) load_next(i + AHEAD);
        if (w_begin + gt_u32(i) + 1 == boundary || i + 1 == iters) {
            gt_wgmma_settle<0>(acc);
            finish(i);
        } else {
            gt_wgmma_settle<IN_FLIGHT>(acc);
        }
    }
#else
    static_assert(STAGES >= 2, "stream-K pipelines need a stage in flight");
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < iters) load_next(s);
        gt_copy_commit();
    }
    for (int i = 0; i < iters; ++i) {
        gt_copy_wait<STAGES - 2>();
        gt_barrier();  // stage i visible to all; stage i - 1 free for reuse
        if (i + STAGES - 1 < iters) load_next(i + STAGES - 1);
        gt_copy_commit();
        gt_consume_stage(acc, smem, i % STAGES, pos);
        if (w_begin + gt_u32(i) + 1 == boundary || i + 1 == iters) finish(i);
    }
#endif
    gt_copy_wait<0>();
#else
#if GT_REDUCTION_KERNEL
    // The split-K epilogue kernel may be scheduled once every workgroup of this grid runs (by
    // then none of them waits for a free compute unit); it waits for this grid to end before
    // it reads the partials.
    gt_allow_dependents();
#endif
    // The output tile is staged where the operand tiles were.
    float* const ctile = reinterpret_cast<float*>(smem);
    int tm, tn;
    gt_tile_of(blockIdx.x, tiles_m, tiles_n, tm, tn);
    const int split = blockIdx.y, batch = blockIdx.z;
    // This split's K tiles, visited from a staggered start (StaggerU) and wrapping around.
    const int per_split = (ktiles + GT_GSU - 1) / GT_GSU;
    const int kt_begin = split * per_split;
    const int kt_count = (ktiles - kt_begin) < per_split ? (ktiles - kt_begin > 0 ? ktiles - kt_begin : 0)
                                                          : per_split;
    const int kt_start = (GT_SU > 0 && kt_count > 0) ? int((gt_i64)blockIdx.x * GT_SU % kt_count) : 0;
#pragma unroll
    for (int i = 0; i < ACC; ++i) acc[i] = 0.0f;
    const GtKRange kr{kt_begin, kt_count, kt_start};
#if GT_PRODUCER_WARP
    gt_mainloop_ws(args, smem, pos, tm * MT0, tn * MT1, batch, kr, acc);
#else
    gt_mainloop(args, smem, pos, tm * MT0, tn * MT1, batch, kr, acc);
#endif
    // The producer warp (if any) has no accumulators and leaves the stores to the others.
    if (tid < THREADS) gt_stage_acc(ctile, acc, pos);
    gt_barrier();
#if GT_GSU_SINGLE_KERNEL
    // Only the split that finishes its tile last stores it, with the others' partials added.
    __shared__ int last_split;
    const gt_u32 tile = gt_u32(batch) * gridDim.x + blockIdx.x;
    if (!gt_split_k_fixup(args, ctile, tile, split, tid, &last_split)) return;
#endif
    if (tid < THREADS) gt_store_tile(args, ctile, tm * MT0, tn * MT1, batch, split, tid);
#endif
}

#if GT_REDUCTION_KERNEL
// Split-K epilogue: sums the split partials of D's columns (atomic: one pre-summed slice;
// reduce: GSU slices in split order, so the result is deterministic), then applies alpha/beta
// and converts to D's type. On sm_90 the host launches it as a programmatic dependent of the
// main kernel, so its launch overlaps the main kernel's last workgroups; it waits for the
// partials first thing. The grid is (M in runs of EPI_THREADS * EPI_VEC, columns, batch);
// each thread takes EPI_VEC consecutive rows of one column, as one 16-byte load per slice
// where M keeps the slices 16-byte aligned. Columns beyond gridDim.y loop.
constexpr int EPI_THREADS = 256, EPI_VEC = 4;
extern "C" __global__ void __launch_bounds__(EPI_THREADS) GT_CAT(GT_KERNEL_NAME, _epilogue)(GtGemmArgs args) {
    gt_wait_for_primary();
    const gt_i64 M = args.m, N = args.n;
    const gt_i64 total = M * N * args.batch;
    const gt_i64 m = ((gt_i64)blockIdx.x * EPI_THREADS + threadIdx.x) * EPI_VEC;
    if (m >= M) return;
    const int count = M - m < EPI_VEC ? int(M - m) : EPI_VEC;
    // Slices start at multiples of `total` floats and columns at multiples of M.
    const bool vec = count == EPI_VEC && M % EPI_VEC == 0;
    const gt_i64 b = blockIdx.z;
    for (gt_i64 n = blockIdx.y; n < N; n += gridDim.y) {
        const gt_i64 at = (b * N + n) * M + m;
        float s[EPI_VEC];
#pragma unroll
        for (int e = 0; e < EPI_VEC; ++e) s[e] = 0.0f;
#pragma unroll
        for (int sp = 0; sp < (GT_GSU_ATOMIC ? 1 : GT_GSU); ++sp) {
            const float* src = args.workspace + sp * total + at;
            if (vec) {
                const float4 v = *reinterpret_cast<const float4*>(src);
                s[0] += v.x;
                s[1] += v.y;
                s[2] += v.z;
                s[3] += v.w;
            } else {
#pragma unroll
                for (int e = 0; e < EPI_VEC; ++e)
                    if (e < count) s[e] += src[e];
            }
        }
        gt_write_d(args, s, b, n, m, count);
    }
}
#endif
