// mainloop/gt_flat_batch.h: the flat batch path's multiply (FlatBatch = 1). A group of WavesN
// waves computes one small batch whole, op(A) op(B) of at most MacroTile0 x MacroTile1 outputs
// over all of K, from the flat f32 LDS images of its two operands (loader/gt_flat_copy.h),
// with fused multiply-adds. The group's lanes form an LM x LN grid (LM the power of two that
// makes each lane's FM x FN sub-tile squarest, as on the FMA path: gt_lanes_m); lane (lm, ln)
// owns rows lm, lm + LM, ... and columns ln, ln + LN, ..., so neighbouring lanes read
// neighbouring elements of an M-contiguous A, and elements a leading dimension apart of a
// K-contiguous one (the odd leading dimensions this path is for spread those over the LDS
// banks). Each k reads FM values of A and FN of B for FM x FN multiply-adds. Rows and columns
// past the batch read its last one and are never stored.
#pragma once

template <class Cfg> struct GtFlatBatch {
    static constexpr int MT0 = Cfg::MT0, MT1 = Cfg::MT1;
    // The lanes of one batch: a group of WavesN waves.
    static constexpr int LANES = Cfg::WG1 * Cfg::WAVE;
    static constexpr int LM = gt_lanes_m(MT0, MT1, LANES);
    static_assert(LM > 0, "the batch tile must give every lane of its group a whole sub-tile");
    static constexpr int LN = LANES / LM, FM = MT0 / LM, FN = MT1 / LN, ACC = FM * FN;

    // Adds the batch's products into this lane's sub-tile (accumulator i * FN + j: row
    // lm + i * LM, column ln + j * LN): `a` and `b` are the images, `ha` and `hb` where each
    // operand's first element lies in them.
    GT_DEVICE static void accumulate(const GtGemmArgs& args, const float* a, int ha, const float* b, int hb,
                                     int lane, float (&acc)[ACC]) {
        const int m = int(args.m), n = int(args.n), k = int(args.k);
        const int lda = int(args.lda), ldb = int(args.ldb);
        const int lm = lane % LM, ln = lane / LM;
        // Each row's (column's) place at k = 0, and the step from one k to the next.
        int oa[FM], ob[FN];
#pragma unroll
        for (int i = 0; i < FM; ++i) {
            const int r = gt_min(lm + i * LM, m - 1);
            oa[i] = ha + (Cfg::TRANS_A ? r * lda : r);
        }
#pragma unroll
        for (int j = 0; j < FN; ++j) {
            const int c = gt_min(ln + j * LN, n - 1);
            ob[j] = hb + (Cfg::TRANS_B ? c : c * ldb);
        }
        const int step_a = Cfg::TRANS_A ? 1 : lda, step_b = Cfg::TRANS_B ? ldb : 1;
        int ka = 0, kb = 0;
#pragma unroll 4
        for (int kk = 0; kk < k; ++kk) {
            float x[FM], y[FN];
#pragma unroll
            for (int i = 0; i < FM; ++i) x[i] = a[oa[i] + ka];
#pragma unroll
            for (int j = 0; j < FN; ++j) y[j] = b[ob[j] + kb];
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j) acc[i * FN + j] = fmaf(x[i], y[j], acc[i * FN + j]);
            ka += step_a;
            kb += step_b;
        }
    }
};
