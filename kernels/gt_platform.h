// gt_platform.h: the device-side portability layer every gemmtune kernel is written against.
//
// The same HIP C++ source compiles with NVRTC/nvcc (GT_VENDOR_AMD = 0) and with hipcc/hiprtc
// (GT_VENDOR_AMD = 1). This header supplies what differs: the runtime header (none on NVIDIA:
// NVRTC and nvcc know __global__, threadIdx and __syncthreads themselves), fixed-width integers
// without <stdint.h>, 16-bit float storage types with conversions (8-bit ones in gt_fp8.h),
// vector types for 2..16-byte memory operations, a float atomic add, and global->LDS
// asynchronous copies (cp.async on sm_80+, an ordinary load + store elsewhere, so the pipeline
// code has one shape everywhere).
#pragma once

#ifndef GT_VENDOR_AMD
#define GT_VENDOR_AMD 0
#endif

#if GT_VENDOR_AMD
#include <hip/hip_runtime.h>
#endif

typedef unsigned short gt_u16;
typedef unsigned int gt_u32;
typedef unsigned long long gt_u64;
typedef long long gt_i64;

#define GT_CAT2(a, b) a##b
#define GT_CAT(a, b) GT_CAT2(a, b)
#define GT_DEVICE __device__ __forceinline__

// cp.async exists from sm_80 on; __CUDA_ARCH__ is only defined in device compilation passes.
#if !GT_VENDOR_AMD && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define GT_HAS_CP_ASYNC 1
#else
#define GT_HAS_CP_ASYNC 0
#endif

// A device pass for an NVIDIA target without the sm_90a features (wgmma, setmaxnreg): the
// warpgroup path refuses to compile there.
#if !GT_VENDOR_AMD && defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GT_DEVICE_LACKS_SM90A 1
#else
#define GT_DEVICE_LACKS_SM90A 0
#endif

// ---- 16-bit floating-point storage types ---------------------------------------------------
// Plain structs rather than the vendor types: the vendor headers differ between CUDA and ROCm
// releases (and HIP's NVIDIA headers do not build against CUDA 13). Arithmetic happens in f32.
struct __align__(2) gt_bf16 { gt_u16 bits; };
struct __align__(2) gt_f16 { gt_u16 bits; };

GT_DEVICE float gt_bits_to_f32(gt_u32 u) { return __uint_as_float(u); }
GT_DEVICE gt_u32 gt_f32_to_bits(float f) { return __float_as_uint(f); }

// Pauses the calling thread briefly. An observable side effect, so a loop around it is never
// removed (a loop without one may be assumed to terminate and be deleted).
GT_DEVICE void gt_pause() {
#if GT_VENDOR_AMD
    __builtin_amdgcn_s_sleep(64);
#else
    asm volatile("nanosleep.u32 1000;");
#endif
}

// Programmatic dependent launch (sm_90+). A kernel launched as a dependent of the one before
// it on the stream may start before that one ends: it waits in gt_wait_for_primary until the
// primary has finished and its writes are visible. The primary lets its dependents start as
// soon as every one of its workgroups has called gt_allow_dependents. Elsewhere both are no-ops
// (and the host launches in plain stream order).
GT_DEVICE void gt_wait_for_primary() {
#if !GT_VENDOR_AMD && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
GT_DEVICE void gt_allow_dependents() {
#if !GT_VENDOR_AMD && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

GT_DEVICE float gt_to_f32(float x) { return x; }
GT_DEVICE float gt_to_f32(gt_bf16 x) { return gt_bits_to_f32(gt_u32(x.bits) << 16); }
GT_DEVICE float gt_to_f32(gt_f16 x) {
#if GT_VENDOR_AMD
    _Float16 h;
    __builtin_memcpy(&h, &x.bits, 2);
    return float(h);
#else
    float f;
    asm("{ .reg .b16 h; mov.b16 h, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "h"(x.bits));
    return f;
#endif
}

// Round to nearest even; NaN stays NaN (a quiet one), so a poisoned output is never hidden.
// sm_80+ converts in one instruction (the same rounding, NaN to the canonical NaN); the
// integer form costs about five, which an epilogue of 128 outputs per thread feels.
GT_DEVICE gt_bf16 gt_f32_to_bf16(float f) {
    gt_bf16 r;
#if !GT_VENDOR_AMD && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.bits) : "f"(f));
#else
    gt_u32 u = gt_f32_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        r.bits = gt_u16((u >> 16) | 0x40u);
    } else {
        r.bits = gt_u16((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
#endif
    return r;
}

GT_DEVICE gt_f16 gt_f32_to_f16(float f) {
    gt_f16 r;
#if GT_VENDOR_AMD
    _Float16 h = (_Float16)f;
    __builtin_memcpy(&r.bits, &h, 2);
#else
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(f));
#endif
    return r;
}

#include "gt_fp8.h"

template <class T> struct GtIsBf16 { static constexpr bool value = false; };
template <> struct GtIsBf16<gt_bf16> { static constexpr bool value = true; };

// gt_from_f32<T>(x): an f32 value converted to the storage type T.
template <class T> struct GtFromF32;
template <> struct GtFromF32<float> { GT_DEVICE static float conv(float x) { return x; } };
template <> struct GtFromF32<gt_bf16> {
    GT_DEVICE static gt_bf16 conv(float x) { return gt_f32_to_bf16(x); }
};
template <> struct GtFromF32<gt_f16> {
    GT_DEVICE static gt_f16 conv(float x) { return gt_f32_to_f16(x); }
};
template <> struct GtFromF32<gt_fp8_e4m3> {
    GT_DEVICE static gt_fp8_e4m3 conv(float x) { return gt_fp8_e4m3{gt_fp8_encode<4, 3>(x)}; }
};
template <> struct GtFromF32<gt_fp8_e5m2> {
    GT_DEVICE static gt_fp8_e5m2 conv(float x) { return gt_fp8_e5m2{gt_fp8_encode<5, 2>(x)}; }
};
template <class T> GT_DEVICE T gt_from_f32(float x) { return GtFromF32<T>::conv(x); }

// Two f32 values converted to a 16-bit type T and packed in one register, `lo` in the low half
// (the order of two neighbouring columns in a matrix fragment). sm_80+ converts the pair in
// one instruction.
template <class T> GT_DEVICE gt_u32 gt_pack2_from_f32(float lo, float hi) {
    static_assert(sizeof(T) == 2, "pairs of 16-bit values only");
    gt_u32 r;
#if !GT_VENDOR_AMD && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (GtIsBf16<T>::value) {
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    } else {
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    }
#else
    r = gt_u32(gt_from_f32<T>(lo).bits) | (gt_u32(gt_from_f32<T>(hi).bits) << 16);
#endif
    return r;
}

// Value-initialisation zeroes every member of these plain types.
template <class T> GT_DEVICE T gt_zero() { return T(); }

// ---- vector types for memory operations of 2, 4, 8 and 16 bytes ----------------------------
// Four floats moved as one 16-byte vector (the epilogue's staged runs, the fix-ups' partial
// tiles, the flat batch path's converted chunks).
struct __align__(16) GtF4 { float x, y, z, w; };

template <int BYTES> struct GtVec;
template <> struct GtVec<1> { typedef unsigned char type; };
template <> struct GtVec<2> { typedef gt_u16 type; };
template <> struct GtVec<4> { typedef gt_u32 type; };
template <> struct GtVec<8> { struct __align__(8) type { gt_u32 x, y; }; };
template <> struct GtVec<16> { struct __align__(16) type { gt_u32 x, y, z, w; }; };

// One load of a whole vector, aligned to its size, into registers.
template <class Vec> GT_DEVICE Vec gt_load_vec(const void* p) { return *reinterpret_cast<const Vec*>(p); }

// The V elements of a packed vector, as f32. Given a vector in global memory, the reads below
// go to it element by element: load it into a local first (gt_load_vec).
template <class T, int V, class Vec> GT_DEVICE void gt_unpack(const Vec& v, float (&x)[V]) {
#if GT_HAS_FP8X2_CVT
    if constexpr (GtFp8Kind<T>::value != 0 && V % 2 == 0) {
        const gt_u16* pairs = reinterpret_cast<const gt_u16*>(&v);
#pragma unroll
        for (int i = 0; i < V / 2; ++i) gt_fp8x2_to_f32<GtFp8Kind<T>::value>(pairs[i], x[2 * i], x[2 * i + 1]);
        return;
    }
#endif
    const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
    for (int i = 0; i < V; ++i) x[i] = gt_to_f32(e[i]);
}

template <int BYTES> GT_DEVICE typename GtVec<BYTES>::type gt_vec_zero() {
    return gt_zero<typename GtVec<BYTES>::type>();
}

// ---- lane exchange and read-once loads (the GEMV mainloop) ----------------------------------
// `v` of the lane whose index differs from this lane's in the bits of `mask` (a butterfly
// step of a sum across the wave).
GT_DEVICE float gt_shfl_xor(float v, int mask) {
#if GT_VENDOR_AMD
    return __shfl_xor(v, mask);
#else
    return __shfl_xor_sync(0xffffffffu, v, mask);
#endif
}

// A BYTES-wide load of data read once (a GEMV's A): on NVIDIA through the non-coherent path
// without allocating in L1, so L1 keeps B, which every row reads again.
template <int BYTES> GT_DEVICE typename GtVec<BYTES>::type gt_load_once(const void* p) {
    typedef typename GtVec<BYTES>::type V;
#if !GT_VENDOR_AMD
    if constexpr (BYTES == 16) {
        V v;
        asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
            : "l"(p));
        return v;
    }
#endif
    return *reinterpret_cast<const V*>(p);
}

// ---- float atomic add (split-K accumulation) -----------------------------------------------
GT_DEVICE void gt_atomic_add_f32(float* p, float v) {
#if GT_VENDOR_AMD
    atomicAdd(p, v);
#else
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
#endif
}

// ---- hand-off between workgroups (stream-K fix-up) -------------------------------------------
// A device-scope fence: this thread's earlier writes are visible GPU-wide before its later
// ones, and its later reads see what other threads made visible before their own fence.
GT_DEVICE void gt_fence_device() { __threadfence(); }

// Atomically adds v to *p; returns the previous value.
GT_DEVICE gt_u32 gt_atomic_add_u32(gt_u32* p, gt_u32 v) { return atomicAdd(p, v); }

// ---- global -> LDS copies --------------------------------------------------------------------
// gt_copy_async<BYTES>(dst_lds, src_global, src_bytes) copies BYTES bytes, of which only the
// first src_bytes are read (the rest are zero-filled: that is how tile edges are handled).
// src_bytes == 0 reads nothing, so `src` may then point anywhere. On sm_80+ this is cp.async
// (complete it with gt_copy_commit + gt_copy_wait<N>); elsewhere it is a synchronous copy.
GT_DEVICE gt_u32 gt_lds_addr(const void* p) {
#if GT_HAS_CP_ASYNC
    gt_u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
#else
    return 0;
#endif
}

template <int BYTES>
GT_DEVICE void gt_copy_sync(void* dst, const void* src, int src_bytes) {
    typedef typename GtVec<BYTES>::type V;
    if (src_bytes >= BYTES) {
        *reinterpret_cast<V*>(dst) = *reinterpret_cast<const V*>(src);
    } else {
        // Partial vector at a matrix edge: byte-exact copy of the valid 16-bit elements.
        V v = gt_vec_zero<BYTES>();
        const gt_u16* s = reinterpret_cast<const gt_u16*>(src);
        gt_u16* t = reinterpret_cast<gt_u16*>(&v);
        // Fixed trip count with constant indices: a variable index into `v` would put it in
        // scratch memory on AMD (hipcc reports 32 bytes/lane of scratch otherwise).
#pragma unroll
        for (int i = 0; i < BYTES / 2; ++i) t[i] = i < src_bytes / 2 ? s[i] : gt_u16(0);
        *reinterpret_cast<V*>(dst) = v;
    }
}

template <int BYTES>
GT_DEVICE void gt_copy_async(void* dst, const void* src, int src_bytes) {
#if GT_HAS_CP_ASYNC
    if constexpr (BYTES >= 4) {
        gt_u32 d = gt_lds_addr(dst);
        if constexpr (BYTES == 16) {
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src),
                         "r"(src_bytes)
                         : "memory");
        } else {
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(d), "l"(src),
                         "n"(BYTES), "r"(src_bytes)
                         : "memory");
        }
        return;
    }
#endif
    gt_copy_sync<BYTES>(dst, src, src_bytes);
}

GT_DEVICE void gt_copy_commit() {
#if GT_HAS_CP_ASYNC
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until at most N committed copy groups of this thread are still in flight.
template <int N> GT_DEVICE void gt_copy_wait() {
#if GT_HAS_CP_ASYNC
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

GT_DEVICE void gt_barrier() { __syncthreads(); }
// Orders one wave's LDS writes before its own reads of them, where each wave works alone (the
// flat batch path's waves that each own a batch): a warp barrier on NVIDIA; on AMD the
// workgroup barrier, which every wave of those kernels reaches.
GT_DEVICE void gt_wave_sync() {
#if GT_VENDOR_AMD
    __syncthreads();
#else
    __syncwarp();
#endif
}
