// gemm.hip: the GEMM kernel, D = alpha * op(A) * op(B) + beta * C, column-major, composed from
// the parts in this folder. codegen (src/compile/codegen.rs) specialises it with
// `#define GT_*` lines (read once, into GtCfg, by gt_config.h); the space's rules
// (src/space/rules/) say which combinations are valid, and every valid one must compile and be
// correct. A kernel is:
//
//   a mainloop   mainloop/   operand loads into an LDS ring and the multiply, into f32
//                            accumulators in registers:
//                  GtLdsMainloop     vectors / cp.async (loader/gt_vector_loader.h) feeding
//                                    per-wave matrix-core atoms (mainloop/gt_warp_mma.h,
//                                    atoms in atom/), with TransposeLDS MN-contiguous
//                                    operands transposed into K-major packs on the way
//                                    (loader/gt_kpack_loader.h); or MN-major tiles (loader/
//                                    gt_transpose_loader.h) feeding f32 FMA (mainloop/gt_fma.h)
//                  GtWgmmaMainloop   tensor-map boxes (loader/gt_tma_loader.h) feeding
//                                    warpgroup wgmma (mainloop/gt_wgmma.h), sm_90a;
//                                    GtWgmmaMainloopWs: a producer warp issues the loads
//                                    (into every workgroup of a cluster sharing A, with
//                                    loader/gt_free_slots.h's cluster-wide releases), or a
//                                    producer warpgroup that hands its registers to the
//                                    warpgroups (mainloop/gt_producer_registers.h)
//   a scheduler  scheduler/  which tile and which K range each workgroup takes:
//                  GtDataParallel    one tile per workgroup in WorkGroupMapping order,
//                                    split-K over the grid's y
//                  GtStreamKScheduler  persistent workgroups sharing all (tile, K tile)
//                                    iterations evenly
//                  GtPersistentScheduler  one workgroup per compute unit walking many
//                                    tiles (or, stream-K, an even share of all (tile, K
//                                    tile) units: scheduler/gt_tile_walk.h), its producer
//                                    warp loading ahead across them
//                  GtFlatBatches     many small batches, each whole on a group of waves from
//                                    flat LDS images of its operands (loader/gt_flat_copy.h,
//                                    mainloop/gt_flat_batch.h: FMAs), or 16-bit tiles padded
//                                    to whole instructions (loader/gt_flat_scatter.h,
//                                    mainloop/gt_flat_batch_mma.h: matrix cores)
//                  GtFlatBatchesStaged  the same on matrix cores for batches of up to a few
//                                    hundred rows, each workgroup walking batches with the
//                                    next one's operands staged meanwhile (loader/
//                                    gt_flat_stage.h)
//                  GtGemvRows        rows of A by K splits (the GEMV path, N <= 8: its own
//                                    mainloops, dot products straight from global memory
//                                    with FMAs, mainloop/gt_gemv.h, or on the matrix cores,
//                                    mainloop/gt_gemv_mma.h); with SwapAB rows of B^T for
//                                    M <= 8 (layout/gt_gemv_view.h)
//   (a packer    loader/gt_pack_kernel.h: an operand the tensor maps cannot read in place is
//                copied K-major into the workspace by <name>_pack_a / _pack_b first; on the
//                FMA path, PackMNMajor, a K-contiguous operand is copied M- or N-major)
//   an epilogue  epilogue/   the accumulators staged through LDS, then D with alpha/beta
//                            (stored by tensor maps in the persistent kernel, and in the
//                            data-parallel warpgroup kernel where D allows it; C through
//                            LDS or straight into registers, epilogue/gt_c_direct.h),
//                            split partials to the workspace (summed by the reduction kernel,
//                            epilogue/gt_reduce_kernel.h), or shared tiles summed in the kernel
//                            (epilogue/gt_fixup.h)
//
// Each part asserts its own preconditions. Operand tiles live in LDS in the layouts of
// layout/: their global orientation with padding or a 16-byte-chunk swizzle for the vector
// loaders, K-major or MN-major with the swizzles the tensor maps write for wgmma.
#include "gt_args.h"
#include "gt_platform.h"
#include "gt_config.h"
#include "gt_plant.h"
#include "atom/gt_mma.h"
#include "layout/gt_lds_tile.h"
#include "layout/gt_kpack_tile.h"
#include "layout/gt_wgmma_tile.h"
#include "layout/gt_gemv_view.h"
#include "layout/gt_cluster_layout.h"
#include "layout/gt_flat_tile.h"
#include "loader/gt_ring_pos.h"
#include "loader/gt_vector_loader.h"
#include "loader/gt_register_loader.h"
#include "loader/gt_transpose_loader.h"
#include "loader/gt_kpack_loader.h"
#include "loader/gt_pack_kernel.h"
#include "loader/gt_flat_copy.h"
#include "loader/gt_flat_scatter.h"
#include "loader/gt_flat_stage.h"
#include "mainloop/gt_warp_mma.h"
#include "mainloop/gt_fma.h"
#include "mainloop/gt_mainloop_lds.h"
#include "mainloop/gt_gemv.h"
#include "mainloop/gt_flat_batch.h"
#include "mainloop/gt_flat_batch_mma.h"
#if !GT_VENDOR_AMD
#include "atom/gt_sm90.h"
#include "loader/gt_tma_loader.h"
#include "loader/gt_free_slots.h"
#include "mainloop/gt_producer_registers.h"
#include "mainloop/gt_wgmma.h"
#include "mainloop/gt_mainloop_wgmma.h"
#include "mainloop/gt_mainloop_wgmma_ws.h"
#include "mainloop/gt_gemv_mma.h"
#endif
#include "epilogue/gt_epilogue.h"
#include "epilogue/gt_fixup.h"
#include "epilogue/gt_reduce_kernel.h"
#include "epilogue/gt_flat_store.h"
#include "scheduler/gt_tile_map.h"
#include "scheduler/gt_data_parallel.h"
#include "scheduler/gt_stream_k.h"
#include "scheduler/gt_gemv_rows.h"
#include "scheduler/gt_flat_batches.h"
#include "scheduler/gt_flat_batches_staged.h"
#if !GT_VENDOR_AMD
#include "epilogue/gt_c_direct.h"
#include "epilogue/gt_c_ring.h"
#include "epilogue/gt_out_staging.h"
#include "epilogue/gt_epilogue_tma.h"
#include "scheduler/gt_tile_walk.h"
#include "scheduler/gt_persistent.h"
#endif

// The parts this kernel's configuration picks.
template <class Cfg> struct GtCompose {
    // Warpgroup kernels exist on NVIDIA sm_90a only; elsewhere the names stand for nothing.
#if GT_VENDOR_AMD
    typedef void WgmmaMainloop;
    typedef void TmaStoreEpilogue;
    typedef void PersistentScheduler;
#else
    typedef typename GtPick<Cfg::PRODUCER_WARP, GtWgmmaMainloopWs<Cfg>, GtWgmmaMainloop<Cfg>>::type WgmmaMainloop;
    typedef GtTmaStoreEpilogue<Cfg, WgmmaMainloop> TmaStoreEpilogue;
    typedef GtPersistentScheduler<Cfg, WgmmaMainloop, TmaStoreEpilogue> PersistentScheduler;
#endif
    // TransposeLDS: MN-contiguous operands are transposed into K-major LDS tiles on the way in.
    typedef typename GtPick<Cfg::TRANSPOSE_LDS, GtKMajorOperands<Cfg>, GtStoredOperands<Cfg>>::type MmaOperands;
    typedef typename GtPick<Cfg::USE_MMA, GtLdsMainloop<Cfg, GtWarpMma, MmaOperands>,
                            GtLdsMainloop<Cfg, GtFma, GtMnMajorOperands<Cfg>>>::type LdsMainloop;
    typedef typename GtPick<Cfg::WGMMA, WgmmaMainloop, LdsMainloop>::type Mainloop;
    typedef GtEpilogue<Cfg, Mainloop> Epilogue;
    typedef typename GtPick<Cfg::STREAM_K, GtStreamKScheduler<Cfg, Mainloop, Epilogue>,
                            GtDataParallel<Cfg, Mainloop, Epilogue, TmaStoreEpilogue>>::type TileScheduler;
    typedef typename GtPick<Cfg::PERSISTENT, PersistentScheduler, TileScheduler>::type TiledScheduler;
    // The GEMV path is a mainloop and schedule of its own: no tiles, no LDS operands.
    typedef typename GtPick<Cfg::GEMV, GtGemvRows<Cfg>, TiledScheduler>::type RowScheduler;
    // So is the flat batch path: each small batch whole from flat LDS images of its operands
    // (staged: each workgroup walking batches, the next one's copies in flight).
    typedef typename GtPick<Cfg::FLAT_STAGED, GtFlatBatchesStaged<Cfg>, GtFlatBatches<Cfg>>::type FlatScheduler;
    typedef typename GtPick<Cfg::FLAT_BATCH, FlatScheduler, RowScheduler>::type Scheduler;
};
typedef GtCompose<GtCfg> GtKernel;

// Tensor maps are read by the copy instructions from the kernel's parameter space, which
// needs the parameter to be a __grid_constant__.
#if GT_WGMMA
#define GT_ARGS_PARAM const __grid_constant__ GtGemmArgs args
#else
#define GT_ARGS_PARAM GtGemmArgs args
#endif

// ClusterN / ClusterM: the workgroups are launched in clusters of GT_CLUSTER_N * GT_CLUSTER_M
// along x (the grid's x is a multiple of it), fixed at compile time so that any launch makes
// them.
#if GT_CLUSTER_N * GT_CLUSTER_M > 1
#define GT_CLUSTER_DIMS __cluster_dims__(GT_CLUSTER_N * GT_CLUSTER_M, 1, 1)
#else
#define GT_CLUSTER_DIMS
#endif

// A producer warpgroup hands registers over with setmaxnreg, which ptxas honours only where it
// knows every thread's count at entry: one workgroup per compute unit, said in the bounds
// (without it ptxas ignored the hand-over and compiled the computing warpgroups to the entry
// share, spilling a 192x192 tile's accumulators at 168 registers). So does the FMA GEMV
// over K-contiguous rows (those of the problem it computes, mainloop/gt_gemv.h): without it
// ptxas kept it to an occupancy of its own choosing and spilled 8 to 28 bytes at 48 to 64
// registers beside the paths for waves sharing K and waves alone on batches; with it, H200,
// 16x1x524288 f32 30.7 -> 15.4 us [18.5], 4096x1x4096 13.8 -> 13.2 [15.5], 2x2x2 x65536 24.3
// -> 32.8 [53.2]. (On M-contiguous rows it cost 1x4096x4096 NT its GEMV: 15.7 -> 16.5 [14.4].)
#if GT_PRODUCER_WARP == 2 || GT_PERSISTENT == 2 || \
    (GT_GEMV && GT_MI_M == 1 && (GT_SWAP_AB ? !GT_TRANS_B : GT_TRANS_A))
#define GT_LAUNCH_BOUNDS __launch_bounds__(GtCfg::LAUNCH_THREADS, 1)
#else
#define GT_LAUNCH_BOUNDS __launch_bounds__(GtCfg::LAUNCH_THREADS)
#endif

extern "C" __global__ void GT_LAUNCH_BOUNDS GT_CLUSTER_DIMS GT_KERNEL_NAME(GT_ARGS_PARAM) {
    extern __shared__ __align__(16) unsigned char gt_smem[];
    const int tid = threadIdx.x;
    gt_plant_at_entry(args, tid);
    if constexpr (GtCfg::WAIT_FOR_PACK) gt_wait_for_primary();
    GtKernel::Scheduler::run(args, gt_smem, tid);
}

// The pack kernels let the main kernel, their programmatic dependent, launch only when they
// end (no gt_allow_dependents): allowed from their first instruction, the main kernel's
// workgroups took compute units while the copy's last ones still ran, and long-K GEMMs lost
// up to a quarter (H200, same call: 3584x160x18944 NT 57.2 -> 72.0 us, 16032x80x16384 NT
// 143.8 -> 150.2, where a launch at their end ran 56.5 and 141.5).
#if GT_PACK_A
extern "C" __global__ void __launch_bounds__(GT_PACK_TILE * GT_PACK_ROWS) GT_CAT(GT_KERNEL_NAME, _pack_a)(GtGemmArgs args,
                                                                                                 void* dst) {
    gt_pack_operand<GtCfg::TA, GT_PACK_A>(reinterpret_cast<const GtCfg::TA*>(args.a), args.lda, args.stride_a,
                                           args.m, args.k, reinterpret_cast<GtCfg::TA*>(dst));
}
#endif
#if GT_PACK_B
extern "C" __global__ void __launch_bounds__(GT_PACK_TILE * GT_PACK_ROWS) GT_CAT(GT_KERNEL_NAME, _pack_b)(GtGemmArgs args,
                                                                                                 void* dst) {
    gt_pack_operand<GtCfg::TB, GT_PACK_B>(reinterpret_cast<const GtCfg::TB*>(args.b), args.ldb, args.stride_b,
                                           args.n, args.k, reinterpret_cast<GtCfg::TB*>(dst));
}
#endif

#if GT_REDUCTION_KERNEL
extern "C" __global__ void __launch_bounds__(GT_EPI_THREADS) GT_CAT(GT_KERNEL_NAME, _epilogue)(GtGemmArgs args) {
    gt_reduce_splits<GtCfg>(args);
}
#endif
