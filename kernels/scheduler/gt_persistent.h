// scheduler/gt_persistent.h: the persistent tile scheduler of the warpgroup path
// (PersistentKernel, `_PK1`). One workgroup per compute unit walks the output tiles
// blockIdx.x, blockIdx.x + gridDim.x, ... (WorkGroupMapping order, batch by batch). Its producer
// warp fills one ring of LDS stages across all of them, so the next tile's operands load while
// the warpgroups finish and store the current one; the warpgroups multiply each stage, hand
// its slot back, and store each finished tile through the tensor memory accelerator
// (epilogue/gt_epilogue_tma.h) without waiting for the stores; where beta reads C, each tile's
// C loads while the tile is multiplied. Nothing drains between tiles:
// no pipeline refill and no epilogue on the tensor cores' critical path.
//
//   producer warp: for each tile, each K tile: wait for a free slot, issue its boxes
//   warpgroups:    for each tile: multiply each stage, free its slot; stage the tile, store it
//
// A cluster of CLUSTER_N workgroups along N (ClusterN) walks the tiles as one: cluster c takes
// groups of CLUSTER_N neighbouring tiles along N c, c + clusters, ..., each workgroup the tile
// of its rank, and the A tile of each stage is shared (loader/gt_tma_loader.h).
#pragma once

template <class Cfg, class Mainloop, class Epilogue> struct GtPersistentScheduler {
    static constexpr int MT0 = Cfg::MT0, MT1 = Cfg::MT1, DU = Cfg::DU, STAGES = Cfg::STAGES, ACC = Mainloop::ACC;
    static_assert(Cfg::WGMMA && Cfg::PRODUCER_WARP && Cfg::GSU == 1 && !Cfg::STREAM_K,
                  "the persistent kernel is the warpgroup path with a producer warp, without split-K");

    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* lds, int tid) {
        const GtPos pos = Mainloop::position(tid);
        unsigned char* const smem = Mainloop::lds_base(lds);
        const int tiles_m = int((args.m + MT0 - 1) / MT0), tiles_n = int((args.n + MT1 - 1) / MT1);
        const int ktiles = int((args.k + DU - 1) / DU);
        // Groups of CLUSTER_N tiles along N: one per cluster at a time.
        constexpr int CN = Cfg::CLUSTER_N;
        const int groups_mn = tiles_m * (tiles_n / CN), groups = groups_mn * args.batch;
        const int cluster = int(blockIdx.x) / CN, clusters = int(gridDim.x) / CN;
        // Tile group `g` -> this workgroup's tile origin and batch.
        auto place = [&](int g, int& m0, int& n0, int& batch) {
            batch = g / groups_mn;
            int tm, tn;
            gt_cluster_tile_of<Cfg::WGM, CN>(g - batch * groups_mn, tiles_m, tiles_n, tm, tn);
            m0 = tm * MT0;
            n0 = tn * MT1;
        };
        __shared__ __align__(8) gt_u64 gt_slot_bars[STAGES];
        __shared__ __align__(8) gt_u64 gt_free_bars[STAGES];
        const typename Mainloop::Stages st(args, smem, gt_slot_bars, pos);
        if (tid == 0) {
            gt_prefetch_tensor_map(&args.tma_d);
            if constexpr (Epilogue::READS_C) gt_prefetch_tensor_map(&args.tma_c);
        }
        // The output areas, behind the operand ring (epilogue/gt_epilogue_tma.h).
        unsigned char* const out = smem + STAGES * Mainloop::STAGE_BYTES;
        const GtFreeSlots<Cfg> free(gt_free_bars);
        Epilogue::init(tid);
        free.init(tid);
        free.sync_all();
        if (tid >= Cfg::THREADS) {
            // The producer: `it` counts the stages loaded, across tiles. Where C lands in the
            // staging area, it also loads each tile's C, once the leaders have handed the area
            // over (halfway through the tile's K steps): at the first stage whose slot they
            // can only have freed after that, or after the tile's last stage.
            static_assert(Cfg::PLR < STAGES, "the hand-over precedes the release of stage c_after - STAGES");
            const int c_after = ktiles / 2 + STAGES - Cfg::PLR + 1;
            const int c_stage = !Epilogue::IN_PLACE ? -1 : c_after < ktiles ? c_after : ktiles - 1;
            if (pos.lane == 0) {
                int it = 0, tile = 0;
                for (int g = cluster; g < groups; g += clusters, ++tile) {
                    int m0, n0, batch;
                    place(g, m0, n0, batch);
                    for (int kt = 0; kt < ktiles; ++kt, ++it) {
                        free.wait_refill(it);
                        st.ring.load(args, it % STAGES, kt * DU, m0, n0, batch);
                        if (kt == c_stage) Epilogue::fetch_c_in_place(args, out, m0, n0, batch, tile);
                    }
                }
            }
            __syncwarp();
        } else {
            // The warpgroups: IN_FLIGHT stages stay in the tensor cores while the next is
            // issued; the stage before them is done and its slot goes back to the producer.
            constexpr int IN_FLIGHT = Cfg::PLR;
            auto release = [&](int it) {
                if (pos.lane == 0) free.release(it);
            };
            float acc[ACC];
            // Where beta reads C apart from the staging area, the leader issues tile g's C into
            // ring slot `slot`: the first C_STAGES tiles' before any, then each as soon as the
            // tile C_STAGES before it is blended (epilogue/gt_epilogue_tma.h).
            auto fetch_c = [&](int g, int slot) {
                if (g >= groups || !Epilogue::leader(tid)) return;
                int m0, n0, batch;
                place(g, m0, n0, batch);
                Epilogue::fetch_c(args, out, m0, n0, batch, tid, slot);
            };
            for (int s = 0; s < Epilogue::C_STAGES; ++s) fetch_c(cluster + s * clusters, s);
            int it = 0, tile = 0;
            for (int g = cluster; g < groups; g += clusters, ++tile) {
#pragma unroll
                for (int i = 0; i < ACC; ++i) acc[i] = 0.0f;
                for (int kt = 0; kt < ktiles; ++kt, ++it) {
                    st.ring.wait(it);
                    st.multiply(acc, it % STAGES);
                    Mainloop::Compute::template settle<IN_FLIGHT>(acc);
                    if (kt >= IN_FLIGHT) release(it - IN_FLIGHT);
                    if (kt == ktiles / 2) Epilogue::free_staging(tid);
                }
                Mainloop::Compute::template settle<0>(acc);
                // The stages still in the tensor cores are done: the producer may refill them.
                for (int j = IN_FLIGHT < ktiles ? IN_FLIGHT : ktiles; j >= 1; --j) release(it - j);
                int m0, n0, batch;
                place(g, m0, n0, batch);
                Epilogue::write(args, out, acc, pos, m0, n0, batch, tid, tile);
                if constexpr (Epilogue::C_APART)
                    fetch_c(g + Epilogue::C_STAGES * clusters, tile % Epilogue::C_STAGES);
            }
            Epilogue::drain(tid);
        }
        free.leave();
    }
};
