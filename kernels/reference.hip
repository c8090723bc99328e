// reference.hip: the kernels that make GPU verification possible without copying large outputs
// back to the host.
//
//   gt_fill_<t>        seeded uniform [-1, 1) random data for an input buffer of type t (8-bit
//                      types: rounded to the nearest representable value)
//   gt_fill_bits16/32  a constant bit pattern (NaN poison before every verified launch)
//   gt_ref_gemm_<a><c> the obviously-correct GEMM: f64 accumulation, f32 output in a packed
//                      [batch][N][M] buffer, alpha/beta applied, C read only when beta != 0
//   gt_compare_<t>     an output of type t against that reference: sum of squared differences,
//                      sum of squared reference values, max abs diff, max rel diff, NaN count
//
// Every kernel uses 64-bit indices and a grid-stride loop, so any launch size is correct.
#include "gt_args.h"
#include "gt_platform.h"

// splitmix64: a well-mixed 64-bit hash of (seed, index); the top 24 bits give a float in
// [-1, 1) with an exact f32 value, so the same data is reproducible from the seed alone.
GT_DEVICE float gt_uniform(gt_u64 seed, gt_u64 i) {
    gt_u64 z = seed * 0x9e3779b97f4a7c15ull + i + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return float(gt_u32(z >> 40)) * (1.0f / 8388608.0f) - 1.0f;
}

#define GT_GRID_STRIDE(i, count)                                                    \
    for (gt_u64 i = (gt_u64)blockIdx.x * blockDim.x + threadIdx.x; i < (count);   \
         i += (gt_u64)gridDim.x * blockDim.x)

#define GT_DEFINE_FILL(NAME, T)                                                     \
    extern "C" __global__ void NAME(T* p, gt_u64 count, gt_u64 seed) {            \
        GT_GRID_STRIDE(i, count) p[i] = gt_from_f32<T>(gt_uniform(seed, i));        \
    }
GT_DEFINE_FILL(gt_fill_bf16, gt_bf16)
GT_DEFINE_FILL(gt_fill_f16, gt_f16)
GT_DEFINE_FILL(gt_fill_f32, float)
GT_DEFINE_FILL(gt_fill_f8, gt_fp8_e4m3)
GT_DEFINE_FILL(gt_fill_bf8, gt_fp8_e5m2)

extern "C" __global__ void gt_fill_bits16(gt_u16* p, gt_u64 count, gt_u32 bits) {
    GT_GRID_STRIDE(i, count) p[i] = gt_u16(bits);
}
extern "C" __global__ void gt_fill_bits32(gt_u32* p, gt_u64 count, gt_u32 bits) {
    GT_GRID_STRIDE(i, count) p[i] = bits;
}

// Reference GEMM: a 16 x 16 block of threads owns a 16 x 16 tile of the output (of batch
// blockIdx.z) and walks K in steps of 16 through shared memory, converting to f64 on load.
// Launch: grid (ceil(M/16), ceil(N/16), batch), block (16, 16), y and z at most 65535: a
// block takes the tiles and batches past them in grid-sized strides. One kernel per layout
// keeps the address arithmetic free of run-time branches.
constexpr int GT_REF_TILE = 16;

template <class TI, class TJ, class TC, bool TA_T, bool TB_T>
GT_DEVICE void gt_ref_tile(const GtGemmArgs& args, float* out, gt_i64 b, gt_i64 m0, gt_i64 n0) {
    __shared__ double as[GT_REF_TILE][GT_REF_TILE + 1];  // [k][m]
    __shared__ double bs[GT_REF_TILE][GT_REF_TILE + 1];  // [k][n]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const TI* A = reinterpret_cast<const TI*>(args.a) + b * args.stride_a;
    const TJ* B = reinterpret_cast<const TJ*>(args.b) + b * args.stride_b;
    double sum = 0.0;
    for (gt_i64 k0 = 0; k0 < args.k; k0 += GT_REF_TILE) {
        // Thread (tx, ty) stages op(A)(m0 + tx, k0 + ty) and op(B)(k0 + ty, n0 + tx).
        const gt_i64 am = m0 + tx, ak = k0 + ty;
        double v = 0.0;
        if (am < args.m && ak < args.k)
            v = gt_to_f32(A[TA_T ? am * args.lda + ak : ak * args.lda + am]);
        as[ty][tx] = v;
        const gt_i64 bk = k0 + ty, bn = n0 + tx;
        double w = 0.0;
        if (bk < args.k && bn < args.n)
            w = gt_to_f32(B[TB_T ? bk * args.ldb + bn : bn * args.ldb + bk]);
        bs[ty][tx] = w;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < GT_REF_TILE; ++kk) sum += as[kk][tx] * bs[kk][ty];
        __syncthreads();
    }
    const gt_i64 m = m0 + tx, n = n0 + ty;
    if (m < args.m && n < args.n) {
        double r = double(args.alpha) * sum;
        if (args.beta != 0.0f) {
            const TC* C = reinterpret_cast<const TC*>(args.c) + b * args.stride_c;
            r += double(args.beta) * double(gt_to_f32(C[n * args.ldc + m]));
        }
        out[(b * args.n + n) * args.m + m] = float(r);
    }
}

template <class TI, class TJ, class TC, bool TA_T, bool TB_T>
GT_DEVICE void gt_ref_gemm(const GtGemmArgs& args, float* out) {
    const gt_i64 m0 = (gt_i64)blockIdx.x * GT_REF_TILE;
    for (gt_i64 b = blockIdx.z; b < args.batch; b += gridDim.z)
        for (gt_i64 n0 = (gt_i64)blockIdx.y * GT_REF_TILE; n0 < args.n; n0 += (gt_i64)gridDim.y * GT_REF_TILE)
            gt_ref_tile<TI, TJ, TC, TA_T, TB_T>(args, out, b, m0, n0);
}

// gt_ref_gemm_<A/B type>_<C type>_<layout>, e.g. gt_ref_gemm_bf16_bf16_TN; 8-bit inputs name
// both types, e.g. gt_ref_gemm_f8_bf8_bf16_TN.
#define GT_DEFINE_REF_LAYOUT(TN_, TI, TJ, TC, TA_T, TB_T, L)                              \
    extern "C" __global__ void __launch_bounds__(256)                                     \
        gt_ref_gemm_##TN_##_##L(GtGemmArgs args, float* out) {                            \
        gt_ref_gemm<TI, TJ, TC, TA_T, TB_T>(args, out);                                   \
    }
#define GT_DEFINE_REF2(TN_, TI, TJ, TC)                                                   \
    GT_DEFINE_REF_LAYOUT(TN_, TI, TJ, TC, false, false, NN)                               \
    GT_DEFINE_REF_LAYOUT(TN_, TI, TJ, TC, false, true, NT)                                \
    GT_DEFINE_REF_LAYOUT(TN_, TI, TJ, TC, true, false, TN)                                \
    GT_DEFINE_REF_LAYOUT(TN_, TI, TJ, TC, true, true, TT)
#define GT_DEFINE_REF(TN_, TI, TC) GT_DEFINE_REF2(TN_, TI, TI, TC)
GT_DEFINE_REF(bf16_bf16, gt_bf16, gt_bf16)
GT_DEFINE_REF(bf16_f16, gt_bf16, gt_f16)
GT_DEFINE_REF(bf16_f32, gt_bf16, float)
GT_DEFINE_REF(f16_bf16, gt_f16, gt_bf16)
GT_DEFINE_REF(f16_f16, gt_f16, gt_f16)
GT_DEFINE_REF(f16_f32, gt_f16, float)
GT_DEFINE_REF(f32_bf16, float, gt_bf16)
GT_DEFINE_REF(f32_f16, float, gt_f16)
GT_DEFINE_REF(f32_f32, float, float)
#define GT_DEFINE_REF_8BIT(TN_, TI, TJ)                                                   \
    GT_DEFINE_REF2(TN_##_bf16, TI, TJ, gt_bf16)                                           \
    GT_DEFINE_REF2(TN_##_f16, TI, TJ, gt_f16)                                             \
    GT_DEFINE_REF2(TN_##_f32, TI, TJ, float)
GT_DEFINE_REF_8BIT(f8_f8, gt_fp8_e4m3, gt_fp8_e4m3)
GT_DEFINE_REF_8BIT(f8_bf8, gt_fp8_e4m3, gt_fp8_e5m2)
GT_DEFINE_REF_8BIT(bf8_f8, gt_fp8_e5m2, gt_fp8_e4m3)
GT_DEFINE_REF_8BIT(bf8_bf8, gt_fp8_e5m2, gt_fp8_e5m2)

// Comparison: stats[0] += sum (out - ref)^2, stats[1] += sum ref^2, stats[2] = max |out - ref|,
// stats[3] = max |out - ref| / |ref| over |ref| > 1e-3, stats[4] += NaN/Inf count. stats must
// be zeroed first. A block reduces in shared memory, then adds once to global memory.
// Launch: block 256, any grid.
GT_DEVICE void gt_atomic_add_f64(double* p, double v) {
#if GT_VENDOR_AMD
    atomicAdd(p, v);
#else
    asm volatile("red.global.add.f64 [%0], %1;" ::"l"(p), "d"(v) : "memory");
#endif
}
// Non-negative doubles order like their bit patterns, so an unsigned max is a float max.
GT_DEVICE void gt_atomic_max_nonneg_f64(double* p, double v) {
    gt_u64 bits = *reinterpret_cast<gt_u64*>(&v);
#if GT_VENDOR_AMD
    atomicMax(reinterpret_cast<unsigned long long*>(p), bits);
#else
    asm volatile("red.global.max.u64 [%0], %1;" ::"l"(p), "l"(bits) : "memory");
#endif
}

template <class TO>
GT_DEVICE void gt_compare(const TO* out, const float* ref, GtGemmArgs args, double* stats) {
    __shared__ double red[5][256];
    const gt_u64 mn = gt_u64(args.m) * gt_u64(args.n), total = mn * gt_u64(args.batch);
    double d2 = 0.0, r2 = 0.0, dmax = 0.0, rmax = 0.0, bad = 0.0;
    GT_GRID_STRIDE(i, total) {
        const gt_u64 b = i / mn, rest = i - b * mn;
        const gt_u64 n = rest / gt_u64(args.m), m = rest - n * gt_u64(args.m);
        const double o = gt_to_f32(out[b * args.stride_d + n * args.ldd + m]);
        const double r = ref[i];
        // NaN compares false with everything: count it instead of letting it vanish in max().
        if (!(o - o == 0.0)) {
            bad += 1.0;
            continue;
        }
        const double d = o > r ? o - r : r - o;
        const double ar = r < 0 ? -r : r;
        d2 += d * d;
        r2 += r * r;
        dmax = d > dmax ? d : dmax;
        if (ar > 1e-3 && d / ar > rmax) rmax = d / ar;
    }
    const int t = threadIdx.x;
    red[0][t] = d2;
    red[1][t] = r2;
    red[2][t] = dmax;
    red[3][t] = rmax;
    red[4][t] = bad;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (t < s) {
            red[0][t] += red[0][t + s];
            red[1][t] += red[1][t + s];
            red[2][t] = red[2][t] > red[2][t + s] ? red[2][t] : red[2][t + s];
            red[3][t] = red[3][t] > red[3][t + s] ? red[3][t] : red[3][t + s];
            red[4][t] += red[4][t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        gt_atomic_add_f64(stats + 0, red[0][0]);
        gt_atomic_add_f64(stats + 1, red[1][0]);
        gt_atomic_max_nonneg_f64(stats + 2, red[2][0]);
        gt_atomic_max_nonneg_f64(stats + 3, red[3][0]);
        gt_atomic_add_f64(stats + 4, red[4][0]);
    }
}

#define GT_DEFINE_COMPARE(NAME, T)                                                         \
    extern "C" __global__ void __launch_bounds__(256)                                      \
        NAME(const T* out, const float* ref, GtGemmArgs args, double* stats) {             \
        gt_compare<T>(out, ref, args, stats);                                              \
    }
GT_DEFINE_COMPARE(gt_compare_bf16, gt_bf16)
GT_DEFINE_COMPARE(gt_compare_f16, gt_f16)
GT_DEFINE_COMPARE(gt_compare_f32, float)
