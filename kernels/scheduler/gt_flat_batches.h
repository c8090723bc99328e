// scheduler/gt_flat_batches.h: the flat batch path's schedule (FlatBatch = 1), for many small
// batched GEMMs: workgroup x takes batches [x * WavesM, (x + 1) * WavesM), one a group of
// WavesN waves. Each group copies its batch's A and B into its part of the LDS, waits for its
// own copies only (a wave alone on its batch does not wait for the others), multiplies and
// stores every total to D with alpha and beta (epilogue/gt_flat_store.h). The multiply and
// the form of the copies are the mainloop's: f32 images of the flat ranges and FMAs
// (mainloop/gt_flat_batch.h, MatrixInstruction 1x1x1), or 16-bit tiles padded to whole matrix
// instructions (mainloop/gt_flat_batch_mma.h). No split, no tiles: the batch is one tile.
#pragma once

// One batch from its operands in LDS to D: the products summed into a lane's accumulators,
// then stored (both flat schedules).
template <class Cfg, class Mainloop>
GT_DEVICE void gt_flat_batch_out(const GtGemmArgs& args, const typename Mainloop::Operands& ops, gt_i64 batch, int lane) {
    float acc[Mainloop::ACC];
#pragma unroll
    for (int i = 0; i < Mainloop::ACC; ++i) acc[i] = 0.0f;
    Mainloop::accumulate(args, ops, lane, acc);
    gt_plant_wrong_result(acc);
    gt_flat_store<Cfg, Mainloop>(args, batch, lane, acc);
}

template <class Cfg> struct GtFlatBatches {
    typedef typename GtPick<Cfg::USE_MMA, GtFlatBatchMma<Cfg>, GtFlatBatch<Cfg>>::type Mainloop;
    typedef typename Cfg::TA TA;
    typedef typename Cfg::TB TB;
    static_assert(Cfg::GSU == 1 && !Cfg::STREAM_K && !Cfg::PERSISTENT, "the flat batch path computes each batch whole");

    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* lds, int tid) {
        const int group = tid / Mainloop::LANES, lane = tid % Mainloop::LANES;
        const gt_i64 batch = (gt_i64)blockIdx.x * Cfg::WG0 + group;
        unsigned char* const mine = lds + group * Mainloop::group_bytes(args);
        const bool live = batch < args.batch;
        typename Mainloop::Operands ops{};
        if (live) {
            const TA* a = reinterpret_cast<const TA*>(args.a) + batch * args.stride_a;
            const TB* b = reinterpret_cast<const TB*>(args.b) + batch * args.stride_b;
            ops = Mainloop::copy(args, a, b, mine, lane);
        }
        // Every wave reaches the barrier before a group past the last batch leaves.
        if constexpr (Cfg::WG1 == 1)
            gt_wave_sync();
        else
            gt_barrier();
        if (!live) return;
        gt_flat_batch_out<Cfg, Mainloop>(args, ops, batch, lane);
    }
};
