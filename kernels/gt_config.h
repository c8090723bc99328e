// gt_config.h: the kernel's configuration, read once from the `#define GT_*` lines codegen
// (src/compile/codegen.rs) writes in front of the template, and the compile-time helpers the
// parts share. Every part reads its parameters from `GtCfg`; no part reads a GT_* define.
#pragma once

// Defines codegen names only when they are set, so kernels without them keep their sources
// (and compile-cache keys).
#ifndef GT_PRODUCER_WARP
#define GT_PRODUCER_WARP 0
#endif
#ifndef GT_GSU_SINGLE_KERNEL
#define GT_GSU_SINGLE_KERNEL 0
#endif
#ifndef GT_SWAP_AB
#define GT_SWAP_AB 0
#endif
#ifndef GT_WGMMA
#define GT_WGMMA 0
#endif
#ifndef GT_WGMMA_N
#define GT_WGMMA_N 0
#endif
#ifndef GT_A_CHUNK
#define GT_A_CHUNK 0
#endif
#ifndef GT_B_CHUNK
#define GT_B_CHUNK 0
#endif
// An operand packed before the main kernel (loader/gt_pack_kernel.h): 1 = stored K-major,
// 2 = stored M- or N-major, either read K-major by the main kernel (the warpgroup path); 3 =
// stored K-major, read M- or N-major (the FMA path's PackMNMajor). GT_TRANS_* name the layout
// the main kernel reads. 0 = read where it is.
// PersistentKernel (warpgroup path with the producer warp): one workgroup per compute unit
// walks many tiles (scheduler/gt_persistent.h); 2 = ping-pong, two sets of consumer
// warpgroups taking alternate tiles.
#ifndef GT_PERSISTENT
#define GT_PERSISTENT 0
#endif
// ClusterN / ClusterM (warpgroup path with the producer warp): clusters of this many workgroups
// along N share their A tiles, or along M their B tiles (loader/gt_tma_loader.h); one of the two
// is 1.
// TransposeLDS (matrix-core LDS path): MN-contiguous operands are transposed into K-major LDS
// tiles by the loader (loader/gt_kpack_loader.h) rather than read transposed by the atoms.
#ifndef GT_TRANSPOSE_LDS
#define GT_TRANSPOSE_LDS 0
#endif
// EdgeShift (the warp-level LDS paths): edge tiles are computed shifted back inside the
// matrix (scheduler/gt_tile_map.h, GtEdgeShift).
#ifndef GT_EDGE_SHIFT
#define GT_EDGE_SHIFT 0
#endif
#ifndef GT_CLUSTER_N
#define GT_CLUSTER_N 1
#endif
#ifndef GT_CLUSTER_M
#define GT_CLUSTER_M 1
#endif
// Where the persistent kernel reads C (beta != 0): in a ring of this many C tiles beside its
// staging area (the host sets 1 or 2, as many as the LDS holds), or, 0, in the staging area
// itself (epilogue/gt_epilogue_tma.h).
#ifndef GT_C_STAGES
#define GT_C_STAGES 0
#endif
// Or, 1, C straight from global memory into the accumulators' registers, with no LDS of its
// own (the host's choice for C not of D's type or off D's 16-byte grid, and for an f32 C whose
// tile in the staging area would leave fewer than three operand stages).
#ifndef GT_C_DIRECT
#define GT_C_DIRECT 0
#endif
// Or, past 0, C through the operand ring: the ring slots a tile's C takes after its K stages
// (epilogue/gt_c_ring.h; the host's choice wherever the warpgroups stack along M and C is of
// D's type on the 16-byte grid: src/space's persistent_c_steps).
#ifndef GT_C_STEPS
#define GT_C_STEPS 0
#endif
// With C read directly or through the ring, 1 where the producer has the L2 fetch each
// tile's C (boxes of a tensor map of C) while the tile is multiplied (src/space's
// persistent_c_prefetch).
#ifndef GT_C_PREFETCH
#define GT_C_PREFETCH 0
#endif
// The persistent kernel's column groups of 128 bytes a row where 256 leave its ring no room
// (src/space's persistent_narrow_groups).
#ifndef GT_OUT_NARROW
#define GT_OUT_NARROW 0
#endif
// The data-parallel warpgroup kernel stores D as the persistent kernel does: matrix stores of
// D's type into a staging area, one tensor-map store of it (epilogue/gt_epilogue_tma.h). The
// host sets it wherever D allows it (src/space/constraints/epilogue.rs).
#ifndef GT_STORE_D_TMA
#define GT_STORE_D_TMA 0
#endif
// The GEMV path (mainloop/gt_gemv.h, scheduler/gt_gemv_rows.h) for N up to 8.
#ifndef GT_GEMV
#define GT_GEMV 0
#endif
// How the GEMV reads an N-contiguous B (transB = T of the problem it computes), from the
// problem's leading dimension: 0 element by element, 1 its single column as a K-contiguous
// run (ldb = 1), 2 each row's MT1 columns as one vector (ldb a multiple of MT1).
#ifndef GT_GEMV_B_VECTORS
#define GT_GEMV_B_VECTORS 0
#endif
// The flat batch path (mainloop/gt_flat_batch.h, scheduler/gt_flat_batches.h): many small
// batches, each computed whole by a group of waves from flat LDS images of its operands; 2, the
// staged form (scheduler/gt_flat_batches_staged.h).
#ifndef GT_FLAT_BATCH
#define GT_FLAT_BATCH 0
#endif
#ifndef GT_PACK_A
#define GT_PACK_A 0
#endif
#ifndef GT_PACK_B
#define GT_PACK_B 0
#endif

// Compile-time helpers, usable in device code (nvcc needs __host__ __device__ for that).
__host__ __device__ constexpr int gt_min(int a, int b) { return a < b ? a : b; }
__host__ __device__ constexpr int gt_abs(int a) { return a < 0 ? -a : a; }
// Largest power of two dividing x (x > 0).
__host__ __device__ constexpr int gt_pow2_factor(int x) { return x & -x; }
// The parts along M of a grid of `count` parts over a t0 x t1 tile, each part a whole multiple
// of u0 x u1 elements: the power of two G that gives every part a whole t0 / G x t1 / (count /
// G) sub-tile of such units, the squarest such in elements (the fewest G on a tie); 0 where
// none does. The FMA path's lanes over a wave tile and the flat batch path's over a batch
// (units of one element: gt_lanes_m), and the flat batch path's waves over a batch in whole
// matrix instructions (constraints::part_grid on the host).
__host__ __device__ constexpr int gt_grid_m(int t0, int t1, int count, int u0, int u1) {
    int best = 0, best_score = 1 << 30;
    for (int g = 1; g <= count; g *= 2) {
        const int h = count / g;
        if (t0 % (g * u0) != 0 || t1 % (h * u1) != 0) continue;
        const int score = gt_abs(t0 / g - t1 / h);
        if (score < best_score) {
            best = g;
            best_score = score;
        }
    }
    return best;
}
__host__ __device__ constexpr int gt_lanes_m(int t0, int t1, int lanes) { return gt_grid_m(t0, t1, lanes, 1, 1); }

// GtPick<C, X, Y>::type is X when C holds, else Y. Naming a part here does not instantiate
// it: only the part a kernel picks is compiled, so parts may assert their own preconditions.
template <bool C, class X, class Y> struct GtPick { typedef X type; };
template <class X, class Y> struct GtPick<false, X, Y> { typedef Y type; };

struct GtCfg {
    typedef GT_TYPE_A TA;
    typedef GT_TYPE_B TB;
    typedef GT_TYPE_C TC;
    typedef GT_TYPE_D TD;
    // Tiles: MacroTile (MT0 x MT1), DepthU, waves along M and N.
    static constexpr int MT0 = GT_MT0, MT1 = GT_MT1, DU = GT_DU;
    static constexpr int WG0 = GT_WG0, WG1 = GT_WG1;
    static constexpr int WT0 = MT0 / WG0, WT1 = MT1 / WG1;
    static constexpr int WAVE = GT_VENDOR_AMD ? 64 : 32;
    static constexpr int THREADS = GT_THREADS;
    // ProducerWarp (warpgroup path only): one warp beyond the THREADS that compute issues the
    // loads; 2: a whole producer warpgroup, which hands its registers to the two computing
    // warpgroups of the tile (setmaxnreg moves them between whole warpgroups).
    static constexpr int PRODUCER_KIND = GT_PRODUCER_WARP;
    static constexpr bool PRODUCER_WARP = PRODUCER_KIND > 0;
    // Ping-pong (PersistentKernel=2): CONSUMERS sets of THREADS computing threads, each
    // owning whole tiles in turn, so one set's epilogue runs under the other's main loop. Its
    // producer is a whole warpgroup (one warp of it loads) that hands its registers over to
    // the computing ones (setmaxnreg moves them between whole warpgroups).
    static constexpr int CONSUMERS = GT_PERSISTENT == 2 ? 2 : 1;
    static constexpr bool PRODUCER_WARPGROUP = PRODUCER_WARP && (CONSUMERS > 1 || PRODUCER_KIND == 2);
    static constexpr int PRODUCER_THREADS = !PRODUCER_WARP ? 0 : PRODUCER_WARPGROUP ? 128 : WAVE;
    static constexpr int LAUNCH_THREADS = THREADS * CONSUMERS + PRODUCER_THREADS;
    // Layout and matrix instruction.
    static constexpr bool TRANS_A = GT_TRANS_A, TRANS_B = GT_TRANS_B;
    static constexpr int MI_M = GT_MI_M, MI_N = GT_MI_N, MI_K = GT_MI_K;
    static constexpr bool WGMMA = GT_WGMMA;
    static constexpr int WGMMA_N = GT_WGMMA_N;
    // Warpgroup path: an M-major A (N-major B) tile in LDS is cut into chunks of this many
    // elements along M (N); 0 = K-major.
    static constexpr int A_CHUNK = GT_A_CHUNK, B_CHUNK = GT_B_CHUNK;
    static constexpr bool SWAP_AB = GT_SWAP_AB;
    static constexpr bool USE_MMA = MI_M > 1;
    // Pipeline and LDS.
    static constexpr int STAGES = GT_PGR, PLR = GT_PLR;
    static constexpr int LPA = GT_LPA, LPB = GT_LPB;
    static constexpr bool SWIZZLE = GT_SWIZZLE;
    static constexpr bool TRANSPOSE_LDS = GT_TRANSPOSE_LDS;
    static constexpr int GRVW = GT_GRVW, SVW = GT_SVW;
    // Scheduling: split-K and its kinds, workgroup order, K stagger.
    static constexpr int GSU = GT_GSU, WGM = GT_WGM, SU = GT_SU;
    static constexpr bool STREAM_K = GT_STREAM_K;
    static constexpr bool PERSISTENT = GT_PERSISTENT > 0;
    static constexpr int CLUSTER_N = GT_CLUSTER_N, CLUSTER_M = GT_CLUSTER_M;
    // Workgroups per cluster.
    static constexpr int CLUSTER = CLUSTER_N * CLUSTER_M;
    // Gemv: dot products of A's rows with N <= 8 columns, A straight from global memory.
    static constexpr bool GEMV = GT_GEMV;
    static constexpr int GEMV_B_VECTORS = GT_GEMV_B_VECTORS;
    // FlatBatch: WavesM batches a workgroup, each whole on WavesN waves, from LDS images;
    // FLAT_STAGED (FlatBatch = 2): a workgroup walks batches, each staged during the last.
    static constexpr bool FLAT_BATCH = GT_FLAT_BATCH > 0;
    static constexpr bool FLAT_STAGED = GT_FLAT_BATCH == 2;
    static constexpr bool GSU_ATOMIC = GT_GSU_ATOMIC;
    // The split partials are summed in the main kernel by the last split of each tile to
    // finish (GSU<n>K) instead of by the reduction kernel.
    static constexpr bool GSU_SINGLE_KERNEL = GT_GSU_SINGLE_KERNEL;
    // Whether split partials go to the workspace for the <name>_epilogue kernel to sum.
    static constexpr bool REDUCTION_KERNEL = GSU > 1 && !STREAM_K && !GSU_SINGLE_KERNEL;
    static constexpr bool BETA_ZERO = GT_BETA_ZERO;
    // Operands a pack kernel copies first (loader/gt_pack_kernel.h). On sm_90+ the host
    // launches this kernel as the pack kernel's programmatic dependent: its launch overlaps
    // the copy's last workgroups, and it waits at entry until the copy is complete and
    // visible (gt_wait_for_primary).
    static constexpr bool WAIT_FOR_PACK = GT_PACK_A != 0 || GT_PACK_B != 0;
    static constexpr int C_STAGES = GT_C_STAGES;
    static constexpr bool C_DIRECT = GT_C_DIRECT;
    static constexpr int C_STEPS = GT_C_STEPS;
    static constexpr bool C_PREFETCH = (GT_C_DIRECT || GT_C_STEPS > 0) && GT_C_PREFETCH;
    static constexpr bool OUT_NARROW = GT_OUT_NARROW;
    static constexpr bool STORE_D_TMA = GT_STORE_D_TMA;
};
// The preprocessor's copy of GtCfg::REDUCTION_KERNEL: it decides whether the second kernel
// exists at all.
#define GT_REDUCTION_KERNEL (GT_GSU > 1 && !GT_STREAM_K && !GT_GSU_SINGLE_KERNEL)

static_assert(GtCfg::THREADS == GtCfg::WG0 * GtCfg::WG1 * GtCfg::WAVE,
              "GT_THREADS must equal WG0 * WG1 * wave size");
static_assert(GtCfg::MT0 % GtCfg::WG0 == 0 && GtCfg::MT1 % GtCfg::WG1 == 0,
              "waves must split the macro tile evenly");
static_assert(GtCfg::STAGES >= 1 && GtCfg::STAGES <= (GtCfg::WGMMA ? 16 : GtCfg::GEMV ? 8 : 4),
              "PrefetchGlobalRead is 1..4 (1..16 with wgmma, 1..8 on the GEMV path)");
static_assert(!GtCfg::PRODUCER_WARP || (GtCfg::WGMMA && (!GtCfg::STREAM_K || GtCfg::PERSISTENT)),
              "ProducerWarp is for the wgmma path, with stream-K only in the persistent kernel");
// (Four computing warpgroups beside a producer warpgroup, 640 threads, hung in setmaxnreg on
// an H200: the hand-over is made for the two of CUTLASS's cooperative kernels.)
static_assert(GtCfg::PRODUCER_KIND < 2 || (GtCfg::PERSISTENT <= 1 && GtCfg::THREADS == 256),
              "a producer warpgroup (ProducerWarp=2) serves two computing warpgroups of one tile");
static_assert(GtCfg::CONSUMERS == 1 || (GtCfg::PERSISTENT && GtCfg::THREADS == 128 && GtCfg::PRODUCER_WARPGROUP &&
                                        GtCfg::CLUSTER == 1 && !GtCfg::SWAP_AB && GtCfg::BETA_ZERO),
              "ping-pong takes one unswapped warpgroup per tile and a producer warpgroup, without clusters, storing D only");
static_assert(GtCfg::CLUSTER == 1 ||
                  (GtCfg::WGMMA && GtCfg::PRODUCER_WARP && (!GtCfg::STREAM_K || GtCfg::PERSISTENT)),
              "clusters sharing A or B (ClusterN, ClusterM) are for the warpgroup path with the producer warp, with "
              "stream-K only in the persistent kernel");
static_assert(!GtCfg::TRANSPOSE_LDS || (GtCfg::USE_MMA && !GtCfg::WGMMA && !GtCfg::GEMV),
              "TransposeLDS is for the matrix-core LDS path (mma.sync / MFMA atoms)");
static_assert(!GtCfg::GSU_SINGLE_KERNEL || (GtCfg::GSU > 1 && !GtCfg::STREAM_K && !GtCfg::GSU_ATOMIC),
              "the single-kernel reduction is a way to sum GSU > 1 workspace partials");

// Where this thread's warp sits in the workgroup tile.
struct GtPos {
    int tid, lane;
    int wm0, wn0;    // the warp's accumulator origin
    int wgm0, wgn0;  // the warpgroup's origin (wgmma path)
};

// The K tiles one workgroup accumulates: [begin, begin + count), visited from `start` on and
// wrapping around (StaggerU).
template <int DU> struct GtKRange {
    int begin, count, start;
    // K offset of the local-th tile visited.
    GT_DEVICE int k0(int local) const {
        int kt = start + local;
        if (kt >= count) kt -= count;
        return (begin + kt) * DU;
    }
};
