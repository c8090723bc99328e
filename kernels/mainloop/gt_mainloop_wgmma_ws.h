// mainloop/gt_mainloop_wgmma_ws.h: the warp-specialised mainloop of the warpgroup path
// (ProducerWarp). One warp more than the warpgroups, the producer, keeps the ring full: its
// lane 0 waits for a slot to be released, then issues the slot's tensor-map loads. The
// warpgroups only wait for their data, multiply, and release a slot once their wgmmas on it
// are done: every consumer warp arrives on the slot's "free" barrier. No workgroup barrier
// sits in the loop, so a slot is refilled as soon as the last warp is done with it and the
// warpgroups never wait for each other; all STAGES slots can be in flight.
#pragma once

template <class Cfg> struct GtWgmmaMainloopWs : GtWgmmaMainloop<Cfg> {
    typedef GtWgmmaMainloop<Cfg> Base;
    typedef typename Base::Compute Compute;
    static constexpr int STAGES = Cfg::STAGES, ACC = Base::ACC;
    static constexpr int CONSUMER_WARPS = Cfg::THREADS / Cfg::WAVE;

    // Same contract as GtWgmmaMainloop::run.
    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* smem, const GtPos& pos, int m0, int n0,
                              int batch, const GtKRange<Cfg::DU>& kr, float (&acc)[ACC]) {
        __shared__ __align__(8) gt_u64 gt_slot_bars[STAGES];
        __shared__ __align__(8) gt_u64 gt_free_bars[STAGES];
        const typename Base::Stages st(smem, gt_slot_bars, pos);
        const gt_u32 free0 = gt_lds_addr(gt_free_bars);
        if (pos.tid == 0) {
#pragma unroll
            for (int s = 0; s < STAGES; ++s) gt_mbar_init(free0 + 8 * s, CONSUMER_WARPS);
            gt_mbar_init_fence();
        }
        gt_barrier();
        if (pos.tid >= Cfg::THREADS) {
            if (pos.lane == 0) {
                for (int t = 0; t < kr.count; ++t) {
                    const int slot = t % STAGES;
                    // The f-th refill of a slot waits for the release of the fill before it,
                    // which completes phase f - 1 of the slot's free barrier.
                    if (t >= STAGES) gt_mbar_wait(free0 + 8 * slot, gt_u32(t / STAGES - 1) & 1u);
                    st.ring.load(args, slot, kr.k0(t), m0, n0, batch);
                }
            }
            __syncwarp();  // the warp reaches the barrier below converged
        } else {
            // IN_FLIGHT stages stay in the tensor cores while the next one is issued; the
            // stage before them is done and its slot goes back to the producer.
            constexpr int IN_FLIGHT = Cfg::PLR;
            for (int t = 0; t < kr.count; ++t) {
                st.ring.wait(t);
                st.multiply(acc, t % STAGES);
                Compute::template settle<IN_FLIGHT>(acc);
                if (t >= IN_FLIGHT && pos.lane == 0) gt_mbar_arrive(free0 + 8 * ((t - IN_FLIGHT) % STAGES));
            }
            Compute::template settle<0>(acc);
        }
        // Every load was waited for, and the warpgroups finish their last wgmmas
        // independently: the LDS becomes the output tile only when all are done.
        gt_barrier();
    }
};
