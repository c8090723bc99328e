// mainloop/gt_mainloop_wgmma_ws.h: the warp-specialised mainloop of the warpgroup path
// (ProducerWarp). One warp more than the warpgroups, the producer, keeps the ring full: its
// lane 0 waits for a slot to be released, then issues the slot's tensor-map loads. The
// warpgroups only wait for their data, multiply, and release a slot once their wgmmas on it
// are done: every consumer warp arrives on the slot's "free" barrier (loader/gt_free_slots.h,
// cluster-wide when the cluster shares A tiles). No workgroup barrier sits in the loop, so a
// slot is refilled as soon as the last warp is done with it and the warpgroups never wait for
// each other; all STAGES slots can be in flight.
#pragma once

template <class Cfg> struct GtWgmmaMainloopWs : GtWgmmaMainloop<Cfg> {
    typedef GtWgmmaMainloop<Cfg> Base;
    typedef typename Base::Compute Compute;
    static constexpr int STAGES = Cfg::STAGES, ACC = Base::ACC;

    // Same contract as GtWgmmaMainloop::run.
    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* smem, const GtPos& pos, int m0, int n0,
                              int batch, const GtKRange<Cfg::DU>& kr, float (&acc)[ACC]) {
        __shared__ __align__(8) gt_u64 gt_slot_bars[STAGES];
        __shared__ __align__(8) gt_u64 gt_free_bars[STAGES];
        const typename Base::Stages st(args, smem, gt_slot_bars, pos);
        const GtFreeSlots<Cfg> free(gt_free_bars);
        free.init(pos.tid);
        free.sync_all();
        if (pos.tid >= Cfg::THREADS) {
            if (pos.lane == 0) {
                GtRingPos<STAGES> p(0);
                for (int t = 0; t < kr.count; ++t, p.next()) {
                    free.wait_refill(p, t);
                    st.ring.load(args, p.slot, kr.k0(t), m0, n0, batch);
                }
            }
            __syncwarp();  // the warp reaches the barrier below converged
        } else {
            // IN_FLIGHT stages stay in the tensor cores while the next one is issued; the
            // stage before them is done and its slot goes back to the producer.
            // `p` is stage t's place in the ring, `done` that of the stage IN_FLIGHT back.
            constexpr int IN_FLIGHT = Cfg::PLR;
            GtRingPos<STAGES> p(0), done(0);
            for (int t = 0; t < kr.count; ++t, p.next()) {
                st.ring.wait(p);
                st.multiply(acc, p.slot);
                Compute::template settle<IN_FLIGHT>(acc);
                if (t >= IN_FLIGHT) {
                    if (free.arrives(pos.lane)) free.release(done.slot, pos.lane);
                    done.next();
                }
            }
            Compute::template settle<0>(acc);
        }
        // Every load was waited for, and the warpgroups finish their last wgmmas
        // independently: the LDS becomes the output tile only when all are done (and, in a
        // cluster, when no peer arrives on this workgroup's barriers any more).
        free.sync_all();
    }
};
