// loader/gt_free_slots.h: the "slot free" mbarriers of a warp-specialised operand ring
// (mainloop/gt_mainloop_wgmma_ws.h, scheduler/gt_persistent.h). The consumer warps release a
// slot once their wgmmas on it are done (one arrival per warp); the producer waits for the
// release before it refills the slot. In a cluster sharing A or B tiles (ClusterN, ClusterM,
// loader/gt_tma_loader.h) a workgroup's producer writes its shares into the slots of its tile
// row and column, so every consumer warp releases the slot in each of those PEERS workgroups
// (layout/gt_cluster_layout.h; one lane per peer, the arrivals in parallel), and a slot's
// phase completes only when all the workgroups it writes into are done with it.
//
//   consumers: where arrives(lane), release(slot, lane) -> CONSUMER_WARPS * PEERS arrivals per phase
//   producer:  wait_refill(pos, it) before loading the it-th stage into its slot
#pragma once

template <class Cfg> struct GtFreeSlots {
    static constexpr int STAGES = Cfg::STAGES, CLUSTER = Cfg::CLUSTER;
    using Layout = GtClusterLayout<Cfg::CLUSTER_N, Cfg::CLUSTER_M>;
    static constexpr int PEERS = Layout::PEERS;
    static_assert(PEERS <= 32, "one lane of a warp per peer");
    static constexpr int CONSUMER_WARPS = Cfg::THREADS / Cfg::WAVE;
    gt_u32 bar0;

    GT_DEVICE explicit GtFreeSlots(gt_u64* bars) : bar0(gt_lds_addr(bars)) {}
    // Thread 0 initialises the barriers; sync_all() then makes them (and the ring's) usable.
    GT_DEVICE void init(int tid) const {
        if (tid == 0) {
#pragma unroll
            for (int s = 0; s < STAGES; ++s) gt_mbar_init(bar0 + 8 * s, CONSUMER_WARPS * PEERS);
            gt_mbar_init_fence();
        }
    }
    // Every thread of the workgroup (of the cluster, when it shares a tile) meets once the barriers
    // are initialised: no peer copies into or arrives on a barrier before it exists. The same
    // meeting at the end keeps a workgroup's LDS alive while its peers may still arrive on it
    // (and, in the mainloop, frees the LDS for the output tile).
    GT_DEVICE static void sync_all() {
        if constexpr (CLUSTER > 1) {
            gt_cluster_sync();
        } else {
            gt_barrier();
        }
    }
    // Before a workgroup that needs no barrier of its own leaves: in a cluster, its peers may
    // still arrive on its barriers until they meet here too; alone, nothing waits.
    GT_DEVICE static void leave() {
        if constexpr (CLUSTER > 1) gt_cluster_sync();
    }
    // Producer: the f-th refill of a slot waits for the release of the fill before it, which
    // completes phase f - 1 of the slot's barrier. `p` is the place of the it-th stage.
    GT_DEVICE void wait_refill(const GtRingPos<STAGES>& p, int it) const {
        if (it < STAGES) return;
        gt_mbar_wait(bar0 + 8 * p.slot, p.phase ^ 1u);
    }
    // Whether lane `lane` of a consumer warp arrives when the warp is done with a slot: one
    // lane per peer, lane 0 alone without a cluster. The caller tests it, so that an
    // unclustered warp's other lanes skip the call as they always did (testing it inside
    // cost a 128x256 tile a spilled register).
    GT_DEVICE static bool arrives(int lane) {
        if constexpr (CLUSTER > 1) {
            return lane < PEERS;
        } else {
            return lane == 0;
        }
    }
    // Lane `lane` of a consumer warp, where it `arrives`: the warp is done with `slot`.
    GT_DEVICE void release(int slot, int lane) const {
        const gt_u32 bar = bar0 + 8 * slot;
        if constexpr (CLUSTER > 1) {
            gt_mbar_arrive_cluster(bar, gt_u32(Layout::peer(int(gt_cluster_rank()), lane)));
        } else {
            gt_mbar_arrive(bar);
        }
    }
};
