// scheduler/gt_gemv_rows.h: the GEMV path's schedule, over either GEMV mainloop
// (mainloop/gt_gemv.h with FMAs, mainloop/gt_gemv_mma.h on the matrix cores). The grid is (row blocks, GSU splits,
// batch; batches past 65535 folded into y, gt_split_and_batch in scheduler/gt_tile_map.h):
// workgroup (x, y, z) takes rows [x * MT0, (x + 1) * MT0) of batch z over split y's
// contiguous share of K (whole wave-wide vector runs, so every split's vectors stay aligned),
// and every column of B at once, so A is read exactly once. Its totals go straight to D
// (GSU = 1) or, as f32 partials, to the workspace the reduction kernel sums (GSU<n>R, GSU<n>A:
// epilogue/gt_reduce_kernel.h).
//
// SwapAB (M up to 8, a row vector or a few rows times a long matrix): the same mainloops run
// on D^T = B^T A^T through layout/gt_gemv_view.h, so their rows are D's columns; each total
// (r, c) goes to D's (c, r), and split partials to the workspace in D's own order, which the
// reduction kernel reads unchanged.
#pragma once

// The matrix-core GEMV mainloop exists on NVIDIA only (mainloop/gt_gemv_mma.h); elsewhere the
// name stands for nothing, and the space never picks it.
template <class Cfg> struct GtGemvMma;

template <class Cfg> struct GtGemvRows {
    // The configuration the mainloop computes with: this one, or its transpose (SwapAB).
    typedef GtGemvView<Cfg, Cfg::SWAP_AB> Rows;
    typedef typename Rows::Sides Sides;
    // FMA dot products (MI 1x1x1) or the matrix cores (MI 16x8x16).
    typedef typename GtPick<Cfg::USE_MMA, GtGemvMma<Rows>, GtGemv<Rows>>::type Mainloop;

    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* lds, int tid) {
        static_assert(!Cfg::STREAM_K && !Cfg::GSU_SINGLE_KERNEL && !Cfg::PERSISTENT,
                      "the GEMV path splits K with a reduction kernel or atomics only");
        int split, batch;
        if (!gt_split_and_batch<Cfg::GSU, !Cfg::REDUCTION_KERNEL>(args, split, batch)) return;
        // The reduction kernel may start early; it waits for this grid before it reads.
        if constexpr (Cfg::REDUCTION_KERNEL) gt_allow_dependents();
        // Many short batches (GtGemv::wave_batches): `batch` numbers a group of WG0 batches,
        // one a wave, each computed whole by its wave alone.
        bool alone = false;
        if constexpr (!Cfg::USE_MMA) alone = Mainloop::wave_batches(args);
        if (alone) {
            batch = batch * Cfg::WG0 + tid / Cfg::WAVE;
            if (batch >= args.batch) return;
        }
        const gt_i64 m0 = (gt_i64)blockIdx.x * Cfg::MT0;
        constexpr int G = Mainloop::K_GRAIN;
        const gt_i64 grains = (args.k + G - 1) / G;
        const gt_i64 per_split = (grains + Cfg::GSU - 1) / Cfg::GSU * G;
        const gt_i64 k0 = split * per_split;
        const gt_i64 k1 = k0 + per_split < args.k ? k0 + per_split : args.k;
        float acc[Mainloop::ACC];
#pragma unroll
        for (int i = 0; i < Mainloop::ACC; ++i) acc[i] = 0.0f;
        if (k0 < k1) Mainloop::accumulate(args, m0, batch, k0, k1, tid, alone, acc);
        gt_plant_wrong_result(acc);
        Mainloop::for_each_total(args, m0, reinterpret_cast<float*>(lds), tid, alone, acc, [&](int m, int n, float x) {
            if constexpr (Cfg::SWAP_AB)
                gt_store_total<Cfg>(args, batch, split, n, m0 + m, x);
            else
                gt_store_total<Cfg>(args, batch, split, m0 + m, n, x);
        });
    }
};
