// gt_fp8.h: the 8-bit floating-point storage types (e4m3, e5m2) in the device's own encoding,
// and their conversions: one code at a time in software (fills, references, epilogues), and two
// at a time by the hardware where it has an instruction for it (the GEMV and FMA operand
// reads, gt_unpack in gt_platform.h). Included by gt_platform.h, whose integer types it uses.
//
//   8-bit code(s) --(gt_fp8_decode, or gt_fp8x2_to_f32 in pairs)--> f32
//   f32 --(gt_fp8_encode: nearest even, saturating)--> 8-bit code
#pragma once

// e4m3 and e5m2 in the device's own encoding: OCP FP8 on NVIDIA and gfx950 (e4m3: bias 7, no
// infinities, S.1111.111 is NaN; e5m2: bias 15, IEEE-like), the FNUZ variants on gfx942
// (bias 8 and 16, no infinities, no negative zero: 0x80 is the only NaN), the encodings
// hipBLASLt names f8_fnuz_r / bf8_fnuz_r there. The matrix instructions read the bytes; fills,
// references, epilogues and the FMA and GEMV operand reads convert them.
struct __align__(1) gt_fp8_e4m3 { unsigned char bits; };
struct __align__(1) gt_fp8_e5m2 { unsigned char bits; };
#if GT_VENDOR_AMD && (defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__))
#define GT_FP8_FNUZ 1
#else
#define GT_FP8_FNUZ 0
#endif

// The value of an 8-bit float with EB exponent and MB mantissa bits. OCP e4m3 keeps its top
// code for NaN; OCP e5m2 has infinities and NaNs in its top exponent; FNUZ has neither (its
// bias is one more) and 0x80 is NaN.
// Exponent and mantissa are moved into f32's fields as they are: an f32 of exponent e - 127
// (a denormal when e = 0) that one multiply by 2^(127 - BIAS) turns into the 8-bit value,
// subnormals included. About eight integer operations an element: the operand reads take the
// hardware's pair conversion below where there is one.
template <int EB, int MB> GT_DEVICE float gt_fp8_decode(unsigned bits) {
    constexpr int BIAS = (1 << (EB - 1)) - 1 + GT_FP8_FNUZ;
    const unsigned e = (bits >> MB) & ((1u << EB) - 1), m = bits & ((1u << MB) - 1);
    const float mag = __uint_as_float((bits & 0x7fu) << (23 - MB)) * __uint_as_float(unsigned(254 - BIAS) << 23);
    const float v = (bits & 0x80u) ? -mag : mag;
    if (GT_FP8_FNUZ && bits == 0x80u) return __int_as_float(0x7fc00000);
    if (!GT_FP8_FNUZ && EB == 4 && e == 15 && m == 7) return __int_as_float(0x7fc00000);
    if (!GT_FP8_FNUZ && EB == 5 && e == 31) return m ? __int_as_float(0x7fc00000) : (bits & 0x80u) ? -__int_as_float(0x7f800000) : __int_as_float(0x7f800000);
    return v;
}

// f32 -> 8-bit float, rounded to nearest even and saturated to the largest finite value (what
// the vendors' saturating conversions do); NaN stays NaN.
template <int EB, int MB> GT_DEVICE unsigned char gt_fp8_encode(float f) {
    constexpr int BIAS = (1 << (EB - 1)) - 1 + GT_FP8_FNUZ;
    // The largest finite code: OCP e4m3 gives up only the top mantissa code, OCP e5m2 the top
    // exponent, FNUZ nothing.
    constexpr unsigned MAX_CODE = GT_FP8_FNUZ ? 0x7fu : EB == 4 ? 0x7eu : 0x7bu;
    if (f != f) return GT_FP8_FNUZ ? 0x80u : 0x7fu;
    const unsigned sign = f < 0.0f ? 0x80u : 0u;
    const float a = fabsf(f);
    if (a > 1e30f) return (unsigned char)(MAX_CODE | sign);
    // Quantise on the grid of a's binade (or the subnormal grid), then count grid steps: codes
    // are monotonic in the value, one step per code within a binade.
    int ex;
    frexpf(a, &ex);  // a = frac * 2^ex, frac in [0.5, 1)
    const int e = ex - 1 < 1 - BIAS ? 1 - BIAS : ex - 1;
    const float step = ldexpf(1.0f, e - MB);
    const float q = rintf(a / step);  // in [0, 2^(MB+1)]
    unsigned code;
    if (e == 1 - BIAS && q < float(1u << MB)) {
        code = unsigned(q);  // subnormal (or zero)
    } else {
        // q in [2^MB, 2^(MB+1)]: the top value carries into the next binade.
        code = unsigned(e + BIAS) << MB;
        code += unsigned(q) - (1u << MB);
    }
    if (code > MAX_CODE) code = MAX_CODE;
    if (GT_FP8_FNUZ && code == 0) return 0u;  // no negative zero
    return (unsigned char)(code | sign);
}

GT_DEVICE float gt_to_f32(gt_fp8_e4m3 x) { return gt_fp8_decode<4, 3>(x.bits); }
GT_DEVICE float gt_to_f32(gt_fp8_e5m2 x) { return gt_fp8_decode<5, 2>(x.bits); }

// Pairs of 8-bit floats converted by the hardware, in the device's own encoding: sm_89+ turns
// two OCP e4m3 or e5m2 codes into two f16 in one instruction (every e4m3 and e5m2 value is
// exact in f16), and each f16 widens to f32 in one more; gfx942 (FNUZ) and gfx950 (OCP) turn
// two codes straight into two f32 (v_cvt_pk_f32_fp8 / _bf8). The software decode above costs
// about eight integer operations an element, which a GEMV reading one byte of A per
// multiply-add cannot hide: an H200 streamed 4096x1x4096 e4m3 at 0.79 of cuBLASLt on it, 0.96
// with the conversion (both under the memory floor). Only the vector reads (GEMV and FMA
// operands) take this path; the reference kernel converts element by element in software, so
// the correctness check compares one conversion against the other (on AMD compile-checked
// only: no AMD GPU has run it).
#if !GT_VENDOR_AMD && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define GT_HAS_FP8X2_CVT 1
#elif GT_VENDOR_AMD && (defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__))
#define GT_HAS_FP8X2_CVT 1
#else
#define GT_HAS_FP8X2_CVT 0
#endif
template <class T> struct GtFp8Kind { static constexpr int value = 0; };
template <> struct GtFp8Kind<gt_fp8_e4m3> { static constexpr int value = 4; };
template <> struct GtFp8Kind<gt_fp8_e5m2> { static constexpr int value = 5; };

// Codes `pair` (low byte first) of exponent width EB -> lo, hi.
#if GT_HAS_FP8X2_CVT && GT_VENDOR_AMD
template <int EB> GT_DEVICE void gt_fp8x2_to_f32(gt_u16 pair, float& lo, float& hi) {
    typedef float F2 __attribute__((ext_vector_type(2)));
    // Word select false: bytes 0 and 1 of the operand, byte 0 into the first lane.
    const F2 r = EB == 4 ? __builtin_amdgcn_cvt_pk_f32_fp8(int(pair), false)
                         : __builtin_amdgcn_cvt_pk_f32_bf8(int(pair), false);
    lo = r.x;
    hi = r.y;
}
#endif
#if GT_HAS_FP8X2_CVT && !GT_VENDOR_AMD
template <int EB> GT_DEVICE void gt_fp8x2_to_f32(gt_u16 pair, float& lo, float& hi) {
    gt_u32 h2;
    if constexpr (EB == 4) {
        asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(pair));
    } else {
        asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h2) : "h"(pair));
    }
    asm("{.reg .f16 l, h; mov.b32 {l, h}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, h;}"
        : "=f"(lo), "=f"(hi)
        : "r"(h2));
}
#endif
