// scheduler/gt_persistent.h: the persistent tile scheduler of the warpgroup path
// (PersistentKernel, `_PK1`). One workgroup per compute unit walks the output tiles
// blockIdx.x, blockIdx.x + gridDim.x, ... (WorkGroupMapping order, batch by batch). Its producer
// warp fills one ring of LDS stages across all of them, so the next tile's operands load while
// the warpgroups finish and store the current one; the warpgroups multiply each stage, hand
// its slot back, and store each finished tile through the tensor memory accelerator
// (epilogue/gt_epilogue_tma.h) without waiting for the stores; where beta reads C into LDS, each
// tile's C loads while the tile is multiplied (read straight from global memory instead, it
// comes in the epilogue; through the ring, it follows the tile's K stages into their slots:
// epilogue/gt_c_ring.h). Nothing drains between tiles:
// no pipeline refill and no epilogue on the tensor cores' critical path.
//
//   producer warp: for each tile, each K tile: wait for a free slot, issue its boxes
//   warpgroups:    for each tile: multiply each stage, free its slot; stage the tile, store it
//
// A cluster of CLUSTER_M x CLUSTER_N workgroups (ClusterM, ClusterN) walks the tiles as one:
// cluster c takes the blocks of CLUSTER_M x CLUSTER_N neighbouring tiles c, c + clusters, ...,
// each workgroup the tile of its rank (layout/gt_cluster_layout.h), and the A tile of each
// stage is shared along a tile row, the B tile along a column (loader/gt_tma_loader.h).
//
// Stream-K (PersistentKernel=1 with GSU1S): instead of whole tiles, each cluster takes an
// even share of all (tile group, K tile) units (scheduler/gt_tile_walk.h), so a tile count
// just past a multiple of the compute units leaves no wave mostly idle. Where a tile is split
// between clusters, the parts meet in the workspace (epilogue/gt_fixup.h, GtRegisterPartials)
// and the workgroup that completes the tile adds them up and stores it; the
// producer warp meanwhile loads on into the next segment.
//
// Ping-pong (PersistentKernel=2, Cfg::CONSUMERS = 2): two warpgroups, each computing whole
// tiles, take this workgroup's tiles in turn (the first one the 1st, 3rd, ..., the second the
// 2nd, 4th, ...), each with a staging area of its own. The producer still fills the ring in
// tile order, so a warpgroup's stages follow the other's last ones; it starts waiting for
// them once the other has waited for its last stage (a turn barrier each), and multiplies
// while the other finishes and stores its tile. The tensor cores then idle only where both
// store at once. The turn is not only for speed: a slot's barrier tells its phases apart by
// parity, so nobody may wait for a fill before the fill before it has been waited for. The
// producer is a whole warpgroup here (one warp of it loads): it gives its registers to the
// two computing warpgroups, which could not hold a whole tile's accumulators otherwise.
//
//   warpgroup 0: [tile 0: wait turn | K steps | store] [tile 2: wait turn | ... ]
//   warpgroup 1:            [tile 1: wait turn | K steps | store] [tile 3 ...]
#pragma once

template <class Cfg, class Mainloop, class Epilogue> struct GtPersistentScheduler {
    static constexpr int MT0 = Cfg::MT0, MT1 = Cfg::MT1, DU = Cfg::DU, STAGES = Cfg::STAGES, ACC = Mainloop::ACC;
    // C read directly (Cfg::C_PREFETCH): the columns of C one prefetch asks the L2 for, and how
    // many K steps before a tile's last the producer starts asking. H200, the 128x256 tile with
    // f32 C and D, beta 1, kernel against kernel (us; no prefetch / the whole tile's C as one box
    // at the tile's first step / 32 columns a step from halfway [cuBLASLt]): 2048x8192x2048
    // 161.8 / 159.3 / 142.5 [142.7]; 4096^3 232.7 / 234.0 / 232.1 [210.6], NT 233.8 / 235.2 /
    // 231.0; 11008x4096x4096 NT 631.8 / 634.4 / 627.8 [516.4]; but 8192x4096x8192 788.6 / 798.6 /
    // 815.9 [737-757]: asked 64 steps ahead, C left the L2 before it was read.
    static constexpr int C_PIECE = 32, C_LEAD = 24;
    // C through the operand ring (epilogue/gt_c_ring.h): the ring slots a tile's C takes after
    // its K stages, and the rows of the boxes of its tensor map (whole tiles' rows otherwise).
    typedef GtRingC<Cfg, Mainloop> RingC;
    static constexpr int C_STEPS = RingC::STEPS, C_BOX_ROWS = C_STEPS > 0 ? RingC::Tile::CE : MT0;
    static_assert(C_STEPS == 0 || (Cfg::CONSUMERS == 1 && !Cfg::STREAM_K),
                  "C through the ring: one set of consumers, whole tiles");
    static_assert(Cfg::WGMMA && Cfg::PRODUCER_WARP && Cfg::GSU == 1,
                  "the persistent kernel is the warpgroup path with a producer warp, one workgroup per compute unit");
    static_assert(!Cfg::STREAM_K || (Cfg::CONSUMERS == 1 && Cfg::BETA_ZERO),
                  "the persistent kernel's stream-K has one set of consumers and stores D only");
    // The clusters' work: whole tiles, or an even share of the (tile, K tile) units.
    typedef typename GtPick<Cfg::STREAM_K, GtStreamKUnits, GtWholeTiles>::type Walk;

    // Stream-K: the parts of split tile group `g` (this workgroup's own tile in it) meet in
    // the workspace (epilogue/gt_fixup.h): each cluster's two part slots, a flag per tile.
    typedef GtRegisterPartials<ACC, Cfg::THREADS, Epilogue::AREA_BYTES> Partials;

    // After a part of tile group `g`: whether this workgroup completed the tile (and stores
    // it). `out`: this workgroup's staging area; `bars`, `phases`: the two mbarriers the parts'
    // copies into it complete on, and the parities of their next phases.
    GT_DEVICE static bool finish_part(const GtGemmArgs& args, float (&acc)[ACC], const Walk& walk, int g, int tid,
                                      unsigned char* out, gt_u32 bars, gt_u32& phases) {
        if constexpr (Cfg::STREAM_K) {
            __shared__ int last;
            const gt_u32 lo = walk.first_owner(g), rank = blockIdx.x % Cfg::CLUSTER;
            auto slot = [&](gt_u32 c) {
                return reinterpret_cast<float*>(args.workspace) +
                       gt_i64(walk.part_slot(c, lo, g) * Cfg::CLUSTER + rank) * (MT0 * MT1);
            };
            auto sync = []() { gt_named_barrier<1>(Cfg::THREADS); };
            auto reclaim = [&]() {
                if (Epilogue::leader(tid)) gt_bulk_wait<0, true>();
            };
            return Partials::finish(acc, slot, args.flags + (gt_u32(g) * Cfg::CLUSTER + rank), lo, walk.last_owner(g),
                                    blockIdx.x / Cfg::CLUSTER, tid, &last, sync, reclaim, out, bars, phases);
        } else {
            return true;
        }
    }

    static constexpr int CONSUMERS = Cfg::CONSUMERS, COMPUTING = Cfg::THREADS * CONSUMERS;
    // A producer warpgroup (ping-pong's, or ProducerWarp=2's beside the two warpgroups of one
    // tile) gives its registers to the computing threads (mainloop/gt_producer_registers.h).
    // (Handing them to the two warpgroups of one 128x256 tile ran as fast as the producer warp
    // on 2048^3 and 4096^3, and 7% slower on 8192^3, H200; it is for the tiles whose
    // accumulators 168 registers cannot hold.)
    typedef GtProducerRegisters<Cfg> Registers;

    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* lds, int tid) {
        // Each set of consumers places its warps in the tile alike.
        GtPos pos = Mainloop::position(tid % Cfg::THREADS);
        pos.tid = tid;
        unsigned char* const smem = Mainloop::lds_base(lds);
        const int tiles_m = int((args.m + MT0 - 1) / MT0), tiles_n = int((args.n + MT1 - 1) / MT1);
        const int ktiles = int((args.k + DU - 1) / DU);
        // Blocks of CLUSTER_M x CLUSTER_N tiles: one per cluster at a time.
        constexpr int CN = Cfg::CLUSTER_N, CM = Cfg::CLUSTER_M;
        const int groups_mn = (tiles_m / CM) * (tiles_n / CN), groups = groups_mn * args.batch;
        const int cluster = int(blockIdx.x) / Cfg::CLUSTER, clusters = int(gridDim.x) / Cfg::CLUSTER;
        // Tile group `g` -> this workgroup's tile origin and batch.
        auto place = [&](int g, int& m0, int& n0, int& batch) {
            batch = g / groups_mn;
            int tm, tn;
            gt_cluster_tile_of<Cfg::WGM, CN, CM>(g - batch * groups_mn, tiles_m, tiles_n, tm, tn);
            m0 = tm * MT0;
            n0 = tn * MT1;
        };
        __shared__ __align__(8) gt_u64 gt_slot_bars[STAGES];
        __shared__ __align__(8) gt_u64 gt_free_bars[STAGES];
        // Ping-pong: warpgroup c waits on turn c; the other arrives once it has waited for
        // its tile's last stage.
        __shared__ __align__(8) gt_u64 gt_turn_bars[CONSUMERS];
        // Stream-K: the copies of split tiles' parts into the staging area's buffers complete
        // on these.
        __shared__ __align__(8) gt_u64 gt_part_bars[2];
        const gt_u32 part_bars = gt_lds_addr(gt_part_bars);
        const typename Mainloop::Stages st(args, smem, gt_slot_bars, pos);
        if (tid == 0) {
            gt_prefetch_tensor_map(&args.tma_d);
            if constexpr (Epilogue::C_VIA_LDS || Cfg::C_PREFETCH) gt_prefetch_tensor_map(&args.tma_c);
        }
        // Which set of consumers this thread is in, and its output areas, behind the operand
        // ring (epilogue/gt_epilogue_tma.h).
        const int cons = CONSUMERS == 1 ? 0 : gt_min(tid / Cfg::THREADS, CONSUMERS - 1);
        unsigned char* const out = smem + STAGES * Mainloop::STAGE_BYTES + cons * Epilogue::AREA_BYTES;
        const GtFreeSlots<Cfg> free(gt_free_bars);
        Epilogue::init(tid);
        free.init(tid);
        if (CONSUMERS > 1 && tid == 0) {
#pragma unroll
            for (int c = 0; c < CONSUMERS; ++c) gt_mbar_init(gt_lds_addr(&gt_turn_bars[c]), 1);
            gt_mbar_init_fence();
        }
        if (Cfg::STREAM_K && tid == 0) {
            gt_mbar_init(part_bars, 1);
            gt_mbar_init(part_bars + 8, 1);
            gt_mbar_init_fence();
        }
        free.sync_all();
        if (tid >= COMPUTING) {
            // A producer warpgroup gives its registers to the consumers.
            Registers::producer();
            // The producer: `it` counts the stages loaded, across tiles. Where C lands in the
            // staging area, it also loads each tile's C, once the leaders have handed the area
            // over (halfway through the tile's K steps): at the first stage whose slot they
            // can only have freed after that, or after the tile's last stage.
            static_assert(Cfg::PLR < STAGES, "the hand-over precedes the release of stage c_after - STAGES");
            const int c_after = ktiles / 2 + STAGES - Cfg::PLR + 1;
            const int c_stage = !Epilogue::IN_PLACE ? -1 : c_after < ktiles ? c_after : ktiles - 1;
            if (tid == COMPUTING) {
                int it = 0, tile = 0;
                GtRingPos<STAGES> p(0);
                for (Walk walk(cluster, clusters, groups, ktiles); walk.more(); ++tile) {
                    const GtSegment seg = walk.segment();
                    int m0, n0, batch;
                    place(seg.g, m0, n0, batch);
                    // C read directly: the L2 fetches the tile's C while it is multiplied, one
                    // column group of C_PIECE a K step, from halfway through the tile's K steps
                    // or C_LEAD steps before its last, whichever is later (epilogue/gt_c_direct.h).
                    const int c_half = seg.k0 + (seg.k1 - seg.k0) / 2;
                    const int c_from = c_half > seg.k1 - C_LEAD ? c_half : seg.k1 - C_LEAD;
                    for (int kt = seg.k0; kt < seg.k1; ++kt, ++it, p.next()) {
                        free.wait_refill(p, it);
                        st.ring.load(args, p.slot, kt * DU, m0, n0, batch);
                        if constexpr (Cfg::C_PREFETCH)
                            if (kt >= c_from && kt - c_from < MT1 / C_PIECE)
#pragma unroll
                                for (int r = 0; r < MT0; r += C_BOX_ROWS)
                                    gt_tma_prefetch_l2_3d(&args.tma_c, m0 + r, n0 + (kt - c_from) * C_PIECE, batch);
                        if (kt == c_stage) Epilogue::fetch_c_in_place(args, out, m0, n0, batch, tile);
                    }
                    // C through the ring: the tile's C into the slots after its K stages.
                    for (int s = 0; s < C_STEPS; ++s, ++it, p.next()) {
                        free.wait_refill(p, it);
                        RingC::load(args, st.ring.lds + gt_u32(p.slot * Mainloop::STAGE_BYTES), st.ring.bar0 + 8 * p.slot,
                                    m0, n0, batch, s);
                    }
                    walk.next(seg);
                }
            }
            __syncwarp();
        } else {
            Registers::consumer();
            // The warpgroups: IN_FLIGHT stages stay in the tensor cores while the next is
            // issued; the stage before them is done and its slot goes back to the producer.
            constexpr int IN_FLIGHT = Cfg::PLR;
            // `done`: the place of the oldest stage not yet released.
            auto release = [&](GtRingPos<STAGES>& done) {
                if (free.arrives(pos.lane)) free.release(done.slot, pos.lane);
                done.next();
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
            // Ping-pong: this set's j-th tile waits for phase j - 1 + cons of its turn barrier
            // (the other set's j - 1 + cons arrivals); having waited for the tile's last stage
            // it hands the turn on.
            const gt_u32 my_turn = gt_lds_addr(&gt_turn_bars[cons]);
            const gt_u32 next_turn = gt_lds_addr(&gt_turn_bars[(cons + 1) % CONSUMERS]);
            auto hand_over = [&]() {
                if (CONSUMERS > 1 && tid % Cfg::THREADS == 0) gt_mbar_arrive(next_turn);
            };
            // `it` counts the stages loaded across tiles: this set's start at its first tile's.
            int it = cons * ktiles, tile = 0;
            gt_u32 part_phases = 0;
            for (Walk walk(cluster + cons * clusters, CONSUMERS * clusters, groups, ktiles); walk.more(); ++tile) {
                const GtSegment seg = walk.segment();
                const int steps = seg.k1 - seg.k0;
                if (CONSUMERS > 1 && tile + cons > 0) gt_mbar_wait(my_turn, gt_u32(tile + cons - 1) & 1u);
#pragma unroll
                for (int i = 0; i < ACC; ++i) acc[i] = 0.0f;
                if (steps == 0) hand_over();
                // The segment's stages' places in the ring: one division per segment, none per
                // stage.
                GtRingPos<STAGES> p(it), done(it);
                for (int kt = 0; kt < steps; ++kt, ++it, p.next()) {
                    st.ring.wait(p);
                    if (kt == steps - 1) hand_over();
                    st.multiply(acc, p.slot);
                    Mainloop::Compute::template settle<IN_FLIGHT>(acc);
                    if (kt >= IN_FLIGHT) release(done);
                    if (kt == steps / 2) Epilogue::free_staging(tid);
                }
                Mainloop::Compute::template settle<0>(acc);
                // The stages still in the tensor cores are done: the producer may refill them.
                for (int j = IN_FLIGHT < steps ? IN_FLIGHT : steps; j >= 1; --j) release(done);
                // C through the ring: each slot of the tile's C, once blended, goes back.
#pragma unroll
                for (int s = 0; s < C_STEPS; ++s, ++it, p.next()) {
                    st.ring.wait(p);
                    RingC::blend(args, acc, pos, smem + p.slot * Mainloop::STAGE_BYTES, s);
                    release(done);
                }
                // The other sets' tiles come next in the ring.
                it += (CONSUMERS - 1) * ktiles;
                int m0, n0, batch;
                place(seg.g, m0, n0, batch);
                // A part of a tile goes out only from the last of its contributors.
                if (seg.whole(ktiles) || finish_part(args, acc, walk, seg.g, tid, out, part_bars, part_phases))
                    Epilogue::write(args, out, acc, pos, m0, n0, batch, tid, tile);
                if constexpr (Epilogue::C_APART)
                    fetch_c(seg.g + Epilogue::C_STAGES * clusters, tile % Epilogue::C_STAGES);
                walk.next(seg);
            }
            Epilogue::drain(tid);
        }
        free.leave();
    }
};
