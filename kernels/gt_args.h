// gt_args.h: the argument block every gemmtune kernel receives, by value.
// The Rust side mirrors it as `#[repr(C)] struct GemmArgs` (src/device/args.rs); keep the two
// in the same order. Pointers are untyped: the kernel casts them to GT_TYPE_A/B/C/D.
#pragma once

// A CUDA tensor map (CUtensorMap: 128 opaque bytes; CUDA 13 aligns it to 128), built by the
// host for kernels that load their operand tiles with the Hopper tensor memory accelerator
// (GT_TMA); zero otherwise.
struct alignas(128) GtTensorMap {
    unsigned long long words[16];
};

struct GtGemmArgs {
    const void* a;
    const void* b;
    const void* c;
    void* d;
    float* workspace;   // split-K partials (f32); null when GSU == 1
    unsigned* flags;    // stream-K arrival counts, one per tile; all zero between launches
    float alpha;
    float beta;
    long long m, n, k;
    long long lda, ldb, ldc, ldd;
    long long stride_a, stride_b, stride_c, stride_d;
    int batch;
    int pad_;
    GtTensorMap tma_a;  // A as (K, M, batch), or (M, K, batch) when M-major
    GtTensorMap tma_b;  // B as (K, N, batch), or (N, K, batch) when N-major
    GtTensorMap tma_d;  // D as (M, N, batch), for kernels that store through tensor maps
    GtTensorMap tma_c;  // C as (M, N, batch), for those kernels where beta reads C
};
