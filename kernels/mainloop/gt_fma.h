// mainloop/gt_fma.h: the per-wave compute of one LDS stage with f32 fused multiply-adds, for
// element types without matrix instructions (MI 1x1x1). The wave tile is split over a LM x LN
// grid of lanes, each owning an FM x FN sub-tile of rows lm + i*LM and columns ln + j*LN
// (strided, so neighbouring lanes read neighbouring LDS words). LM is the power of two that
// makes the sub-tile squarest.
#pragma once

template <class Cfg, class ViewA, class ViewB> struct GtFma {
    static constexpr int WT0 = Cfg::WT0, WT1 = Cfg::WT1, WAVE = Cfg::WAVE;
    __host__ __device__ static constexpr int lanes_m() {
        int best = 0, best_score = 1 << 30;
        for (int lm = 1; lm <= WAVE; lm *= 2) {
            const int ln = WAVE / lm;
            if (WT0 % lm != 0 || WT1 % ln != 0) continue;
            const int score = gt_abs(WT0 / lm - WT1 / ln);
            if (score < best_score) {
                best = lm;
                best_score = score;
            }
        }
        return best;
    }
    static constexpr int LM = lanes_m();
    static_assert(LM > 0, "FMA wave tile must give every lane a whole sub-tile");
    static constexpr int LN = WAVE / LM, FM = WT0 / LM, FN = WT1 / LN;
    static constexpr int ACC = FM * FN;

    GT_DEVICE static void compute_stage(float (&acc)[ACC], const ViewA& va, const ViewB& vb, int wm0, int wn0,
                                        int lane) {
        const int lm = lane % LM, ln = lane / LM;
#pragma unroll 4
        for (int k = 0; k < Cfg::DU; ++k) {
            float a[FM], b[FN];
#pragma unroll
            for (int i = 0; i < FM; ++i) a[i] = gt_to_f32(va.at(wm0 + lm + i * LM, k));
#pragma unroll
            for (int j = 0; j < FN; ++j) b[j] = gt_to_f32(vb.at(wn0 + ln + j * LN, k));
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j) acc[i * FN + j] = fmaf(a[i], b[j], acc[i * FN + j]);
        }
    }

    GT_DEVICE static void acc_coord(int lane, int idx, int& m, int& n) {
        m = lane % LM + (idx / FN) * LM;
        n = lane / LM + (idx % FN) * LN;
    }
};
