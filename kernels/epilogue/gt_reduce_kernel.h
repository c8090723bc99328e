// epilogue/gt_reduce_kernel.h: the body of the split-K reduction kernel (<name>_epilogue,
// GSU<n>R and GSU<n>A). It sums the split partials of D's columns (atomic: one pre-summed
// slice; reduce: GSU slices in split order, so the result is deterministic), then applies
// alpha/beta and converts to D's type. On sm_90 the host launches it as a programmatic
// dependent of the main kernel, so its launch overlaps the main kernel's last workgroups; it
// waits for the partials first thing. A block is blockDim.x runs of EPI_VEC consecutive rows by
// blockDim.y columns (the host shapes it so that short columns still fill its 256 threads);
// the grid is (M in runs of blockDim.x * EPI_VEC, columns in groups of blockDim.y, batch), and
// column groups beyond gridDim.y loop. Each thread reads one 16-byte vector per slice where M
// keeps the slices 16-byte aligned, eight slices' loads in flight before it adds them.
#pragma once

constexpr int GT_EPI_THREADS = 256, GT_EPI_VEC = 4;

template <class Cfg> GT_DEVICE void gt_reduce_splits(const GtGemmArgs& args) {
    constexpr int EPI_VEC = GT_EPI_VEC, SLICES = Cfg::GSU_ATOMIC ? 1 : Cfg::GSU;
    constexpr int BATCH = SLICES < 8 ? SLICES : 8;
    gt_wait_for_primary();
    const gt_i64 M = args.m, N = args.n;
    const gt_i64 total = M * N * args.batch;
    const gt_i64 m = ((gt_i64)blockIdx.x * blockDim.x + threadIdx.x) * EPI_VEC;
    if (m >= M) return;
    const int count = M - m < EPI_VEC ? int(M - m) : EPI_VEC;
    // Slices start at multiples of `total` floats and columns at multiples of M.
    const bool vec = count == EPI_VEC && M % EPI_VEC == 0;
    const gt_i64 b = blockIdx.z;
    for (gt_i64 n = (gt_i64)blockIdx.y * blockDim.y + threadIdx.y; n < N; n += (gt_i64)gridDim.y * blockDim.y) {
        const float* col = args.workspace + (b * N + n) * M + m;
        float s[EPI_VEC];
#pragma unroll
        for (int e = 0; e < EPI_VEC; ++e) s[e] = 0.0f;
        // Eight slices' loads are issued before any is added: one at a time, a thread would
        // wait out a full memory latency per slice.
#pragma unroll
        for (int sp0 = 0; sp0 < SLICES; sp0 += BATCH) {
            float v[BATCH][EPI_VEC];
#pragma unroll
            for (int j = 0; j < BATCH; ++j) {
                const float* src = col + (sp0 + j) * total;
                if (sp0 + j >= SLICES) {
#pragma unroll
                    for (int e = 0; e < EPI_VEC; ++e) v[j][e] = 0.0f;
                } else if (vec) {
                    const float4 x = *reinterpret_cast<const float4*>(src);
                    v[j][0] = x.x;
                    v[j][1] = x.y;
                    v[j][2] = x.z;
                    v[j][3] = x.w;
                } else {
#pragma unroll
                    for (int e = 0; e < EPI_VEC; ++e) v[j][e] = e < count ? src[e] : 0.0f;
                }
            }
#pragma unroll
            for (int j = 0; j < BATCH; ++j)
#pragma unroll
                for (int e = 0; e < EPI_VEC; ++e) s[e] += v[j][e];
        }
        gt_write_d<Cfg>(args, s, b, n, m, count);
    }
}
