// scheduler/gt_data_parallel.h: the data-parallel tile scheduler, with split-K. The grid is
// (tiles, GSU splits, batch; batches past 65535 folded into y, gt_split_and_batch in
// scheduler/gt_tile_map.h): workgroup (x, y, z) computes output tile x (in WorkGroupMapping
// order, scheduler/gt_tile_map.h) of batch z over split y's share of the K tiles, visited from
// a staggered start (StaggerU). Its partial goes straight to D (GSU = 1), to the workspace for
// the reduction kernel (GSU<n>R / GSU<n>A), or is summed in this kernel by the split of the
// tile that finishes last (GSU<n>K, epilogue/gt_fixup.h). A whole warpgroup tile whose D the
// tensor maps can write (GtCfg::STORE_D_TMA) goes out through `TmaEpilogue` instead: staged in
// D's type by matrix stores (blended with C's tile, loaded in place through a tensor map of C,
// where beta reads it), stored by one thread (epilogue/gt_epilogue_tma.h). On the warp-level
// LDS paths an edge tile is computed shifted back inside the matrix, and its store leaves out
// what the tile before it stores (scheduler/gt_tile_map.h, GtEdgeShift).
#pragma once

template <class Cfg, class Mainloop, class Epilogue, class TmaEpilogue> struct GtDataParallel {
    static constexpr int MT0 = Cfg::MT0, MT1 = Cfg::MT1, DU = Cfg::DU, GSU = Cfg::GSU;

    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* lds, int tid) {
        int split, batch;
        if (!gt_split_and_batch<GSU, !Cfg::REDUCTION_KERNEL>(args, split, batch)) return;
        const GtPos pos = Mainloop::position(tid);
        unsigned char* const smem = Mainloop::lds_base(lds);
        const gt_i64 M = args.m, N = args.n, K = args.k;
        const int tiles_m = int((M + MT0 - 1) / MT0), tiles_n = int((N + MT1 - 1) / MT1);
        const int ktiles = int((K + DU - 1) / DU);
        float acc[Mainloop::ACC];
        // The split-K reduction kernel may be scheduled once every workgroup of this grid runs
        // (by then none of them waits for a free compute unit); it waits for this grid to end
        // before it reads the partials.
        if constexpr (Cfg::REDUCTION_KERNEL) gt_allow_dependents();
        // The output tile is staged where the operand tiles were.
        float* const ctile = reinterpret_cast<float*>(smem);
        // A cluster's workgroups (ClusterN, ClusterM) take neighbouring tiles of one row (one
        // column), from one staggered K start.
        const int group = int(blockIdx.x) / Cfg::CLUSTER;
        int tm, tn;
        gt_cluster_tile_of<Cfg::WGM, Cfg::CLUSTER_N, Cfg::CLUSTER_M>(group, tiles_m, tiles_n, tm, tn);
        // This split's K tiles, visited from a staggered start (StaggerU) and wrapping around.
        const int per_split = (ktiles + GSU - 1) / GSU;
        const int kt_begin = split * per_split;
        const int kt_count = (ktiles - kt_begin) < per_split ? (ktiles - kt_begin > 0 ? ktiles - kt_begin : 0)
                                                              : per_split;
        const int kt_start = (Cfg::SU > 0 && kt_count > 0) ? int((gt_i64)group * Cfg::SU % kt_count) : 0;
        // The barriers C arrives on (where beta reads it through a tensor map); the main loop's
        // first barrier orders their initialisation before any wait.
        if constexpr (Cfg::STORE_D_TMA) TmaEpilogue::init(tid);
#pragma unroll
        for (int i = 0; i < Mainloop::ACC; ++i) acc[i] = 0.0f;
        const GtKRange<DU> kr{kt_begin, kt_count, kt_start};
        // Where the tile is computed: an edge tile shifted back inside the matrix (GtEdgeShift).
        const int m0s = tm * MT0 - GtEdgeShift<Cfg>::m(tm * MT0, M);
        const int n0s = tn * MT1 - GtEdgeShift<Cfg>::n(tn * MT1, N);
        // What follows the main loop: the tile's stores (every thread of the launch takes part
        // in the barriers; the producer, if any, stores nothing).
        auto epilogue = [&]() {
            if constexpr (Cfg::STORE_D_TMA) {
                // The ring is free (the main loop ended on a barrier) and becomes the staging
                // area.
                if (tid < Cfg::THREADS) {
                    // Where beta reads C, each leader loads its boxes of C's tile into the
                    // staging area (in place: the ring holds no operand any more).
                    if constexpr (TmaEpilogue::C_VIA_LDS) {
                        if (TmaEpilogue::leader(tid)) TmaEpilogue::issue_c(args, smem, tm * MT0, tn * MT1, batch, tid, 0);
                    }
                    TmaEpilogue::write(args, smem, acc, pos, tm * MT0, tn * MT1, batch, tid, 0);
                    TmaEpilogue::drain_reads(tid);
                }
                return;
            }
            if (tid < Cfg::THREADS) Epilogue::stage(ctile, acc, pos);
            gt_barrier();
            if constexpr (Cfg::GSU_SINGLE_KERNEL) {
                // Only the split that finishes its tile last stores it, with the others'
                // partials added.
                __shared__ int last_split;
                const gt_u32 tile = gt_u32(batch) * gridDim.x + blockIdx.x;
                if (!GtSharedTile<Cfg>::finish_split(args, ctile, tile, split, tid, &last_split)) return;
            }
            if (tid < Cfg::THREADS) {
                if constexpr (GtEdgeShift<Cfg>::SHIFTS) {
                    // The tile's place is recovered from where it was computed (the shift is
                    // less than a tile), so that only the latter stays live across the main
                    // loop: with the shift kept beside it, ptxas took the 1000^3 f32 kernel on
                    // 128x128x16 (two stages, 256 threads) to 129 registers, one workgroup a
                    // compute unit instead of two.
                    const int dm = (m0s + MT0 - 1) / MT0 * MT0 - m0s, dn = (n0s + MT1 - 1) / MT1 * MT1 - n0s;
                    Epilogue::store(args, ctile, m0s, n0s, batch, split, tid, dm, dn);
                } else {
                    Epilogue::store(args, ctile, m0s, n0s, batch, split, tid);
                }
            }
        };
        if constexpr (Cfg::PRODUCER_WARPGROUP) {
            // The producer warpgroup's path never joins the warpgroups' (mainloop/
            // gt_mainloop_wgmma_ws.h): it only meets them on the staging barrier.
            static_assert(!Cfg::GSU_SINGLE_KERNEL, "a producer warpgroup takes no part in summing split tiles");
            Mainloop::run_apart(
                args, smem, pos, tm * MT0, tn * MT1, batch, kr, acc,
                [] {
                    if constexpr (!Cfg::STORE_D_TMA) gt_barrier();
                },
                epilogue);
        } else {
            Mainloop::run(args, smem, pos, m0s, n0s, batch, kr, acc);
            epilogue();
        }
    }
};
