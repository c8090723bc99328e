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
//
// Few outputs over many slices (a dot product or a GEMV of a few rows split 128 ways): the
// host adds a third block dimension (blockDim.z) of threads that take every blockDim.z-th
// slice of the same outputs, and their sums meet by shuffles in a fixed order (deterministic).
// H200, 1x1x4194304 split 128 ways: one thread's 16 batches of loads took 22.4 us end to end
// where the split's atomics took 16.8.
#pragma once

constexpr int GT_EPI_THREADS = 256, GT_EPI_VEC = 4;

// Adds slices first, first + stride, ... below SLICES of the EPI_VEC rows at `col` (count of
// them in M; `vec`: one 16-byte load each) into s, BATCH slices' loads in flight before any
// is added: one at a time, a thread would wait out a full memory latency per slice.
template <int SLICES, int BATCH>
GT_DEVICE void gt_add_slices(const float* col, gt_i64 total, int first, int stride, bool vec, int count,
                             float (&s)[GT_EPI_VEC]) {
    constexpr int EPI_VEC = GT_EPI_VEC;
    // Past four batches the batches are not unrolled: ptxas hoisted every batch's loads of
    // 128 slices and spilled 212 bytes at 255 registers (sm_90a).
    constexpr int UNROLL = SLICES <= 4 * BATCH ? (SLICES + BATCH - 1) / BATCH : 1;
#pragma unroll UNROLL
    for (int sp0 = first; sp0 < SLICES; sp0 += BATCH * stride) {
        float v[BATCH][EPI_VEC];
#pragma unroll
        for (int j = 0; j < BATCH; ++j) {
            const int sp = sp0 + j * stride;
            const float* src = col + sp * total;
            if (sp >= SLICES) {
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
}

// The slices shared along blockDim.z (see the header); one pass covers every column. The
// threads sharing one output's slices are consecutive lanes of a wave (the block's linear
// thread index read as z fastest), so their sums meet by butterfly shuffles: no LDS, no
// barrier. (Static LDS for them kept the reduction's blocks off the units the main kernel's
// 229 KB tiles held, so they started only once those left: 256x256x65536 split 8 ways
// 29.7 -> 30.8 us, H200.)
template <class Cfg> GT_DEVICE void gt_reduce_splits_across(const GtGemmArgs& args) {
    constexpr int EPI_VEC = GT_EPI_VEC, SLICES = Cfg::GSU_ATOMIC ? 1 : Cfg::GSU;
    gt_wait_for_primary();
    const int sharing = blockDim.z;
    const int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    const int z = t % sharing, xy = t / sharing, x = xy % blockDim.x, y = xy / blockDim.x;
    const gt_i64 M = args.m, N = args.n, total = M * N * args.batch, b = blockIdx.z;
    const gt_i64 m = ((gt_i64)blockIdx.x * blockDim.x + x) * EPI_VEC;
    const gt_i64 n = (gt_i64)blockIdx.y * blockDim.y + y;
    const bool active = m < M && n < N;
    const int count = !active ? 0 : M - m < EPI_VEC ? int(M - m) : EPI_VEC;
    float s[EPI_VEC];
#pragma unroll
    for (int e = 0; e < EPI_VEC; ++e) s[e] = 0.0f;
    if (active)
        gt_add_slices<SLICES, 8>(args.workspace + (b * N + n) * M + m, total, z, sharing,
                                 count == EPI_VEC && M % EPI_VEC == 0, count, s);
    // Every lane takes part in the shuffles (sharing is a power of two up to 16, within a
    // wave); the group's first lane ends with the total, added in a fixed order.
    for (int d = 1; d < sharing; d <<= 1)
#pragma unroll
        for (int e = 0; e < EPI_VEC; ++e) s[e] += gt_shfl_xor(s[e], d);
    if (z == 0 && active) gt_write_d<Cfg>(args, s, b, n, m, count);
}

template <class Cfg> GT_DEVICE void gt_reduce_splits(const GtGemmArgs& args) {
    constexpr int EPI_VEC = GT_EPI_VEC, SLICES = Cfg::GSU_ATOMIC ? 1 : Cfg::GSU;
    constexpr int BATCH = SLICES < 8 ? SLICES : 8;
    if (blockDim.z > 1) return gt_reduce_splits_across<Cfg>(args);
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
        gt_add_slices<SLICES, BATCH>(col, total, 0, 1, vec, count, s);
        gt_write_d<Cfg>(args, s, b, n, m, count);
    }
}
