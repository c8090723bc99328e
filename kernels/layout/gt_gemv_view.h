// layout/gt_gemv_view.h: which side of the problem a GEMV kernel runs along. The GEMV
// mainloops (mainloop/gt_gemv.h, mainloop/gt_gemv_mma.h) stream the rows of A against a few
// columns of B; with SwapAB they compute D^T = B^T A^T instead (M up to 8: a row vector or a
// few rows times a long matrix), and B is the matrix streamed. GtGemvView<Cfg, T> is the
// configuration they compute with (for T: B's element type and layout in A's place, A's in
// B's; a K-contiguous B, transB = N, is a K-contiguous A of the transpose), and its Sides
// reads the operands, sizes and leading dimensions out of the kernel's arguments, exchanged
// for T. They are read where they are used, not copied into a transposed GtGemmArgs: kernel
// arguments are operands of the instructions straight from the constant bank, while a copy
// lives in registers (it made ptxas spill 12 bytes at 40 registers on sm_90a, 1x4096x4096
// bf16). Read through a volatile reference instead, they spilled to scratch on gfx90a
// (hipcc copies the argument block whose address is taken) and were reloaded in every
// unrolled step on sm_90a.
#pragma once

template <bool T> struct GtGemvSides {
    GT_DEVICE static const void* a(const GtGemmArgs& g) { return T ? g.b : g.a; }
    GT_DEVICE static const void* b(const GtGemmArgs& g) { return T ? g.a : g.b; }
    GT_DEVICE static gt_i64 m(const GtGemmArgs& g) { return T ? g.n : g.m; }
    GT_DEVICE static gt_i64 n(const GtGemmArgs& g) { return T ? g.m : g.n; }
    GT_DEVICE static gt_i64 lda(const GtGemmArgs& g) { return T ? g.ldb : g.lda; }
    GT_DEVICE static gt_i64 ldb(const GtGemmArgs& g) { return T ? g.lda : g.ldb; }
    GT_DEVICE static gt_i64 stride_a(const GtGemmArgs& g) { return T ? g.stride_b : g.stride_a; }
    GT_DEVICE static gt_i64 stride_b(const GtGemmArgs& g) { return T ? g.stride_a : g.stride_b; }
};

template <class Cfg, bool T> struct GtGemvView : Cfg {
    typedef GtGemvSides<T> Sides;
    typedef typename GtPick<T, typename Cfg::TB, typename Cfg::TA>::type TA;
    typedef typename GtPick<T, typename Cfg::TA, typename Cfg::TB>::type TB;
    static constexpr bool TRANS_A = T ? !Cfg::TRANS_B : Cfg::TRANS_A;
    static constexpr bool TRANS_B = T ? !Cfg::TRANS_A : Cfg::TRANS_B;
};
