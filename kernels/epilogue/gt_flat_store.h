// epilogue/gt_flat_store.h: the flat batch path's store (scheduler/gt_flat_batches.h). A lane's
// totals of one batch form a grid, Mainloop::ROWS rows by Mainloop::COLS columns of D
// (Mainloop::row, ::col; accumulator Mainloop::index(i, j)): the FMA multiply's lane sub-tile
// or the matrix instructions' accumulators. Column by column, each column's place in D (and
// C) formed once, D = alpha * total (+ beta * C) a row at a time, rows and columns past the
// batch left out; with beta, C read a group of columns ahead of their stores. (Through gt_store_total each total formed its place anew in 64-bit
// arithmetic and tested it against M and N: 15 stores of a 24x20 FMA tile took 390
// instructions, sm_90a.)
#pragma once

template <class Cfg, class Mainloop>
GT_DEVICE void gt_flat_store(const GtGemmArgs& args, gt_i64 batch, int lane, const float (&acc)[Mainloop::ACC]) {
    typedef typename Cfg::TD TD;
    typedef typename Cfg::TC TC;
    TD* const d = reinterpret_cast<TD*>(args.d) + batch * args.stride_d;
    const TC* const c = reinterpret_cast<const TC*>(args.c) + batch * args.stride_c;
    const int m = int(args.m), n = int(args.n);
    // Columns in groups of CG, each group's C read before any of its D is stored: C and D may
    // be one buffer, so a read of C cannot pass an earlier store, and read a total at a time
    // each waited out a memory latency (130 x 70 x 110 x1000 TT bf16 with beta 0.5 on the
    // staged form, 192 x 80 on eight waves: 167.5 -> 91.0 us; H200). On FMAs, whose lanes
    // hold few totals, four columns ahead lost (33^3 x10000 TT bf16, beta 1: 75.7 -> 83.0):
    // a column at a time. At most 24 values of C ahead, and a column where a lane holds more
    // than 96 accumulators: 112 spilled with 56 ahead, 104 with 16 (sm_90a).
    constexpr int COLS = Mainloop::COLS, ROWS = Mainloop::ROWS;
    constexpr int AHEAD = Mainloop::ACC > 96 || 24 / ROWS < 1 ? 1 : (24 / ROWS < 4 ? 24 / ROWS : 4);
    constexpr int CG = Cfg::BETA_ZERO || !Cfg::USE_MMA ? 1 : (COLS < AHEAD ? COLS : AHEAD);
#pragma unroll
    for (int j0 = 0; j0 < COLS; j0 += CG) {
        float cv[CG][ROWS];
        if constexpr (!Cfg::BETA_ZERO) {
#pragma unroll
            for (int g = 0; g < CG; ++g) {
                const int col = j0 + g < COLS ? Mainloop::col(lane, j0 + g) : n;
#pragma unroll
                for (int i = 0; i < ROWS; ++i) {
                    const int row = Mainloop::row(lane, i);
                    cv[g][i] = col < n && row < m ? gt_to_f32(c[col * args.ldc + row]) : 0.0f;
                }
            }
        }
#pragma unroll
        for (int g = 0; g < CG; ++g) {
            if (j0 + g >= COLS) continue;
            const int col = Mainloop::col(lane, j0 + g);
            if (col >= n) continue;
            TD* const dc = d + col * args.ldd;
#pragma unroll
            for (int i = 0; i < ROWS; ++i) {
                const int row = Mainloop::row(lane, i);
                if (row >= m) continue;
                float y = args.alpha * acc[Mainloop::index(i, j0 + g)];
                if constexpr (!Cfg::BETA_ZERO) y += args.beta * cv[g][i];
                dc[row] = gt_from_f32<TD>(y);
            }
        }
    }
}
