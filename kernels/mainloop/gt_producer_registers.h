// mainloop/gt_producer_registers.h: the register hand-over of a producer warpgroup
// (ProducerWarp=2, and ping-pong's producer). Loading a ring through tensor maps takes one
// thread and a few registers, so the producer warpgroup drops to PRODUCER registers a thread
// (setmaxnreg.dec) and the computing warpgroups rise to CONSUMER (setmaxnreg.inc): what the
// producer's 40 leave of the 65536, in steps of 8, at most 256; 232 each for two warpgroups,
// which enter with 168 (65536 / 384). That holds a 192x104 warpgroup tile's 156 accumulators
// that the 168 of a launch with a producer warp cannot. The src/space rules hold a config's
// register estimate against the same figure (producer_warpgroup_consumer_registers).
//
//   producer warpgroup: enter with ENTRY, give back to PRODUCER, issue the loads
//   computing warpgroups: enter with ENTRY, take CONSUMER, multiply and store
#pragma once

template <class Cfg> struct GtProducerRegisters {
    static constexpr int COMPUTING = Cfg::THREADS * Cfg::CONSUMERS;
    static constexpr int PRODUCER = 40;
    static constexpr int SHARE = ((65536 - 128 * PRODUCER) / COMPUTING) & ~7;
    static constexpr int CONSUMER = SHARE < 256 ? SHARE : 256;
    // What every thread enters with: a sub-partition's 16384 registers over its warps.
    static constexpr int ENTRY = (16384 / (((Cfg::LAUNCH_THREADS / 32) + 3) / 4 * 32)) & ~7;
    static_assert(!Cfg::PRODUCER_WARPGROUP ||
                      (Cfg::LAUNCH_THREADS == COMPUTING + 128 && PRODUCER < ENTRY && CONSUMER > ENTRY &&
                       COMPUTING * CONSUMER + 128 * PRODUCER <= 65536),
                  "a producer warpgroup beside computing ones that it gives registers to");

    // The producer warpgroup's threads, all of them converged, as they start producing.
    GT_DEVICE static void producer() {
        if constexpr (Cfg::PRODUCER_WARPGROUP) gt_setmaxnreg_dec<PRODUCER>();
    }
    // The computing warpgroups' threads, all of them converged, before their first multiply.
    GT_DEVICE static void consumer() {
        if constexpr (Cfg::PRODUCER_WARPGROUP) gt_setmaxnreg_inc<CONSUMER>();
    }
};
