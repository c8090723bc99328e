// epilogue/gt_epilogue.h: what happens to a workgroup's accumulators. They are staged as an
// f32 MT0 x MT1 tile in LDS (any mainloop's register layout in, one layout out), then go out
// in StoreVectorWidth-element vectors along M: to D with alpha / beta applied and converted to
// D's type (GSU = 1, and the last split or stream-K contributor of a shared tile), or as f32
// split partials to the workspace that the reduction kernel (epilogue/gt_reduce_kernel.h)
// sums (atomically added for GSU<n>A).
#pragma once

// Reads the staged run of V floats at `src` (V-aligned) as vectors. For V = 8, lanes of odd
// quads read their second half first: eight lanes reading 32-byte runs 32 bytes apart would
// hit each bank twice per 16-byte load, staggered they cover all 32 banks once.
template <int V> GT_DEVICE void gt_read_run(const float* src, float (&x)[V], int lane) {
    if constexpr (V == 8) {
        const GtF4* const run = reinterpret_cast<const GtF4*>(src);
        const int first = (lane >> 2) & 1;
        const GtF4 a = run[first], b = run[first ^ 1];
        // Selected, not indexed: a lane-dependent index would put x in local memory.
        const GtF4 lo = first ? b : a, hi = first ? a : b;
        x[0] = lo.x;
        x[1] = lo.y;
        x[2] = lo.z;
        x[3] = lo.w;
        x[4] = hi.x;
        x[5] = hi.y;
        x[6] = hi.z;
        x[7] = hi.w;
    } else if constexpr (V == 4) {
        const GtF4 v = *reinterpret_cast<const GtF4*>(src);
        x[0] = v.x;
        x[1] = v.y;
        x[2] = v.z;
        x[3] = v.w;
    } else {
#pragma unroll
        for (int e = 0; e < V; ++e) x[e] = src[e];
    }
}

template <class T> GT_DEVICE bool gt_aligned(const T* p, int bytes) {
    return (reinterpret_cast<gt_u64>(p) & gt_u64(bytes - 1)) == 0;
}

// Writes V consecutive elements of D along M from (m, n) of batch `batch`, the first `count`
// of them inside the matrix: D = alpha * x (+ beta * C), as one packed store when all V are
// inside and the address is aligned to it.
template <class Cfg, int V>
GT_DEVICE void gt_write_d(const GtGemmArgs& args, const float (&x)[V], gt_i64 batch, gt_i64 n, gt_i64 m,
                          int count) {
    typedef typename Cfg::TD TD;
    TD* D = reinterpret_cast<TD*>(args.d) + batch * args.stride_d + n * args.ldd + m;
    float y[V];
#pragma unroll
    for (int e = 0; e < V; ++e) y[e] = args.alpha * x[e];
    if constexpr (!Cfg::BETA_ZERO) {
        const typename Cfg::TC* C = reinterpret_cast<const typename Cfg::TC*>(args.c) + batch * args.stride_c +
                                    n * args.ldc + m;
#pragma unroll
        for (int e = 0; e < V; ++e)
            if (e < count) y[e] += args.beta * gt_to_f32(C[e]);
    }
    constexpr int VB = V * int(sizeof(TD));
    // (One element is always aligned to itself: no test.)
    if (count == V && (V == 1 || gt_aligned(D, VB))) {
        typename GtVec<VB>::type pack;
        TD* t = reinterpret_cast<TD*>(&pack);
#pragma unroll
        for (int e = 0; e < V; ++e) t[e] = gt_from_f32<TD>(y[e]);
        *reinterpret_cast<typename GtVec<VB>::type*>(D) = pack;
    } else {
#pragma unroll
        for (int e = 0; e < V; ++e)
            if (e < count) D[e] = gt_from_f32<TD>(y[e]);
    }
}

// One total of output (m, n) of batch `batch`, from a kernel that holds whole sums per thread
// (the GEMV path): to D with alpha / beta, or as split `split`'s f32 partial to the workspace
// the reduction kernel sums (added atomically for GSU<n>A). Outside D it is dropped.
template <class Cfg>
GT_DEVICE void gt_store_total(const GtGemmArgs& args, int batch, int split, gt_i64 m, gt_i64 n, float x) {
    if (m >= args.m || n >= args.n) return;
    if constexpr (Cfg::REDUCTION_KERNEL) {
        const gt_i64 at = ((gt_i64)batch * args.n + n) * args.m + m;
        if constexpr (Cfg::GSU_ATOMIC) {
            gt_atomic_add_f32(args.workspace + at, x);
        } else {
            args.workspace[(gt_i64)split * args.m * args.n * args.batch + at] = x;
        }
    } else {
        (void)split;
        const float v[1] = {x};
        gt_write_d<Cfg>(args, v, batch, n, m, 1);
    }
}

template <class Cfg, class Mainloop> struct GtEpilogue {
    static constexpr int MT0 = Cfg::MT0, MT1 = Cfg::MT1, SVW = Cfg::SVW, ACC = Mainloop::ACC;
    static_assert(SVW <= 8 && MT0 % SVW == 0, "StoreVectorWidth must divide MT0, at most 8");
    // The staging tile: f32 [MT1][MT0], m XOR-permuted in groups of 8 by n so the lanes that
    // write one column group hit different banks; groups of 8 stay contiguous, so an SVW-wide
    // read (SVW <= 8) is one contiguous, SVW-aligned run. The mask keeps m inside its aligned
    // group of 8 * (mask + 1) rows, which MT0 must hold whole. An unswapped wgmma store writes
    // 8 rows of columns n, n+2, n+4, n+6: permuting by n / 2 gives those four columns four
    // different groups of banks (by n, n and n+4 would share them).
    static constexpr int EPI_MASK = gt_min(gt_pow2_factor(MT0 / 8), 4) - 1;
    static constexpr int EPI_SHIFT = Cfg::WGMMA && !Cfg::SWAP_AB ? 1 : 0;
    GT_DEVICE static int off(int m, int n) { return n * MT0 + (m ^ (((n >> EPI_SHIFT) & EPI_MASK) << 3)); }

    // The accumulators go to the staging tile (the caller synchronises afterwards).
    GT_DEVICE static void stage(float* ctile, float (&acc)[ACC], const GtPos& pos) {
        gt_plant_wrong_result(acc);
#pragma unroll
        for (int i = 0; i < ACC; ++i) {
            int m, n;
            Mainloop::acc_coord(pos.lane, i, m, n);
            ctile[off(pos.wm0 + m, pos.wn0 + n)] = acc[i];
        }
    }

    // The staged tile at (m0, n0) of batch `batch` goes out in SVW-element vectors along M: to
    // D with alpha/beta applied, or (split-K with a reduction kernel) as split `split`'s f32
    // partial. Its first dm rows and dn columns stay out (dm a multiple of SVW): an edge tile
    // computed shifted back inside the matrix (scheduler/gt_tile_map.h, GtEdgeShift) overlaps
    // the tile before it by as much, and that tile stores them.
    GT_DEVICE static void store(const GtGemmArgs& args, const float* ctile, int m0, int n0, int batch, int split,
                                int tid, int dm = 0, int dn = 0) {
        const gt_i64 M = args.m, N = args.n;
        constexpr int VPC = MT0 / SVW;
        for (int v = tid; v < MT1 * VPC; v += Cfg::THREADS) {
            const int n = v / VPC, m = (v % VPC) * SVW;
            const gt_i64 gm = m0 + m, gn = n0 + n;
            if (gn >= N || gm >= M || m < dm || n < dn) continue;
            const int count = (M - gm) < SVW ? int(M - gm) : SVW;
            float x[SVW];
            gt_read_run<SVW>(ctile + off(m, n), x, v % Cfg::WAVE);
            if constexpr (Cfg::REDUCTION_KERNEL) {
                float* ws = args.workspace;
                const gt_i64 total = M * N * args.batch;
                const gt_i64 at = (gt_i64)batch * M * N + gn * M + gm;
                if constexpr (Cfg::GSU_ATOMIC) {
#pragma unroll
                    for (int e = 0; e < SVW; ++e)
                        if (e < count) gt_atomic_add_f32(ws + at + e, x[e]);
                } else {
#pragma unroll
                    for (int e = 0; e < SVW; ++e)
                        if (e < count) ws[(gt_i64)split * total + at + e] = x[e];
                }
            } else {
                (void)split;
                gt_write_d<Cfg>(args, x, batch, gn, gm, count);
            }
        }
    }
};
