// mainloop/gt_flat_batch.h: the flat batch path's multiply (FlatBatch = 1). A group of WavesN
// waves computes one small batch whole, op(A) op(B) of at most MacroTile0 x MacroTile1 outputs
// over all of K, from the flat f32 LDS images of its two operands (loader/gt_flat_copy.h),
// with fused multiply-adds. The group's lanes form an LM x LN grid (LM the power of two that
// makes each lane's FM x FN sub-tile squarest, as on the FMA path: gt_lanes_m); lane (lm, ln)
// owns rows lm, lm + LM, ... and columns ln, ln + LN, ..., so neighbouring lanes read
// neighbouring elements of an M-contiguous A, and elements a leading dimension apart of a
// K-contiguous one (the odd leading dimensions this path is for spread those over the LDS
// banks). Each k reads FM values of A and FN of B for FM x FN multiply-adds. Rows and columns
// past the batch read its last one and are never stored. (16-bit batches whose multiply-adds
// outweigh their copies run on matrix cores instead: mainloop/gt_flat_batch_mma.h.)
#pragma once

template <class Cfg> struct GtFlatBatch {
    static constexpr int MT0 = Cfg::MT0, MT1 = Cfg::MT1;
    // The lanes of one batch: a group of WavesN waves.
    static constexpr int LANES = Cfg::WG1 * Cfg::WAVE;
    static constexpr int LM = gt_lanes_m(MT0, MT1, LANES);
    static_assert(LM > 0, "the batch tile must give every lane of its group a whole sub-tile");
    static constexpr int LN = LANES / LM, FM = MT0 / LM, FN = MT1 / LN, ACC = FM * FN;
    typedef typename Cfg::TA TA;
    typedef typename Cfg::TB TB;

    // A is stored M x K (transA = N) or K x M, B K x N (transB = N) or N x K: elements from an
    // operand's first to its last, along its leading dimension `cols - 1` times and `rows`
    // more (rows: the contiguous side as stored).
    GT_DEVICE static gt_i64 extent(gt_i64 rows, gt_i64 cols, gt_i64 ld) { return (cols - 1) * ld + rows; }
    GT_DEVICE static gt_i64 extent_a(const GtGemmArgs& args) {
        return Cfg::TRANS_A ? extent(args.k, args.m, args.lda) : extent(args.m, args.k, args.lda);
    }
    GT_DEVICE static gt_i64 extent_b(const GtGemmArgs& args) {
        return Cfg::TRANS_B ? extent(args.n, args.k, args.ldb) : extent(args.k, args.n, args.ldb);
    }
    // LDS bytes of one group's images (constraints::flat_batch_lds_bytes on the host).
    GT_DEVICE static int group_bytes(const GtGemmArgs& args) {
        return gt_flat_image_bytes<TA>(extent_a(args)) + gt_flat_image_bytes<TB>(extent_b(args));
    }

    // The images of a batch, and where each operand's first element lies in them.
    struct Operands {
        const float* a;
        int ha;
        const float* b;
        int hb;
    };
    // Copies the batch's operands (`a`, `b`: its first elements) into the group's LDS at `mine`.
    GT_DEVICE static Operands copy(const GtGemmArgs& args, const TA* a, const TB* b, unsigned char* mine, int lane) {
        float* const image_a = reinterpret_cast<float*>(mine);
        float* const image_b = reinterpret_cast<float*>(mine + gt_flat_image_bytes<TA>(extent_a(args)));
        const int ha = gt_copy_flat(a, extent_a(args), image_a, lane, LANES);
        const int hb = gt_copy_flat(b, extent_b(args), image_b, lane, LANES);
        return Operands{image_a, ha, image_b, hb};
    }

    // Adds the batch's products into this lane's sub-tile (accumulator i * FN + j: row
    // lm + i * LM, column ln + j * LN).
    GT_DEVICE static void accumulate(const GtGemmArgs& args, const Operands& o, int lane, float (&acc)[ACC]) {
        const float* const a = o.a;
        const float* const b = o.b;
        const int ha = o.ha, hb = o.hb;
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

    // The lane's outputs as a grid (epilogue/gt_flat_store.h): its FM rows by FN columns, the
    // lanes of one column of the lane grid on LM neighbouring rows.
    static constexpr int ROWS = FM, COLS = FN;
    GT_DEVICE static int row(int lane, int i) { return lane % LM + i * LM; }
    GT_DEVICE static int col(int lane, int j) { return lane / LM + j * LN; }
    GT_DEVICE static constexpr int index(int i, int j) { return i * FN + j; }
};
