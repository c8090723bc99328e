// atom/gt_mma.h: the matrix-core atom interface the warp-level mainloop
// (mainloop/gt_warp_mma.h) calls, and the dispatch that picks one atom per vendor and element
// type.
//
// An "atom" is one matrix instruction executed by one wave (warp): it multiplies an
// M x K tile of A by a K x N tile of B and adds the product into an M x N f32 accumulator
// tile that is spread over the lanes of the wave. The template never looks inside the
// register fragments: it only asks the atom to load them from shared memory (LDS), to
// multiply, and where each accumulator register lives in the M x N tile.
//
// ---------------------------------------------------------------------------------------
// What every atom type must provide (NVIDIA: gt_mma_nvidia.h, AMD: gt_mma_amd.h)
// ---------------------------------------------------------------------------------------
//   struct Atom {
//     static constexpr int M, N, K;   // instruction shape; equals GT_MI_M/N/K
//     static constexpr int WAVE;      // lanes that execute it together: 32 (NVIDIA), 64 (AMD)
//     static constexpr int C_REGS;    // f32 accumulators each lane holds: M * N / WAVE
//     static constexpr int C_COLS;    // of which neighbours in one row: the C_REGS are
//                                     // C_REGS / C_COLS rows of C_COLS columns, row by row
//     struct FragA; struct FragB;     // per-lane register fragments of A and B (opaque)
//
//     // Loads the A fragment of the M x K sub-tile whose top-left element is (m0, k0) of
//     // the LDS view `a` (see GtLdsView below). All lanes of the wave call it together.
//     template <class View> __device__ static void load_a(FragA&, const View& a,
//                                                         int m0, int k0, int lane);
//     // Loads the B fragment of the K x N sub-tile at (k0, n0) of the LDS view `b`.
//     template <class View> __device__ static void load_b(FragB&, const View& b,
//                                                         int k0, int n0, int lane);
//     // c += a * b, all lanes together.
//     __device__ static void mma(float (&c)[C_REGS], const FragA& a, const FragB& b);
//     // Where accumulator register i of `lane` lives in the M x N tile.
//     __device__ static void c_coord(int lane, int i, int& m, int& n);
//   };
//
// An atom may implement load_a / load_b with special instructions (ldmatrix on NVIDIA) or
// element by element from its lane -> (row, k) map with gt_frag_load_generic below; the
// generic route works for every LDS layout, so an atom only needs its own fragment map:
//   a_coord(lane, i, m, k): element i (0 <= i < M*K/WAVE) of lane's A fragment is A(m, k)
//   b_coord(lane, i, k, n): element i (0 <= i < K*N/WAVE) of lane's B fragment is B(k, n)
//
// AMD MFMA atoms (wave64) for gfx90a/gfx942/gfx950 implement exactly this interface in
// gt_mma_amd.h: FragA/FragB hold the operand vectors of one v_mfma_f32_<M>x<N>x<K>_{bf16,f16}
// instruction (e.g. 4 or 8 16-bit values per lane), C_REGS = M*N/64 floats in the order the
// instruction returns them, c_coord gives the (row, column) of each of those floats, and mma
// calls the __builtin_amdgcn_mfma_* builtin with cbsz/abid/blgp = 0. The dispatch at the end
// of this file selects `GtAtom` from GT_MI_M/N/K and GT_TYPE_A; an unsupported combination
// must fail to compile with a static_assert naming it, never silently fall back.
//
// ---------------------------------------------------------------------------------------
// LDS views (provided by the template, consumed by atoms)
// ---------------------------------------------------------------------------------------
//   View::T                   element type in LDS (gt_bf16, gt_f16, float)
//   View::K_CONTIG            true when consecutive K of one row/column are adjacent in LDS
//                             (A with transA = T, B with transB = N)
//   View::ROWS_16B            true when every LDS row starts 16-byte aligned and 16 bytes of
//                             consecutive elements along the contiguous dimension, starting at
//                             a multiple of 16 bytes, are one aligned chunk (ldmatrix-compatible
//                             for 16-bit elements; 8-bit elements too)
//   const T* a.ptr(mn, k)     address of element (m or n, k) of the operand tile in LDS
//   T a.at(mn, k)             its value
#pragma once

// Loads `count` elements of a fragment one by one: element i of `lane` is the view's element
// at the coordinate `coord(lane, i, mn, k)` returns. Works for any LDS layout and any atom.
template <class T, int COUNT, class View, class Coord>
__device__ inline void gt_frag_load_generic(T (&dst)[COUNT], const View& v, int mn0, int k0,
                                            int lane, Coord coord) {
#pragma unroll
    for (int i = 0; i < COUNT; ++i) {
        int mn, k;
        coord(lane, i, mn, k);
        dst[i] = v.at(mn0 + mn, k0 + k);
    }
}

// Dispatch: each vendor header defines `GtAtomFor<T, M, N, K, TB>::type`, the atom of the matrix
// instruction MxNxK for element type T (A; B's is TB), and fails to compile with a static_assert naming the
// valid shapes when there is none (only when a kernel uses it: the FMA path (MI 1x1x1) and the
// warpgroup path (MI 64x8x16 on sm_90a, atom/gt_sm90.h) never ask for one).
#if GT_VENDOR_AMD
#include "atom/gt_mma_amd.h"
#else
#include "atom/gt_mma_nvidia.h"
#endif
