// scheduler/gt_flat_batches.h: the flat batch path's schedule (FlatBatch = 1), for many small
// batched GEMMs: workgroup x takes batches [x * WavesM, (x + 1) * WavesM), one a group of
// WavesN waves. Each group copies its batch's A and B into LDS as the flat ranges they occupy,
// in f32 (loader/gt_flat_copy.h: [A image][B image] a group, the groups side by side), waits for
// its own copies only (a wave alone on its batch does not wait for the others), multiplies
// (mainloop/gt_flat_batch.h) and stores every total to D with alpha and beta, one element a
// lane, neighbouring lanes on neighbouring rows. No split, no tiles: the batch is one tile.
#pragma once

template <class Cfg> struct GtFlatBatches {
    typedef GtFlatBatch<Cfg> Mainloop;
    typedef typename Cfg::TA TA;
    typedef typename Cfg::TB TB;
    static_assert(Cfg::GSU == 1 && !Cfg::STREAM_K && !Cfg::PERSISTENT && !Cfg::USE_MMA,
                  "the flat batch path computes each batch whole, with FMAs");

    // Elements from an operand's first to its last: along its leading dimension `cols - 1`
    // times, and `rows` more (rows: the contiguous side as stored).
    GT_DEVICE static gt_i64 extent(gt_i64 rows, gt_i64 cols, gt_i64 ld) { return (cols - 1) * ld + rows; }

    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* lds, int tid) {
        const int group = tid / Mainloop::LANES, lane = tid % Mainloop::LANES;
        const gt_i64 batch = (gt_i64)blockIdx.x * Cfg::WG0 + group;
        // A is stored M x K (transA = N) or K x M, B K x N (transB = N) or N x K.
        const gt_i64 ext_a = Cfg::TRANS_A ? extent(args.k, args.m, args.lda) : extent(args.m, args.k, args.lda);
        const gt_i64 ext_b = Cfg::TRANS_B ? extent(args.n, args.k, args.ldb) : extent(args.k, args.n, args.ldb);
        const int bytes_a = gt_flat_image_bytes<TA>(ext_a);
        unsigned char* const mine = lds + group * (bytes_a + gt_flat_image_bytes<TB>(ext_b));
        float* const image_a = reinterpret_cast<float*>(mine);
        float* const image_b = reinterpret_cast<float*>(mine + bytes_a);
        const bool live = batch < args.batch;
        int ha = 0, hb = 0;
        if (live) {
            const TA* a = reinterpret_cast<const TA*>(args.a) + batch * args.stride_a;
            const TB* b = reinterpret_cast<const TB*>(args.b) + batch * args.stride_b;
            ha = gt_copy_flat(a, ext_a, image_a, lane, Mainloop::LANES);
            hb = gt_copy_flat(b, ext_b, image_b, lane, Mainloop::LANES);
        }
        // Every wave reaches the barrier before a group past the last batch leaves.
        if constexpr (Cfg::WG1 == 1)
            gt_wave_sync();
        else
            gt_barrier();
        if (!live) return;
        float acc[Mainloop::ACC];
#pragma unroll
        for (int i = 0; i < Mainloop::ACC; ++i) acc[i] = 0.0f;
        Mainloop::accumulate(args, image_a, ha, image_b, hb, lane, acc);
        gt_plant_wrong_result(acc);
        // Column by column, each column's place in D (and C) formed once, D = alpha * total
        // (+ beta * C) a row at a time; the lanes of one column of the lane grid write LM
        // neighbouring rows. (Through gt_store_total each total formed its place anew in 64-bit
        // arithmetic and tested it against M and N: 15 stores of a 24x20 tile took 390
        // instructions, sm_90a.)
        typedef typename Cfg::TD TD;
        typedef typename Cfg::TC TC;
        TD* const d = reinterpret_cast<TD*>(args.d) + batch * args.stride_d;
        const TC* const c = reinterpret_cast<const TC*>(args.c) + batch * args.stride_c;
        const int m = int(args.m), n = int(args.n);
        const int lm = lane % Mainloop::LM, ln = lane / Mainloop::LM;
#pragma unroll
        for (int j = 0; j < Mainloop::FN; ++j) {
            const int col = ln + j * Mainloop::LN;
            if (col >= n) continue;
            TD* const dc = d + col * args.ldd;
            const TC* const cc = c + col * args.ldc;
#pragma unroll
            for (int i = 0; i < Mainloop::FM; ++i) {
                const int row = lm + i * Mainloop::LM;
                if (row >= m) continue;
                float y = args.alpha * acc[i * Mainloop::FN + j];
                if constexpr (!Cfg::BETA_ZERO) y += args.beta * gt_to_f32(cc[row]);
                dc[row] = gt_from_f32<TD>(y);
            }
        }
    }
};
