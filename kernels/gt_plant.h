// gt_plant.h: failures planted on purpose (`gemmtune --plant`), so tests can check that the
// harness isolates a kernel that fails to compile, hangs, faults or computes a wrong result.
// Codegen defines at most one of GT_PLANT_* (to 1) for the kernels a plant matches; without
// one, every function here compiles to nothing.
#pragma once

#ifdef GT_PLANT_COMPILE_ERROR
#error "planted compile failure (gemmtune --plant)"
#endif
#ifndef GT_PLANT_HANG
#define GT_PLANT_HANG 0
#endif
#ifndef GT_PLANT_OOB
#define GT_PLANT_OOB 0
#endif
#ifndef GT_PLANT_WRONG
#define GT_PLANT_WRONG 0
#endif

// At kernel entry: never return (a hang the worker's timeout must end), or write far outside
// any allocation (an illegal address the driver reports as sticky).
GT_DEVICE void gt_plant_at_entry(const GtGemmArgs& args, int tid) {
    if constexpr (GT_PLANT_HANG != 0) {
        for (;;) gt_pause();
    }
    if constexpr (GT_PLANT_OOB != 0) {
        if (tid == 0 && blockIdx.x == 0) reinterpret_cast<volatile float*>(args.d)[1ll << 40] = 1.0f;
    }
}

// Before the accumulators are stored: a result off by half, which verification must catch.
template <int N> GT_DEVICE void gt_plant_wrong_result(float (&acc)[N]) {
    if constexpr (GT_PLANT_WRONG != 0) {
#pragma unroll
        for (int i = 0; i < N; ++i) acc[i] *= 1.5f;
    }
}
