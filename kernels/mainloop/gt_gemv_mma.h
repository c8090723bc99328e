// mainloop/gt_gemv_mma.h: the GEMV mainloop on the matrix cores (Gemv = 1 with MI 16x8x16:
// NVIDIA sm_80+, 16-bit A and B, both K-contiguous, i.e. transA = T, transB = N). N up to 8
// is padded to the instruction's 8 columns, which costs nothing: the time is all in
// streaming A, and the FMA path's 2 x N flops per element of A (plus its conversions) are
// what limits it from N = 4 on. A workgroup takes R = MT0 / 16 groups of 16 rows; its waves
// take turns along K in steps of 32 (step w, w + WG0, ...), PrefetchGlobalRead steps in
// flight, and add their partial sums through LDS at the end (gt_sum_across_waves, in
// mainloop/gt_gemv.h).
//
// Lane (g, t) = (lane / 4, lane % 4) loads 16 bytes of rows g and g + 8 and of column g of B
// at k = 8t .. 8t + 7 of the step, straight from global memory into fragment registers: a
// dot product does not care in which order it meets k, so those eight k fill the fragment
// slots 2t, 2t + 1, 2t + 8, 2t + 9 of two instructions, in the same order for A and B
// (atom/gt_mma_nvidia.h has the fragment maps).
#pragma once

template <class Cfg> struct GtGemvMma {
    // The operands as this kernel streams them (layout/gt_gemv_view.h).
    typedef typename Cfg::Sides S;
    typedef typename Cfg::TA TA;
    typedef typename Cfg::TB TB;
    typedef typename GtVec<16>::type Vec;
    static constexpr int WAVES = Cfg::WG0, R = Cfg::MT0 / 16, U = Cfg::STAGES;
    // K per step: four lanes of eight elements.
    static constexpr int STEP = 32;
    static constexpr int K_GRAIN = STEP;
    static constexpr int ACC = R * 4;
    static_assert(Cfg::USE_MMA && Cfg::MI_M == 16 && Cfg::MI_N == 8 && Cfg::MI_K == 16 && !GT_VENDOR_AMD,
                  "the matrix-core GEMV runs mma.sync m16n8k16");
    static_assert(sizeof(TA) == 2 && sizeof(TB) == 2 && Cfg::TRANS_A && !Cfg::TRANS_B,
                  "the matrix-core GEMV reads 16-bit A and B, both K-contiguous");
    static_assert(Cfg::MT0 % 16 == 0 && R >= 1 && R <= 4 && Cfg::MT1 == 8 && Cfg::GRVW == 8 && Cfg::WG1 == 1,
                  "MT0 is 16 to 64 rows, MT1 the instruction's 8 columns, GRVW 8 (16 bytes)");
    static_assert(U >= 1 && U <= 4, "PrefetchGlobalRead (steps in flight) is 1..4");

    // 8 elements of `p` from k on (A once, through the read-once path; B cached, every
    // workgroup reads it), zeros from k_end on.
    template <bool ONCE, class T> GT_DEVICE static Vec load8(const T* p, gt_i64 k, gt_i64 k_end) {
        if (k + 8 <= k_end) return ONCE ? gt_load_once<16>(p + k) : *reinterpret_cast<const Vec*>(p + k);
        Vec v = gt_vec_zero<16>();
        T* e = reinterpret_cast<T*>(&v);
#pragma unroll
        for (int i = 0; i < 8; ++i)
            if (k + i < k_end) e[i] = p[k + i];
        return v;
    }

    GT_DEVICE static void accumulate(const GtGemmArgs& args, gt_i64 m0, int batch, gt_i64 k0, gt_i64 k1, int tid,
                                     bool, float (&acc)[ACC]) {
        const int lane = tid % 32, wave = tid / 32, g = lane >> 2, t = lane & 3;
        const TA* const a = reinterpret_cast<const TA*>(S::a(args)) + batch * S::stride_a(args);
        const TA* row[R][2];
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                // Rows past M read the last row; their sums are never stored.
                const gt_i64 m = m0 + 16 * r + 8 * h + g;
                row[r][h] = a + (m < S::m(args) ? m : S::m(args) - 1) * S::lda(args);
            }
        // Columns past N read as zero.
        const bool column = g < S::n(args);
        const TB* const b = reinterpret_cast<const TB*>(S::b(args)) + batch * S::stride_b(args) + (column ? g : 0) * S::ldb(args);
        for (gt_i64 kb = k0 + (gt_i64)wave * STEP * U; kb < k1; kb += (gt_i64)WAVES * STEP * U) {
            Vec av[U][R][2], bv[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const gt_i64 k = kb + u * STEP + 8 * t;
#pragma unroll
                for (int r = 0; r < R; ++r)
#pragma unroll
                    for (int h = 0; h < 2; ++h) av[u][r][h] = load8<true>(row[r][h], k, k1);
                bv[u] = column ? load8<false>(b, k, k1) : gt_vec_zero<16>();
            }
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    float c[4] = {acc[4 * r], acc[4 * r + 1], acc[4 * r + 2], acc[4 * r + 3]};
                    const Vec &lo = av[u][r][0], &hi = av[u][r][1];
                    const gt_u32 a0[4] = {lo.x, hi.x, lo.y, hi.y}, b0[2] = {bv[u].x, bv[u].y};
                    const gt_u32 a1[4] = {lo.z, hi.z, lo.w, hi.w}, b1[2] = {bv[u].z, bv[u].w};
                    GtMmaPtx<TA>::run(c, a0, b0);
                    GtMmaPtx<TA>::run(c, a1, b1);
#pragma unroll
                    for (int i = 0; i < 4; ++i) acc[4 * r + i] = c[i];
                }
        }
    }

    // Row and column of accumulator i of group r for lane (g, t): c0, c1 are (g, 2t..2t+1),
    // c2, c3 (g + 8, 2t..2t+1).
    GT_DEVICE static int row_of(int r, int i, int lane) { return 16 * r + (lane >> 2) + (i >= 2 ? 8 : 0); }
    GT_DEVICE static int col_of(int i, int lane) { return 2 * (lane & 3) + (i & 1); }

    // Calls put(m, n, x) for the totals this thread stores, after adding the waves' partial
    // sums (its waves always split K, so rows past M change nothing). Every thread calls it.
    template <class Put>
    GT_DEVICE static void for_each_total(const GtGemmArgs&, gt_i64, float* lds, int tid, bool, float (&acc)[ACC],
                                         Put put) {
        const int lane = tid % 32;
        if constexpr (WAVES == 1) {
#pragma unroll
            for (int i = 0; i < ACC; ++i) put(row_of(i / 4, i % 4, lane), col_of(i % 4, lane), acc[i]);
        } else {
            gt_sum_across_waves<WAVES, 32>(lds, tid, acc, [&](int i, int l, float s) {
                put(row_of(i / 4, i % 4, l), col_of(i % 4, l), s);
            });
        }
    }
};
