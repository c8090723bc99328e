// mainloop/gt_mainloop_wgmma_ws.h: the warp-specialised mainloop of the warpgroup path
// (ProducerWarp). One warp more than the warpgroups, the producer, keeps the ring full: its
// lane 0 waits for a slot to be released, then issues the slot's tensor-map loads. The
// warpgroups only wait for their data, multiply, and release a slot once their wgmmas on it
// are done: every consumer warp arrives on the slot's "free" barrier (loader/gt_free_slots.h,
// cluster-wide when the cluster shares A tiles). No workgroup barrier sits in the loop, so a
// slot is refilled as soon as the last warp is done with it and the warpgroups never wait for
// each other; all STAGES slots can be in flight.
//
// A producer warpgroup (ProducerWarp=2) gives its registers to the warpgroups
// (mainloop/gt_producer_registers.h) and one lane of its first warp loads. Its path and the
// warpgroups' never join (`run_apart`): at a join the accumulators would have to fit in the
// registers every thread entered with (168 for 384 threads), and a 192x104 warpgroup tile's
// 156 spilled there.
#pragma once

template <class Cfg> struct GtWgmmaMainloopWs : GtWgmmaMainloop<Cfg> {
    typedef GtWgmmaMainloop<Cfg> Base;
    typedef typename Base::Compute Compute;
    typedef typename Base::Stages Stages;
    static constexpr int STAGES = Cfg::STAGES, ACC = Base::ACC;

    // Same contract as GtWgmmaMainloop::run.
    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* smem, const GtPos& pos, int m0, int n0,
                              int batch, const GtKRange<Cfg::DU>& kr, float (&acc)[ACC]) {
        roles<false>(args, smem, pos, m0, n0, batch, kr, acc, [] {}, [] {});
    }

    // As `run`, then the producer runs `producer_tail()` and the warpgroups `consumer_tail()`,
    // each on its own path, with a producer warpgroup's register hand-over: the two paths
    // only meet at the end of the kernel, so the caller puts all the work that follows the
    // main loop in the tails.
    template <class ProducerTail, class ConsumerTail>
    GT_DEVICE static void run_apart(const GtGemmArgs& args, unsigned char* smem, const GtPos& pos, int m0, int n0,
                                    int batch, const GtKRange<Cfg::DU>& kr, float (&acc)[ACC],
                                    ProducerTail producer_tail, ConsumerTail consumer_tail) {
        roles<true>(args, smem, pos, m0, n0, batch, kr, acc, producer_tail, consumer_tail);
    }

  private:
    // The ring and its release barriers, then each thread's role; APART: the roles' paths
    // never join (the tails run on them), else they join before the closing barrier.
    template <bool APART, class ProducerTail, class ConsumerTail>
    GT_DEVICE static void roles(const GtGemmArgs& args, unsigned char* smem, const GtPos& pos, int m0, int n0,
                                int batch, const GtKRange<Cfg::DU>& kr, float (&acc)[ACC], ProducerTail producer_tail,
                                ConsumerTail consumer_tail) {
        __shared__ __align__(8) gt_u64 gt_slot_bars[STAGES];
        __shared__ __align__(8) gt_u64 gt_free_bars[STAGES];
        const Stages st(args, smem, gt_slot_bars, pos);
        const GtFreeSlots<Cfg> free(gt_free_bars);
        free.init(pos.tid);
        free.sync_all();
        if (pos.tid >= Cfg::THREADS) {
            if constexpr (APART) GtProducerRegisters<Cfg>::producer();
            produce(args, st, free, pos, m0, n0, batch, kr);
            if constexpr (APART) {
                finish(free);
                producer_tail();
            }
        } else {
            if constexpr (APART) GtProducerRegisters<Cfg>::consumer();
            consume(st, free, pos, kr, acc);
            if constexpr (APART) {
                finish(free);
                consumer_tail();
            }
        }
        if constexpr (!APART) finish(free);
    }

    // The producer: its first thread refills each slot once the warpgroups released it.
    GT_DEVICE static void produce(const GtGemmArgs& args, const Stages& st, const GtFreeSlots<Cfg>& free,
                                  const GtPos& pos, int m0, int n0, int batch, const GtKRange<Cfg::DU>& kr) {
        if (pos.tid == Cfg::THREADS) {
            GtRingPos<STAGES> p(0);
            for (int t = 0; t < kr.count; ++t, p.next()) {
                free.wait_refill(p, t);
                st.ring.load(args, p.slot, kr.k0(t), m0, n0, batch);
            }
        }
        __syncwarp();  // the warp reaches the barrier after the loop converged
    }

    // The warpgroups: IN_FLIGHT stages stay in the tensor cores while the next one is issued;
    // the stage before them is done and its slot goes back to the producer.
    GT_DEVICE static void consume(const Stages& st, const GtFreeSlots<Cfg>& free, const GtPos& pos,
                                  const GtKRange<Cfg::DU>& kr, float (&acc)[ACC]) {
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

    // Every load was waited for, and the warpgroups finish their last wgmmas independently:
    // the LDS becomes the output tile only when all are done (and, in a cluster, when no peer
    // arrives on this workgroup's barriers any more).
    GT_DEVICE static void finish(const GtFreeSlots<Cfg>& free) { free.sync_all(); }
};
