// atom/gt_sm90.h: the Hopper (sm_90a) primitives of the warpgroup path: the warpgroup matrix
// instruction's descriptors and its fence / commit / wait, the mbarriers the tensor memory
// accelerator completes on, and the tensor-map copy itself. Included on NVIDIA only; the
// functions are only emitted where a warpgroup kernel calls them.
//
// wgmma: a warpgroup (4 consecutive warps) multiplies operand tiles that stay in LDS, named by
// 64-bit matrix descriptors (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address >> 4,
// 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension byte offset >> 4, 49-51 base
// offset, 62-63 swizzle mode (1 = 128-byte, 2 = 64-byte, 3 = 32-byte). The operand tiles'
// layouts (layout/gt_wgmma_tile.h) give the offsets and the mode; every tile is aligned to
// 1024 bytes so that the hardware's address-based swizzle matches ours. The instruction
// itself, whose inline assembly needs one operand per accumulator register and names the
// operands' types and majorness, is generated per kernel by codegen (`gt_wgmma_op`).
#pragma once

// A descriptor in two halves: the high word (stride offset, swizzle mode) is a constant of the
// operand tile's layout (layout/gt_wgmma_tile.h), the low word holds the start address >> 4
// (14 bits: every LDS address fits, so adding a tile offset >> 4 to the low word never carries
// out of the field) and the layout's leading offset.
template <class Tile> GT_DEVICE gt_u32 gt_wgmma_desc_lo(gt_u32 lds_addr) {
    return ((lds_addr & 0x3ffffu) >> 4) | (Tile::DESC_LBO << 16);
}
template <class Tile> GT_DEVICE gt_u64 gt_wgmma_desc(gt_u32 lo) { return (gt_u64(Tile::DESC_HI) << 32) | lo; }

// Orders this warpgroup's earlier register accesses (of the accumulators) before its next
// wgmma; required before the first wgmma of a batch.
GT_DEVICE void gt_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
// Closes the batch of wgmmas issued since the last commit into one group.
GT_DEVICE void gt_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// Waits until at most N committed groups of this warpgroup are still running.
template <int N> GT_DEVICE void gt_wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accesses of `x` across the asm around it: accumulators
// written by an asynchronous wgmma are only valid after the wait.
GT_DEVICE void gt_reg_fence(float& x) { asm volatile("" : "+f"(x)::"memory"); }

// ---- tensor memory accelerator loads --------------------------------------------------------
// One thread asks for a whole operand box with one instruction; the copy lands in LDS in the
// swizzle the tensor map names (the layouts of layout/gt_wgmma_tile.h) and counts its bytes
// on an mbarrier, on which every thread waits. Out-of-bounds elements arrive as zeros.
// An mbarrier (8 bytes of LDS) expecting `count` arrivals per phase.
GT_DEVICE void gt_mbar_init(gt_u32 bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialisations visible to the other threads and to the async proxy.
GT_DEVICE void gt_mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
// Arrives on `bar`, announcing `bytes` more to come from asynchronous copies this phase.
GT_DEVICE void gt_mbar_expect(gt_u32 bar, gt_u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
// Arrives on `bar`, one of the arrivals its phase counts.
GT_DEVICE void gt_mbar_arrive(gt_u32 bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// Waits until the phase of `bar` with this parity has completed.
GT_DEVICE void gt_mbar_wait(gt_u32 bar, gt_u32 parity) {
    asm volatile(
        "{\n.reg .pred done;\nWAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
// ---- clusters (ClusterN) ---------------------------------------------------------------
// The workgroups of a cluster run at once on one GPC and can reach each other's LDS: a
// tensor-map copy can land in all of them (multicast), and a thread can arrive on a peer's
// mbarrier at the same LDS offset as its own.
// This workgroup's rank in its cluster.
GT_DEVICE gt_u32 gt_cluster_rank() {
    gt_u32 r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
// Arrives on the mbarrier of cluster rank `rank` at the offset of this workgroup's `bar`.
// The plain arrive, as CUTLASS's cluster barriers use it: with `.release.cluster` (and the
// waiter's try_wait `.acquire.cluster`) an H100 ran 3-5x slower, one stage per ~1.2 us, as if
// the waiting producer slept to its time limit on every stage.
GT_DEVICE void gt_mbar_arrive_cluster(gt_u32 bar, gt_u32 rank) {
    asm volatile(
        "{\n.reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
        "r"(rank)
        : "memory");
}
// Every thread of every workgroup of the cluster meets here (all threads of each warp).
GT_DEVICE void gt_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Copies the LDS box at `src` to coordinates (c0, c1, c2) of the tensor `map`, asynchronously
// (a bulk group of this thread); elements outside the tensor are not written.
GT_DEVICE void gt_tma_store_3d(const void* map, gt_u32 src, int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(map),
                 "r"(src), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
// Closes this thread's bulk copies issued since the last commit into one group.
GT_DEVICE void gt_bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until at most N of this thread's bulk groups are still reading LDS (READ_ONLY), or
// still running at all.
template <int N, bool READ_ONLY> GT_DEVICE void gt_bulk_wait() {
    if constexpr (READ_ONLY) {
        asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
    } else {
        asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
    }
}
// Stores 8x8 matrices of 16-bit elements from the matrix fragment layout (lane l holds row
// l / 4, columns 2 (l % 4) and 2 (l % 4) + 1, packed in one register per matrix) to LDS, one
// 16-byte row per address: lane l names row l % 8 of matrix l / 8. TRANS writes each matrix
// transposed: its columns become the 16-byte rows.
template <bool TRANS> GT_DEVICE void gt_stmatrix_x4(gt_u32 addr, gt_u32 r0, gt_u32 r1, gt_u32 r2, gt_u32 r3) {
    if constexpr (TRANS) {
        asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0),
                     "r"(r1), "r"(r2), "r"(r3)
                     : "memory");
    } else {
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0),
                     "r"(r1), "r"(r2), "r"(r3)
                     : "memory");
    }
}
// Two matrices: lanes 0-15 name the rows.
template <bool TRANS> GT_DEVICE void gt_stmatrix_x2(gt_u32 addr, gt_u32 r0, gt_u32 r1) {
    if constexpr (TRANS) {
        asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" ::"r"(addr), "r"(r0), "r"(r1)
                     : "memory");
    } else {
        asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(addr), "r"(r0), "r"(r1)
                     : "memory");
    }
}
// Copies `bytes` (a multiple of 16) from global memory to LDS at `dst`, both 16-byte aligned,
// asynchronously, completing on mbarrier `bar` (which the caller told to expect them).
GT_DEVICE void gt_bulk_load(gt_u32 dst, const void* src, gt_u32 bytes, gt_u32 bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
// Makes this thread's ordinary LDS writes visible to the async proxy (tensor-map stores).
GT_DEVICE void gt_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// A barrier of `threads` threads (whole warps) on hardware barrier `id` (0 is __syncthreads').
GT_DEVICE void gt_named_barrier(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// The same on a barrier named at compile time: ptxas reserves only the barriers named (an id
// in a register reserves all 16).
template <int ID> GT_DEVICE void gt_named_barrier(int threads) {
    asm volatile("bar.sync %0, %1;" ::"n"(ID), "r"(threads) : "memory");
}
// Moves registers between the warpgroups of a workgroup: every thread of the executing
// warpgroup (all of it, converged) ends with N registers; an increase waits until others
// have given enough back. The kernel enters with what its launch bounds allow each thread.
template <int N> GT_DEVICE void gt_setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N)); }
template <int N> GT_DEVICE void gt_setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N)); }

// Starts fetching the tensor map `map` (a kernel parameter) into the copy engine's cache.
GT_DEVICE void gt_prefetch_tensor_map(const void* map) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}
// Has the L2 fetch the box at coordinates (c0, c1, c2) of the tensor `map` (a kernel
// parameter); nothing waits for it.
GT_DEVICE void gt_tma_prefetch_l2_3d(const void* map, int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];" ::"l"(map), "r"(c0), "r"(c1),
                 "r"(c2)
                 : "memory");
}
// Copies the box at coordinates (c0, c1, c2) of the tensor `map` (a kernel parameter) to LDS
// address `dst`, completing on mbarrier `bar`.
GT_DEVICE void gt_tma_load_3d(gt_u32 dst, const void* map, int c0, int c1, int c2, gt_u32 bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
        "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}
// The same box, landing at `dst` and completing on `bar` in every workgroup of the cluster
// whose rank is set in `ranks` (the same LDS offsets in each).
GT_DEVICE void gt_tma_load_3d_multicast(gt_u32 dst, const void* map, int c0, int c1, int c2, gt_u32 bar,
                                        unsigned short ranks) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(dst),
        "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(ranks)
        : "memory");
}
