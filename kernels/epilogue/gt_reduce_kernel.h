// epilogue/gt_reduce_kernel.h: the body of the split-K reduction kernel (<name>_epilogue,
// GSU<n>R and GSU<n>A). It sums the split partials of D's columns (atomic: one pre-summed
// slice; reduce: GSU slices in split order, so the result is deterministic), then applies
// alpha/beta and converts to D's type. On sm_90 the host launches it as a programmatic
// dependent of the main kernel, so its launch overlaps the main kernel's last workgroups; it
// waits for the partials first thing. The grid is (M in runs of EPI_THREADS * EPI_VEC, columns,
// batch); each thread takes EPI_VEC consecutive rows of one column, as one 16-byte load per
// slice where M keeps the slices 16-byte aligned. Columns beyond gridDim.y loop.
#pragma once

constexpr int GT_EPI_THREADS = 256, GT_EPI_VEC = 4;

template <class Cfg> GT_DEVICE void gt_reduce_splits(const GtGemmArgs& args) {
    constexpr int EPI_THREADS = GT_EPI_THREADS, EPI_VEC = GT_EPI_VEC;
    gt_wait_for_primary();
    const gt_i64 M = args.m, N = args.n;
    const gt_i64 total = M * N * args.batch;
    const gt_i64 m = ((gt_i64)blockIdx.x * EPI_THREADS + threadIdx.x) * EPI_VEC;
    if (m >= M) return;
    const int count = M - m < EPI_VEC ? int(M - m) : EPI_VEC;
    // Slices start at multiples of `total` floats and columns at multiples of M.
    const bool vec = count == EPI_VEC && M % EPI_VEC == 0;
    const gt_i64 b = blockIdx.z;
    for (gt_i64 n = blockIdx.y; n < N; n += gridDim.y) {
        const gt_i64 at = (b * N + n) * M + m;
        float s[EPI_VEC];
#pragma unroll
        for (int e = 0; e < EPI_VEC; ++e) s[e] = 0.0f;
#pragma unroll
        for (int sp = 0; sp < (Cfg::GSU_ATOMIC ? 1 : Cfg::GSU); ++sp) {
            const float* src = args.workspace + sp * total + at;
            if (vec) {
                const float4 v = *reinterpret_cast<const float4*>(src);
                s[0] += v.x;
                s[1] += v.y;
                s[2] += v.z;
                s[3] += v.w;
            } else {
#pragma unroll
                for (int e = 0; e < EPI_VEC; ++e)
                    if (e < count) s[e] += src[e];
            }
        }
        gt_write_d<Cfg>(args, s, b, n, m, count);
    }
}
