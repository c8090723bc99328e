// mainloop/gt_gemv.h: the GEMV mainloop (Gemv = 1), for N of 1 to 8: decode projections and
// small batches, where a matrix-core tile would be mostly padding and the time is all in
// streaming A once. Each output is a dot product of a row of op(A) with a column of B; A is
// read straight from global memory in GlobalReadVectorWidth-element vectors (no LDS round
// trip), PrefetchGlobalRead vectors per row in flight, f32 accumulators. Two shapes, by A's
// layout:
//   K-contiguous A (transA = T): each wave owns R = MT0 / WG0 rows; its lanes take
//     consecutive vectors along K and their partial sums are added across the wave at the
//     end (butterfly shuffles), so every lane holds every total. Where the workgroup's rows
//     run past M (a dot product, a GEMV of a few rows), the waves left without rows join
//     those with rows along K and their totals meet in LDS: one row of eight waves streams
//     eight times what one wave does;
//   M-contiguous A (transA = N): each lane owns R vectors of GRVW rows (MT0 = R * wave *
//     GRVW); the waves of a workgroup take interleaved runs of PrefetchGlobalRead k's, and
//     their partial sums are added through LDS at the end.
// B (K x N, tiny next to A) is read through the caches: K-contiguous columns (transB = N) as
// vectors, N-contiguous rows as one or two vectors where every row starts aligned, else
// element by element. Columns MT1 > N read as zero.
#pragma once

// Adds the partial sums of the WAVES waves of a workgroup that split K between them, through
// LDS: wave w's sum i of lane l at [w][i][l] (conflict-free stores, and the reads below walk
// consecutive words); then each thread takes whole totals j = tid, tid + WAVES * WAVE, ... and
// calls put(i, l, total) for sum i of lane l. Every thread of the workgroup calls it.
template <int WAVES, int WAVE, int ACC, class Put>
GT_DEVICE void gt_sum_across_waves(float* lds, int tid, const float (&acc)[ACC], Put put) {
    const int wave = tid / WAVE, lane = tid % WAVE;
#pragma unroll
    for (int i = 0; i < ACC; ++i) lds[(wave * ACC + i) * WAVE + lane] = acc[i];
    gt_barrier();
    for (int j = tid; j < ACC * WAVE; j += WAVES * WAVE) {
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < WAVES; ++w) s += lds[w * ACC * WAVE + j];
        put(j / WAVE, j % WAVE, s);
    }
}

template <class Cfg> struct GtGemv {
    // The operands as this kernel streams them (layout/gt_gemv_view.h: A and B exchanged
    // along N).
    typedef typename Cfg::Sides S;
    typedef typename Cfg::TA TA;
    typedef typename Cfg::TB TB;
    static constexpr int V = Cfg::GRVW, U = Cfg::STAGES, NC = Cfg::MT1;
    static constexpr int WAVE = Cfg::WAVE, WAVES = Cfg::WG0;
    static constexpr bool K_ROWS = Cfg::TRANS_A;
    static constexpr int R = K_ROWS ? Cfg::MT0 / WAVES : Cfg::MT0 / (WAVE * V);
    static constexpr int AB = V * int(sizeof(TA)), BB = V * int(sizeof(TB));
    typedef typename GtVec<AB>::type VecA;
    // (Only K-contiguous B columns are read as vectors, which the space keeps within 16 bytes.)
    typedef typename GtVec<(BB < 16 ? BB : 16)>::type VecB;
    // One column of an N-contiguous B (transB = T) whose rows lie one element apart (ldb = 1:
    // a packed row vector, the single row of D along N) is a K-contiguous run: read in vectors
    // as a K-contiguous column is (GEMV_B_VECTORS 1, which codegen sets from the problem).
    static constexpr bool B_RUN = Cfg::TRANS_B && Cfg::GEMV_B_VECTORS == 1;
    // An N-contiguous B with its MT1 columns side by side in each row (NB bytes): a row is
    // read as vectors where every row starts aligned (GEMV_B_VECTORS 2: ldb a multiple of
    // MT1, so a row of ldb >= N elements holds all MT1), the columns past N zeroed. A row of
    // eight f32 columns is two 16-byte vectors: element by element, 8x4096x4096 NN f32 ran
    // 47.0 us [45.0, cuBLASLt] where TN ran 35.0 (H200).
    static constexpr int NB = NC * int(sizeof(TB));
    static constexpr bool B_ROWS = Cfg::TRANS_B && Cfg::GEMV_B_VECTORS == 2;
    static constexpr int ROW_VECS = NB > 16 ? NB / 16 : 1;
    typedef typename GtVec<(B_ROWS ? NB / ROW_VECS : 1)>::type VecRow;
    static_assert(!B_RUN || (NC == 1 && BB <= 16), "a K-contiguous run of B is one column of vectors up to 16 bytes");
    static_assert(!B_ROWS || (NC >= 2 && NB <= 32), "rows of B are vectors of 2 to 8 columns, up to 32 bytes");
    // Sums per thread: rows x columns (x the GRVW rows of a vector when A is M-contiguous).
    static constexpr int ACC = K_ROWS ? R * NC : R * V * NC;
    // K elements one split's range is a multiple of: whole wave-wide vector runs, or runs of
    // PrefetchGlobalRead k's.
    static constexpr int K_GRAIN = K_ROWS ? WAVE * V : U;
    static_assert(Cfg::WG1 == 1 && !Cfg::USE_MMA && !Cfg::WGMMA, "the GEMV path has one column of waves and no matrix atom");
    static_assert(NC >= 1 && NC <= 8 && (NC & (NC - 1)) == 0, "GEMV columns MT1 are 1, 2, 4 or 8");
    static_assert(AB <= 16 && (AB & (AB - 1)) == 0, "A vectors are a power of two up to 16 bytes");
    static_assert(R >= 1 && (K_ROWS ? Cfg::MT0 % WAVES == 0 : Cfg::MT0 % (WAVE * V) == 0),
                  "rows must split evenly: MT0 = WG0 * rows per wave (K-contiguous A) or a multiple of wave * GRVW");
    static_assert(U >= 1 && U <= (K_ROWS ? 4 : 8),
                  "PrefetchGlobalRead (vectors in flight per row) is 1..4, k's of a run 1..8");

    // B(k, n) as f32; 0 past N.
    GT_DEVICE static float b_at(const TB* b, const GtGemmArgs& args, gt_i64 k, int n) {
        if (n >= S::n(args)) return 0.0f;
        return gt_to_f32(Cfg::TRANS_B ? b[k * S::ldb(args) + n] : b[k + n * S::ldb(args)]);
    }

    // Row k of an N-contiguous B (B_ROWS): its MT1 columns from ROW_VECS vectors, 0 past N.
    GT_DEVICE static void b_row(const TB* b, const GtGemmArgs& args, gt_i64 k, float (&x)[NC]) {
        constexpr int PER = NC / ROW_VECS;
        const VecRow* const row = reinterpret_cast<const VecRow*>(b + k * S::ldb(args));
#pragma unroll
        for (int v = 0; v < ROW_VECS; ++v) {
            float part[PER];
            const VecRow loaded = gt_load_vec<VecRow>(row + v);
            gt_unpack<TB>(loaded, part);
#pragma unroll
            for (int n = 0; n < PER; ++n) x[v * PER + n] = part[n];
        }
#pragma unroll
        for (int n = 0; n < NC; ++n)
            if (n >= S::n(args)) x[n] = 0.0f;
    }

    // Adds this thread's share of rows [m0, m0 + MT0) x K range [k0, k1) of batch `batch`.
    GT_DEVICE static void accumulate(const GtGemmArgs& args, gt_i64 m0, int batch, gt_i64 k0, gt_i64 k1, int tid,
                                     bool alone, float (&acc)[ACC]) {
        const TA* const a = reinterpret_cast<const TA*>(S::a(args)) + batch * S::stride_a(args);
        const TB* const b = reinterpret_cast<const TB*>(S::b(args)) + batch * S::stride_b(args);
        if constexpr (K_ROWS) {
            // (One call of rows_along_k for both: a second, for waves alone, made ptxas spill
            // 8 to 28 bytes at 48 to 64 registers, sm_90a.)
            const int groups = alone ? 1 : row_groups(args, m0), kw = alone ? 1 : WAVES / groups;
            const int wave = alone ? 0 : tid / WAVE;
            if (wave >= groups * kw) return;
            // The kw waves of a group take consecutive runs of K in whole wave-wide vector
            // runs (so every run's vectors stay aligned); the loop stays the one-wave loop
            // (interleaving the waves' vectors instead made ptxas spill 4 to 32 bytes at 40 to
            // 128 registers, sm_90a).
            gt_i64 lo = k0, hi = k1;
            if (kw > 1) {
                constexpr int STEP = WAVE * V;
                const int runs = int((k1 - k0 + STEP - 1) / STEP), per = (runs + kw - 1) / kw;
                lo = k0 + (gt_i64)(wave % kw) * per * STEP;
                hi = lo + (gt_i64)per * STEP < k1 ? lo + (gt_i64)per * STEP : k1;
            }
            if (lo < hi) rows_along_k(args, a, b, m0 + (wave / kw) * R, lo, hi, tid % WAVE, acc);
        } else
            rows_along_m(args, a, b, m0, k0, k1, tid / WAVE, tid % WAVE, acc);
    }

    // Many short batches of at most R rows each (K of at most four wave-wide vector runs, no
    // split): each wave computes one batch whole, WAVES batches a workgroup. Launching a
    // workgroup a batch, 2x2x2 x65536 spent about 1.8 ns a workgroup (116.7 us; cuBLASLt
    // 52.9, H200). codegen's launch plan applies the same test (constraints::gemv_wave_batches).
    // A wave so alone computes rows [m0, m0 + R) of its batch over [k0, k1) and stores its
    // totals itself (`alone` in accumulate and for_each_total).
    GT_DEVICE static bool wave_batches(const GtGemmArgs& args) {
        return K_ROWS && Cfg::GSU == 1 && args.batch > 1 && S::m(args) <= R && args.k <= 4 * WAVE * V;
    }

    // K-contiguous A: the waves of a workgroup that hold rows, R each, in groups (rows past M
    // need none); the kw = WAVES / groups waves of a group share its K range (1 where every
    // wave holds rows). Uniform across the workgroup: it decides whether totals meet in LDS.
    GT_DEVICE static int row_groups(const GtGemmArgs& args, gt_i64 m0) {
        const gt_i64 rows = S::m(args) - m0;
        return rows >= Cfg::MT0 ? WAVES : int((rows + R - 1) / R);
    }

    // K-contiguous A: rows [m0, m0 + R) of this wave over K range [k0, k1), lanes along K.
    GT_DEVICE static void rows_along_k(const GtGemmArgs& args, const TA* a, const TB* b, gt_i64 m0, gt_i64 k0,
                                       gt_i64 k1, int lane, float (&acc)[ACC]) {
        // Rows past M read the last row (in bounds, from L1 once the wave has read it for its
        // own row); their sums are never stored. Skipping those loads put a branch around
        // each and ptxas stopped batching them: 16x1x524288 f32 36.4 us against 27.4 (H200). Row r
        // is recomputed where it is read: an array of R row pointers made ptxas spill 8 bytes
        // at 72 registers (2048x2x2048 f32 on 32-row workgroups of four waves, sm_90a).
        const gt_i64 last = S::m(args) - 1 - m0, lda = S::lda(args);
        const TA* const base = a + m0 * lda;
        auto row = [&](int r) { return base + (r <= last ? r : last) * lda; };
        constexpr int STEP = WAVE * V;
        gt_i64 k = k0 + lane * V;
        for (; k + (U - 1) * STEP + V <= k1; k += U * STEP) {
            VecA av[U][R];
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int r = 0; r < R; ++r) av[u][r] = gt_load_once<AB>(row(r) + k + u * STEP);
#pragma unroll
            for (int u = 0; u < U; ++u) fma_k_vector(args, b, k + u * STEP, av[u], acc);
        }
        for (; k + V <= k1; k += STEP) {
            VecA av[1][R];
#pragma unroll
            for (int r = 0; r < R; ++r) av[0][r] = gt_load_once<AB>(row(r) + k);
            fma_k_vector(args, b, k, av[0], acc);
        }
        // Fewer than V elements left: one per lane.
        for (gt_i64 kk = k0 + (k1 - k0) / V * V + lane; kk < k1; kk += WAVE) {
            float bx[NC];
#pragma unroll
            for (int n = 0; n < NC; ++n) bx[n] = b_at(b, args, kk, n);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const float x = gt_to_f32(row(r)[kk]);
#pragma unroll
                for (int n = 0; n < NC; ++n) acc[r * NC + n] = fmaf(x, bx[n], acc[r * NC + n]);
            }
        }
        // Every lane ends with the wave's totals.
#pragma unroll
        for (int i = 0; i < ACC; ++i)
#pragma unroll
            for (int s = WAVE / 2; s > 0; s >>= 1) acc[i] += gt_shfl_xor(acc[i], s);
    }

    // The V k's from k on, of R rows (one vector each) against every column of B.
    GT_DEVICE static void fma_k_vector(const GtGemmArgs& args, const TB* b, gt_i64 k, const VecA (&av)[R],
                                       float (&acc)[ACC]) {
        if constexpr (B_ROWS) {
            float bt[V][NC];
#pragma unroll
            for (int e = 0; e < V; ++e) b_row(b, args, k + e, bt[e]);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                float ax[V];
                gt_unpack<TA>(av[r], ax);
#pragma unroll
                for (int n = 0; n < NC; ++n)
#pragma unroll
                    for (int e = 0; e < V; ++e) acc[r * NC + n] = fmaf(ax[e], bt[e][n], acc[r * NC + n]);
            }
        } else {
#pragma unroll
            for (int n = 0; n < NC; ++n) {
                float bx[V];
                if constexpr (!Cfg::TRANS_B) {
                    if (n < S::n(args)) {
                        const VecB loaded = gt_load_vec<VecB>(b + k + n * S::ldb(args));
                        gt_unpack<TB>(loaded, bx);
                    } else {
#pragma unroll
                        for (int e = 0; e < V; ++e) bx[e] = 0.0f;
                    }
                } else if constexpr (B_RUN) {
                    const VecB loaded = gt_load_vec<VecB>(b + k);
                    gt_unpack<TB>(loaded, bx);
                } else {
#pragma unroll
                    for (int e = 0; e < V; ++e) bx[e] = b_at(b, args, k + e, n);
                }
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    float ax[V];
                    gt_unpack<TA>(av[r], ax);
#pragma unroll
                    for (int e = 0; e < V; ++e) acc[r * NC + n] = fmaf(ax[e], bx[e], acc[r * NC + n]);
                }
            }
        }
    }

    // M-contiguous A: this lane's R vectors of rows, k's [k0, k1) in runs of U taken by the
    // waves in turn.
    GT_DEVICE static void rows_along_m(const GtGemmArgs& args, const TA* a, const TB* b, gt_i64 m0, gt_i64 k0,
                                       gt_i64 k1, int wave, int lane, float (&acc)[ACC]) {
        for (gt_i64 kb = k0 + wave * U; kb < k1; kb += WAVES * U) {
            VecA av[U][R];
            float bx[U][NC];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const gt_i64 k = kb + u;
                const bool in_k = k < k1;
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    const gt_i64 m = m0 + (r * WAVE + lane) * V;
                    const TA* src = a + (in_k ? k : k0) * S::lda(args) + m;
                    if (in_k && m + V <= S::m(args)) {
                        av[u][r] = gt_load_once<AB>(src);
                    } else {
                        // The matrix's edge: element by element, zeros outside.
                        av[u][r] = gt_vec_zero<AB>();
                        TA* e = reinterpret_cast<TA*>(&av[u][r]);
#pragma unroll
                        for (int i = 0; i < V; ++i)
                            if (in_k && m + i < S::m(args)) e[i] = src[i];
                    }
                }
                if constexpr (B_ROWS) {
                    // (Past k1 row k0 is read, in bounds, and its values dropped.)
                    b_row(b, args, in_k ? k : k0, bx[u]);
#pragma unroll
                    for (int n = 0; n < NC; ++n)
                        if (!in_k) bx[u][n] = 0.0f;
                } else {
#pragma unroll
                    for (int n = 0; n < NC; ++n) bx[u][n] = in_k ? b_at(b, args, k, n) : 0.0f;
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    float ax[V];
                    gt_unpack<TA>(av[u][r], ax);
#pragma unroll
                    for (int e = 0; e < V; ++e)
#pragma unroll
                        for (int n = 0; n < NC; ++n)
                            acc[(r * V + e) * NC + n] = fmaf(ax[e], bx[u][n], acc[(r * V + e) * NC + n]);
                }
        }
    }

    // Calls put(m, n, x) for the totals this thread stores (m relative to the workgroup's first
    // row m0), after adding the waves' partial sums where they split K. Every thread calls it.
    template <class Put>
    GT_DEVICE static void for_each_total(const GtGemmArgs& args, gt_i64 m0, float* lds, int tid, bool alone,
                                         float (&acc)[ACC], Put put) {
        const int lane = tid % WAVE, wave = alone ? 0 : tid / WAVE;
        if constexpr (K_ROWS) {
            const int groups = alone ? 1 : row_groups(args, m0), kw = alone ? 1 : WAVES / groups;
            if (kw == 1) {
                // Each lane stores every WAVE-th total of its wave.
#pragma unroll
                for (int i = 0; i < ACC; ++i)
                    if (i % WAVE == lane) put(wave * R + i / NC, i % NC, acc[i]);
                return;
            }
            // The kw waves of a group add their totals through LDS: wave w's total i at
            // [w][i], then each thread adds the group's kw for whole totals.
            if (wave < groups * kw) {
#pragma unroll
                for (int i = 0; i < ACC; ++i)
                    if (i % WAVE == lane) lds[wave * ACC + i] = acc[i];
            }
            gt_barrier();
            for (int j = tid; j < groups * ACC; j += WAVES * WAVE) {
                const int g = j / ACC, i = j % ACC;
                float s = 0.0f;
                for (int w = 0; w < kw; ++w) s += lds[(g * kw + w) * ACC + i];
                put(g * R + i / NC, i % NC, s);
            }
        } else if constexpr (WAVES == 1) {
#pragma unroll
            for (int r = 0; r < R; ++r)
#pragma unroll
                for (int e = 0; e < V; ++e)
#pragma unroll
                    for (int n = 0; n < NC; ++n) put((r * WAVE + lane) * V + e, n, acc[(r * V + e) * NC + n]);
        } else {
            gt_sum_across_waves<WAVES, WAVE>(lds, tid, acc, [&](int i, int l, float s) {
                const int r = i / (V * NC), e = (i / NC) % V, n = i % NC;
                put((r * WAVE + l) * V + e, n, s);
            });
        }
    }
};
