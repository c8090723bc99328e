// scheduler/gt_stream_k.h: the stream-K tile scheduler (GSU<n>S). The grid is a fixed number
// of persistent workgroups (GSU per compute unit). The work is the sequence of (tile, K tile)
// iterations, tile-major over the batch; workgroup c takes the contiguous range
// [start(c), start(c + 1)) of it, the first `r` workgroups one iteration more than the rest, so
// every compute unit gets the same work whatever the tile count. A tile whose iterations fall
// to several workgroups is finished by the last of them to arrive, which stores D
// (epilogue/gt_fixup.h). One pipeline runs over a workgroup's whole range: the loads run ahead
// across tile boundaries, so a tile change costs no pipeline drain and refill. The output tile
// is staged in its own LDS region after the stage ring, so it can be written out while the
// next tile's operands are in flight. On the warp-level LDS paths an edge tile is computed
// shifted back inside the matrix, and its store leaves out what the tile before it stores
// (scheduler/gt_tile_map.h, GtEdgeShift).
//
// Iteration counts are 32-bit (the space refuses stream-K beyond 2^31 iterations): this
// bookkeeping stays live across the main loop, and 64-bit values there cost registers the
// loop's address arithmetic needs.
#pragma once

struct GtStreamK {
    gt_u32 q, r;  // iterations per workgroup; workgroups with one more
    GT_DEVICE gt_u32 start(gt_u32 c) const { return c * q + (c < r ? c : r); }
    // The workgroup whose range holds iteration x.
    GT_DEVICE gt_u32 owner(gt_u32 x) const {
        const gt_u32 big = r * (q + 1);
        return x < big ? x / (q + 1) : r + (x - big) / q;
    }
};

template <class Cfg, class Mainloop, class Epilogue> struct GtStreamKScheduler {
    static constexpr int MT0 = Cfg::MT0, MT1 = Cfg::MT1, DU = Cfg::DU, STAGES = Cfg::STAGES, ACC = Mainloop::ACC;
    typedef GtSharedTile<Cfg> Shared;

    // Finishes the staged partial tile `tile` (iterations [first, first + ktiles)) computed by
    // this workgroup: contributors are the workgroups whose ranges hold those iterations, each
    // with two workspace slots (0 for the first tile of its range, 1 for the last; no range
    // needs more).
    GT_DEVICE static bool fixup(const GtGemmArgs& args, float* ctile, const GtStreamK& sk, gt_u32 tile, gt_u32 first,
                                gt_u32 ktiles, int tid, int* last_flag) {
        auto slot = [&](gt_u32 c) {
            return reinterpret_cast<GtF4*>(args.workspace) +
                   gt_i64(c * 2 + (sk.start(c) >= first ? 0 : 1)) * Shared::TILE_VECS;
        };
        return Shared::finish(ctile, slot, args.flags + tile, sk.owner(first), sk.owner(first + ktiles - 1),
                              blockIdx.x, tid, last_flag);
    }

    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* lds, int tid) {
        const GtPos pos = Mainloop::position(tid);
        unsigned char* const smem = Mainloop::lds_base(lds);
        const gt_i64 M = args.m, N = args.n, K = args.k;
        const int tiles_m = int((M + MT0 - 1) / MT0), tiles_n = int((N + MT1 - 1) / MT1);
        const int ktiles = int((K + DU - 1) / DU);
        float acc[ACC];
        __shared__ int last_flag;
        float* const stile = reinterpret_cast<float*>(smem + STAGES * Mainloop::STAGE_BYTES);
        const gt_u32 tiles_mn = gt_u32(tiles_m) * gt_u32(tiles_n), kt = gt_u32(ktiles);
        const gt_u32 work = tiles_mn * gt_u32(args.batch) * kt;
        const GtStreamK sk{work / gridDim.x, work % gridDim.x};
        const gt_u32 w_begin = sk.start(blockIdx.x), w_end = sk.start(blockIdx.x + 1);
        const int iters = int(w_end - w_begin);
        // Tile `tile` -> its origin and batch.
        auto place = [&](gt_u32 tile, int& m0, int& n0, int& batch) {
            batch = int(tile / tiles_mn);
            int tm, tn;
            gt_tile_of<Cfg::WGM>(int(tile - gt_u32(batch) * tiles_mn), tiles_m, tiles_n, tm, tn);
            m0 = tm * MT0;
            n0 = tn * MT1;
        };
        // The producer walks the range in order, tracking its tile instead of dividing per load:
        // `load_next(issue)` has `issue(slot)` start the loads of its current iteration, then
        // moves it on.
        // An edge tile is loaded shifted back inside the matrix (GtEdgeShift); `finish` stores
        // only its own part.
        auto place_loads = [&](gt_u32 tile, int& m0, int& n0, int& batch) {
            place(tile, m0, n0, batch);
            m0 -= GtEdgeShift<Cfg>::m(m0, M);
            n0 -= GtEdgeShift<Cfg>::n(n0, N);
        };
        gt_u32 ld_tile = w_begin / kt;
        int ld_k = int(w_begin - ld_tile * kt), ld_m0, ld_n0, ld_batch;
        place_loads(ld_tile, ld_m0, ld_n0, ld_batch);
        GtRingPos<STAGES> ld_pos(0);
        auto load_next = [&](auto issue) {
            issue(ld_pos.slot);
            ld_pos.next();
            if (++ld_k == ktiles) {
                ld_k = 0;
                place_loads(++ld_tile, ld_m0, ld_n0, ld_batch);
            }
        };
        // The consumer finishes a tile at its last iteration in this range.
        gt_u32 boundary = (w_begin / kt + 1) * kt;
        auto finish = [&](int i) {
            const gt_u32 tile = (w_begin + gt_u32(i)) / kt, first = tile * kt;
            int m0, n0, batch;
            place(tile, m0, n0, batch);
            const int dm = GtEdgeShift<Cfg>::m(m0, M), dn = GtEdgeShift<Cfg>::n(n0, N);
            Epilogue::stage(stile, acc, pos);
            gt_barrier();
            const bool whole = first >= w_begin && first + kt <= w_end;
            if (whole || fixup(args, stile, sk, tile, first, kt, tid, &last_flag))
                Epilogue::store(args, stile, m0 - dm, n0 - dn, batch, 0, tid, dm, dn);
            gt_barrier();  // the staging tile is read out before the next tile is staged
#pragma unroll
            for (int j = 0; j < ACC; ++j) acc[j] = 0.0f;
            boundary += kt;
        };
        auto ends_tile = [&](int i) { return w_begin + gt_u32(i) + 1 == boundary || i + 1 == iters; };
#pragma unroll
        for (int j = 0; j < ACC; ++j) acc[j] = 0.0f;
        // Loads and multiplies walk the ring in order: their places in it advance by one.
        GtRingPos<STAGES> p(0);
        if constexpr (Mainloop::ASYNC_TENSOR) {
            // Tensor-map loads by one thread, as in the warpgroup mainloop.
            __shared__ __align__(8) gt_u64 gt_slot_bars[STAGES];
            const typename Mainloop::Stages st(args, smem, gt_slot_bars, pos);
            gt_barrier();
            auto issue = [&](int slot) {
                if (tid == 0) st.ring.load(args, slot, ld_k * DU, ld_m0, ld_n0, ld_batch);
            };
            constexpr int IN_FLIGHT = Cfg::PLR;
            constexpr int AHEAD = STAGES - 1 - IN_FLIGHT;
            static_assert(AHEAD >= 1, "stream-K pipelines need a stage in flight");
#pragma unroll
            for (int s = 0; s < AHEAD; ++s)
                if (s < iters) load_next(issue);
            for (int i = 0; i < iters; ++i, p.next()) {
                st.ring.wait(p);
                gt_barrier();  // the stage the load below reuses is no longer read
                st.multiply(acc, p.slot);
                if (i + AHEAD < iters) load_next(issue);
                if (ends_tile(i)) {
                    Mainloop::Compute::template settle<0>(acc);
                    finish(i);
                } else {
                    Mainloop::Compute::template settle<IN_FLIGHT>(acc);
                }
            }
        } else {
            // The LDS mainloop's ring (mainloop/gt_mainloop_lds.h), run across tile boundaries:
            // loads through registers are issued before the multiplies and land after them, and
            // a carrying compute reads the next stage's first operands (of this tile or the
            // next) during the last multiplies.
            static_assert(STAGES >= 2, "stream-K pipelines need a stage in flight");
            constexpr int IN_FLIGHT = Mainloop::CARRIES ? STAGES - 3 : STAGES - 2;
            typename Mainloop::Regs regs;
            typename Mainloop::Carry carry;
            auto issue = [&](int slot) {
                Mainloop::issue(args, Mainloop::stage_at(smem, slot), tid, ld_m0, ld_n0, ld_batch, ld_k * DU, regs);
            };
#pragma unroll
            for (int s = 0; s < STAGES - 1; ++s) {
                if (s < iters) load_next([&](int slot) {
                    issue(slot);
                    Mainloop::land(Mainloop::stage_at(smem, slot), tid, regs);
                });
                gt_copy_commit();
            }
            for (int i = 0; i < iters; ++i, p.next()) {
                gt_copy_wait<IN_FLIGHT>();
                gt_barrier();  // stage i visible to all; stage i - 1 free for reuse
                if constexpr (Mainloop::CARRIES) {
                    if (i == 0) Mainloop::prime(carry, smem, p, pos);
                }
                unsigned char* const landing = Mainloop::stage_at(smem, ld_pos.slot);
                const bool more = i + STAGES - 1 < iters;
                if (more) load_next(issue);
                gt_copy_commit();
                if constexpr (Mainloop::CARRIES) {
                    Mainloop::consume_carried(acc, carry, smem, p, pos);
                } else {
                    Mainloop::consume(acc, smem, p.slot, pos);
                }
                if (more) Mainloop::land(landing, tid, regs);
                if (ends_tile(i)) finish(i);
            }
        }
        gt_copy_wait<0>();
    }
};
