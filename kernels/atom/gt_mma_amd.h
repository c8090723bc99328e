// atom/gt_mma_amd.h: AMD matrix-core (MFMA) atoms for wave64 CDNA GPUs, implementing the atom
// interface described in atom/gt_mma.h (M, N, K, WAVE, C_REGS, FragA/FragB, load_a/load_b, mma,
// a_coord/b_coord/c_coord).
//
// Instructions (all f32 accumulate, one wave of 64 lanes, cbsz = abid = blgp = 0):
//   shape      bf16                                   f16                          archs
//   32x32x8    v_mfma_f32_32x32x8bf16_1k              v_mfma_f32_32x32x8f16        gfx90a gfx94x gfx950
//   16x16x16   v_mfma_f32_16x16x16bf16_1k             v_mfma_f32_16x16x16f16       gfx90a gfx94x gfx950
//   32x32x16   v_mfma_f32_32x32x16_bf16               v_mfma_f32_32x32x16_f16      gfx950
//   16x16x32   v_mfma_f32_16x16x32_bf16               v_mfma_f32_16x16x32_f16      gfx950
//   8-bit floats, A x B each e4m3 (fp8) or e5m2 (bf8), every mix:
//   32x32x16   v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8}                             gfx94x gfx950
//   16x16x32   v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8}                             gfx94x gfx950
//   32x32x64   v_mfma_f32_32x32x64_f8f6f4 (cbsz / blgp: A's / B's format)          gfx950
//   16x16x128  v_mfma_f32_16x16x128_f8f6f4                                          gfx950
// The 8-bit instructions read the device's own encodings: FNUZ on gfx94x, OCP on gfx950
// (gt_platform.h). The f8f6f4 ones are reached through the block-scaled builtin with zero
// scale operands, which the compiler emits as the unscaled instruction.
// (gfx908 has the 16-bit f16 shapes but only the older two-pass bf16 "non-_1k" forms; it is
// not a target here.)
//
// Operand fragment layouts (CDNA3 ISA "Matrix fused multiply-add" register layouts; the same
// the AMD matrix instruction calculator prints). With lane = 0..63, KPL = K * M / 64 input
// elements per lane (4 for the K=8/16 shapes, 8 for the gfx950 double-K shapes and the 8-bit
// shapes of gfx94x, 32 for the f8f6f4 shapes: 8, 16 or 32 bytes) and
// G = 64 / M lane groups:
//   A (M x K): lane holds row m = lane % M, columns k = (lane / M) * KPL + i, i = 0..KPL-1
//              (KPL consecutive K values of one row: 8, 16 or 32 bytes of registers)
//   B (K x N): lane holds column n = lane % N, rows k = (lane / N) * KPL + i (the mirror of A)
//   C (M x N): lane holds column n = lane % N and
//              32x32: C_REGS = 16, register i is row m = (i / 4) * 8 + (lane / 32) * 4 + i % 4
//              16x16: C_REGS = 4,  register i is row m = (lane / 16) * 4 + i
// So a wave's lanes cover the K extent in G slices, each lane a contiguous run of KPL values:
// when the LDS view stores K contiguously (A with transA=T, B with transB=N) a fragment is one
// aligned 8- or 16-byte LDS read (ds_read_b64 / ds_read_b128), two for 32 bytes; otherwise it
// is gathered element by element through the view. An M- or N-contiguous operand is therefore
// stored K-major by TransposeLDS (loader/gt_kpack_loader.h, the default on AMD), so that
// gather is left to the configurations that turn it off. A and B place K the same way, so a sum
// over K does not depend on the order in which an instruction walks its K positions.
//
// Registers: the accumulators (16 or 4 floats per atom) are placed by the compiler in AGPRs
// or VGPRs (gfx90a+ accept both as the C/D operand); gfx90a/gfx942 have 512 registers per lane
// in total (256 VGPR + 256 AGPR), which the space's register estimate assumes.
#pragma once

// Operand / accumulator vector types the builtins take. The _1k bf16 builtins take the bits
// as 16-bit integers; the gfx950 bf16 builtins take __bf16 vectors (clang 19+).
typedef short gt_amd_i16x4 __attribute__((ext_vector_type(4)));
typedef _Float16 gt_amd_f16x4 __attribute__((ext_vector_type(4)));
typedef _Float16 gt_amd_f16x8 __attribute__((ext_vector_type(8)));
typedef float gt_amd_f32x4 __attribute__((ext_vector_type(4)));
typedef float gt_amd_f32x16 __attribute__((ext_vector_type(16)));
#if defined(__gfx950__)
typedef __bf16 gt_amd_bf16x8 __attribute__((ext_vector_type(8)));
#endif

// gfx950's double-K MFMA exists only when compiling for gfx950 (the arch macro is defined in
// device passes only; host passes never call an atom).
#if defined(__gfx950__)
#define GT_AMD_HAS_MFMA_DOUBLE_K 1
#else
#define GT_AMD_HAS_MFMA_DOUBLE_K 0
#endif
// The 8-bit MFMA instructions: gfx94x (FNUZ encodings) and gfx950 (OCP).
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__)
#define GT_AMD_HAS_MFMA_FP8 1
#else
#define GT_AMD_HAS_MFMA_FP8 0
#endif
#if defined(__HIP_DEVICE_COMPILE__)
#define GT_AMD_DEVICE_PASS 1
#else
#define GT_AMD_DEVICE_PASS 0
#endif

// One MFMA instruction for element types TA x TB and shape MxNxK on fragments held as raw
// 16-bit words (KPL elements of A or B per lane: 8, 16 or 32 bytes). Only supported combinations
// are specialised; the primary template stops compilation with the combination's name.
template <class TA, class TB, int M, int N, int K> struct GtMfmaOp {
    static_assert(sizeof(TA) == 0,
                  "no AMD MFMA instruction for these element types and GT_MI shape: valid are "
                  "bf16/f16 with 32x32x8, 16x16x16 (gfx90a, gfx94x, gfx950) and 32x32x16, "
                  "16x16x32 (gfx950), and 8-bit floats with 32x32x16, 16x16x32 (gfx94x, gfx950) "
                  "and 32x32x64, 16x16x128 (gfx950)");
};

// Packs raw 16-bit patterns into the builtin's operand vector (a no-op at the ISA level: the
// fragment already lives in consecutive 32-bit registers).
template <class V, int COUNT> GT_DEVICE V gt_amd_pack(const gt_u16 (&e)[COUNT]) {
    static_assert(sizeof(V) == COUNT * 2, "fragment and operand vector sizes differ");
    V v;
    __builtin_memcpy(&v, e, sizeof(V));
    return v;
}

template <class V, int COUNT> GT_DEVICE V gt_amd_acc_in(const float (&c)[COUNT]) {
    V v;
    __builtin_memcpy(&v, c, sizeof(V));
    return v;
}

template <class V, int COUNT> GT_DEVICE void gt_amd_acc_out(float (&c)[COUNT], const V& v) {
    __builtin_memcpy(c, &v, sizeof(V));
}

template <> struct GtMfmaOp<gt_bf16, gt_bf16, 32, 32, 8> {
    GT_DEVICE static void run(float (&c)[16], const gt_u16 (&a)[4], const gt_u16 (&b)[4]) {
        gt_amd_acc_out(c, __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(
                              gt_amd_pack<gt_amd_i16x4>(a), gt_amd_pack<gt_amd_i16x4>(b),
                              gt_amd_acc_in<gt_amd_f32x16>(c), 0, 0, 0));
    }
};
template <> struct GtMfmaOp<gt_bf16, gt_bf16, 16, 16, 16> {
    GT_DEVICE static void run(float (&c)[4], const gt_u16 (&a)[4], const gt_u16 (&b)[4]) {
        gt_amd_acc_out(c, __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(
                              gt_amd_pack<gt_amd_i16x4>(a), gt_amd_pack<gt_amd_i16x4>(b),
                              gt_amd_acc_in<gt_amd_f32x4>(c), 0, 0, 0));
    }
};
template <> struct GtMfmaOp<gt_f16, gt_f16, 32, 32, 8> {
    GT_DEVICE static void run(float (&c)[16], const gt_u16 (&a)[4], const gt_u16 (&b)[4]) {
        gt_amd_acc_out(c, __builtin_amdgcn_mfma_f32_32x32x8f16(
                              gt_amd_pack<gt_amd_f16x4>(a), gt_amd_pack<gt_amd_f16x4>(b),
                              gt_amd_acc_in<gt_amd_f32x16>(c), 0, 0, 0));
    }
};
template <> struct GtMfmaOp<gt_f16, gt_f16, 16, 16, 16> {
    GT_DEVICE static void run(float (&c)[4], const gt_u16 (&a)[4], const gt_u16 (&b)[4]) {
        gt_amd_acc_out(c, __builtin_amdgcn_mfma_f32_16x16x16f16(
                              gt_amd_pack<gt_amd_f16x4>(a), gt_amd_pack<gt_amd_f16x4>(b),
                              gt_amd_acc_in<gt_amd_f32x4>(c), 0, 0, 0));
    }
};

#if GT_AMD_HAS_MFMA_DOUBLE_K
template <> struct GtMfmaOp<gt_bf16, gt_bf16, 32, 32, 16> {
    GT_DEVICE static void run(float (&c)[16], const gt_u16 (&a)[8], const gt_u16 (&b)[8]) {
        gt_amd_acc_out(c, __builtin_amdgcn_mfma_f32_32x32x16_bf16(
                              gt_amd_pack<gt_amd_bf16x8>(a), gt_amd_pack<gt_amd_bf16x8>(b),
                              gt_amd_acc_in<gt_amd_f32x16>(c), 0, 0, 0));
    }
};
template <> struct GtMfmaOp<gt_bf16, gt_bf16, 16, 16, 32> {
    GT_DEVICE static void run(float (&c)[4], const gt_u16 (&a)[8], const gt_u16 (&b)[8]) {
        gt_amd_acc_out(c, __builtin_amdgcn_mfma_f32_16x16x32_bf16(
                              gt_amd_pack<gt_amd_bf16x8>(a), gt_amd_pack<gt_amd_bf16x8>(b),
                              gt_amd_acc_in<gt_amd_f32x4>(c), 0, 0, 0));
    }
};
template <> struct GtMfmaOp<gt_f16, gt_f16, 32, 32, 16> {
    GT_DEVICE static void run(float (&c)[16], const gt_u16 (&a)[8], const gt_u16 (&b)[8]) {
        gt_amd_acc_out(c, __builtin_amdgcn_mfma_f32_32x32x16_f16(
                              gt_amd_pack<gt_amd_f16x8>(a), gt_amd_pack<gt_amd_f16x8>(b),
                              gt_amd_acc_in<gt_amd_f32x16>(c), 0, 0, 0));
    }
};
template <> struct GtMfmaOp<gt_f16, gt_f16, 16, 16, 32> {
    GT_DEVICE static void run(float (&c)[4], const gt_u16 (&a)[8], const gt_u16 (&b)[8]) {
        gt_amd_acc_out(c, __builtin_amdgcn_mfma_f32_16x16x32_f16(
                              gt_amd_pack<gt_amd_f16x8>(a), gt_amd_pack<gt_amd_f16x8>(b),
                              gt_amd_acc_in<gt_amd_f32x4>(c), 0, 0, 0));
    }
};
#endif

#if GT_AMD_HAS_MFMA_FP8
// 8 bytes of K per lane, one 64-bit operand; the instruction's name spells A's format, then
// B's, so a mix of e4m3 and e5m2 is one instruction as well.
#define GT_AMD_MFMA_FP8(TA_, TB_, MN, K_, REGS, BUILTIN)                                          \
    template <> struct GtMfmaOp<TA_, TB_, MN, MN, K_> {                                           \
        GT_DEVICE static void run(float (&c)[REGS], const gt_u16 (&a)[4], const gt_u16 (&b)[4]) { \
            gt_amd_acc_out(c, BUILTIN(gt_amd_pack<long>(a), gt_amd_pack<long>(b),               \
                                      gt_amd_acc_in<gt_amd_f32x##REGS>(c), 0, 0, 0));            \
        }                                                                                         \
    };
GT_AMD_MFMA_FP8(gt_fp8_e4m3, gt_fp8_e4m3, 32, 16, 16, __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8)
GT_AMD_MFMA_FP8(gt_fp8_e4m3, gt_fp8_e5m2, 32, 16, 16, __builtin_amdgcn_mfma_f32_32x32x16_fp8_bf8)
GT_AMD_MFMA_FP8(gt_fp8_e5m2, gt_fp8_e4m3, 32, 16, 16, __builtin_amdgcn_mfma_f32_32x32x16_bf8_fp8)
GT_AMD_MFMA_FP8(gt_fp8_e5m2, gt_fp8_e5m2, 32, 16, 16, __builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8)
GT_AMD_MFMA_FP8(gt_fp8_e4m3, gt_fp8_e4m3, 16, 32, 4, __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8)
GT_AMD_MFMA_FP8(gt_fp8_e4m3, gt_fp8_e5m2, 16, 32, 4, __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8)
GT_AMD_MFMA_FP8(gt_fp8_e5m2, gt_fp8_e4m3, 16, 32, 4, __builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8)
GT_AMD_MFMA_FP8(gt_fp8_e5m2, gt_fp8_e5m2, 16, 32, 4, __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8)
#undef GT_AMD_MFMA_FP8
#endif

#if GT_AMD_HAS_MFMA_DOUBLE_K
// gfx950's f8f6f4 shapes: 32 bytes of K per lane, eight 32-bit registers; the format of each
// operand is an immediate (0 e4m3, 1 e5m2), so one template covers the four pairs.
typedef int gt_amd_i32x8 __attribute__((ext_vector_type(8)));
template <class T> struct GtF8f6f4Format;
template <> struct GtF8f6f4Format<gt_fp8_e4m3> { static constexpr int value = 0; };
template <> struct GtF8f6f4Format<gt_fp8_e5m2> { static constexpr int value = 1; };
template <class TA, class TB> struct GtMfmaOp<TA, TB, 32, 32, 64> {
    GT_DEVICE static void run(float (&c)[16], const gt_u16 (&a)[16], const gt_u16 (&b)[16]) {
        gt_amd_acc_out(c, __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(
                              gt_amd_pack<gt_amd_i32x8>(a), gt_amd_pack<gt_amd_i32x8>(b),
                              gt_amd_acc_in<gt_amd_f32x16>(c), GtF8f6f4Format<TA>::value,
                              GtF8f6f4Format<TB>::value, 0, 0, 0, 0));
    }
};
template <class TA, class TB> struct GtMfmaOp<TA, TB, 16, 16, 128> {
    GT_DEVICE static void run(float (&c)[4], const gt_u16 (&a)[16], const gt_u16 (&b)[16]) {
        gt_amd_acc_out(c, __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(
                              gt_amd_pack<gt_amd_i32x8>(a), gt_amd_pack<gt_amd_i32x8>(b),
                              gt_amd_acc_in<gt_amd_f32x4>(c), GtF8f6f4Format<TA>::value,
                              GtF8f6f4Format<TB>::value, 0, 0, 0, 0));
    }
};
#endif

// The atom: MFMA shape MxNxK on element types TA x TB (both 16-bit, the same; or both 8-bit
// floats, any mix), wave64.
template <class TA, int M_, int N_, int K_, class TB = TA> struct GtAtomMfma {
    static constexpr int M = M_, N = N_, K = K_, WAVE = 64;
    static constexpr int C_REGS = M * N / WAVE, C_COLS = 1;
    // Input elements per lane (KPL) and lane groups along K (G); see the layout table above.
    static constexpr int KPL = M * K / WAVE;
    static constexpr int GROUPS = WAVE / M;
    // Element size and a lane's fragment in bytes, held as 16-bit words.
    static constexpr int ES = int(sizeof(TA)), BYTES = KPL * ES, WORDS = BYTES / 2;
    static_assert(M == N && (M == 32 || M == 16), "MFMA atoms are square in M x N");
    static_assert(sizeof(TB) == sizeof(TA), "A and B elements of one size");
    static_assert(BYTES == 8 || BYTES == 16 || BYTES == 32, "8, 16 or 32 operand bytes per lane");

    struct FragA { gt_u16 e[WORDS]; };
    struct FragB { gt_u16 e[WORDS]; };

    GT_DEVICE static void a_coord(int lane, int i, int& m, int& k) {
        m = lane % M;
        k = (lane / M) * KPL + i;
    }
    GT_DEVICE static void b_coord(int lane, int i, int& k, int& n) {
        n = lane % N;
        k = (lane / N) * KPL + i;
    }
    GT_DEVICE static void c_coord(int lane, int i, int& m, int& n) {
        n = lane % N;
        if (M == 32) {
            m = (i / 4) * 8 + (lane / 32) * 4 + (i % 4);
        } else {
            m = (lane / 16) * 4 + i;
        }
    }

    template <class View>
    GT_DEVICE static void load_a(FragA& f, const View& v, int m0, int k0, int lane) {
        load(f.e, v, m0 + lane % M, k0 + (lane / M) * KPL);
    }
    template <class View>
    GT_DEVICE static void load_b(FragB& f, const View& v, int k0, int n0, int lane) {
        load(f.e, v, n0 + lane % N, k0 + (lane / N) * KPL);
    }

    GT_DEVICE static void mma(float (&c)[C_REGS], const FragA& a, const FragB& b) {
        GtMfmaOp<TA, TB, M, N, K>::run(c, a.e, b.e);
    }

  private:
    // KPL consecutive K values of row/column `mn` starting at `k`. With K contiguous in LDS
    // and 16-byte row chunks, the run starts at a multiple of KPL (k0 is a multiple of K): it
    // is read in aligned vectors of up to 16 bytes, each within one 16-byte chunk (a swizzle
    // moves chunks whole, so the two halves of a 32-byte run are read apart); otherwise
    // gather element by element.
    template <class View>
    GT_DEVICE static void load(gt_u16 (&e)[WORDS], const View& v, int mn, int k) {
        static_assert(sizeof(typename View::T) == ES, "the view's elements are the atom's");
        if (View::K_CONTIG && View::ROWS_16B) {
            constexpr int PIECE = BYTES < 16 ? BYTES : 16;
            typedef typename GtVec<PIECE>::type V;
#pragma unroll
            for (int p = 0; p < BYTES / PIECE; ++p) {
                V x = *reinterpret_cast<const V*>(v.ptr(mn, k + p * PIECE / ES));
                __builtin_memcpy(e + p * PIECE / 2, &x, sizeof(V));
            }
        } else {
            unsigned char bytes[BYTES];
#pragma unroll
            for (int i = 0; i < KPL; ++i) {
                const auto bits = v.at(mn, k + i).bits;
                __builtin_memcpy(bytes + i * ES, &bits, ES);
            }
            __builtin_memcpy(e, bytes, BYTES);
        }
    }
};

// The atom of MI MxNxK for element types T (A) and TB (B) (see atom/gt_mma.h).
template <class T, int M, int N, int K, class TB = T> struct GtAtomFor {
    static_assert((M == 32 && N == 32 && (K == 8 || K == 16 || K == 64)) ||
                      (M == 16 && N == 16 && (K == 16 || K == 32 || K == 128)),
                  "AMD kernels support the matrix instructions 32x32x8, 16x16x16 (gfx90a/gfx94x/"
                  "gfx950) and 32x32x16, 16x16x32 (gfx950; 8-bit inputs: gfx94x, gfx950), and "
                  "32x32x64, 16x16x128 (8-bit inputs, gfx950) only");
    static_assert(!GT_AMD_DEVICE_PASS || GT_AMD_HAS_MFMA_DOUBLE_K || K * M != 2048,
                  "MFMA 32x32x64 / 16x16x128 (f8f6f4) exist on gfx950 only");
    static_assert(!GT_AMD_DEVICE_PASS || GT_AMD_HAS_MFMA_DOUBLE_K || sizeof(T) != 2 || K * M != 512,
                  "MFMA 32x32x16 / 16x16x32 (16-bit inputs) exist on gfx950 only");
    static_assert(!GT_AMD_DEVICE_PASS || GT_AMD_HAS_MFMA_FP8 || sizeof(T) != 1,
                  "8-bit MFMA instructions exist on gfx94x and gfx950 only");
    typedef GtAtomMfma<T, M, N, K, TB> type;
};
