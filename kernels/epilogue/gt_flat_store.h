// epilogue/gt_flat_store.h: the flat batch path's store (scheduler/gt_flat_batches.h). A lane's
// totals of one batch form a grid, Mainloop::ROWS rows by Mainloop::COLS columns of D
// (Mainloop::row, ::col; accumulator Mainloop::index(i, j)): the FMA multiply's lane sub-tile
// or the matrix instructions' accumulators. Column by column, each column's place in D (and
// C) formed once, D = alpha * total (+ beta * C) a row at a time, rows and columns past the
// batch left out. (Through gt_store_total each total formed its place anew in 64-bit
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
#pragma unroll
    for (int j = 0; j < Mainloop::COLS; ++j) {
        const int col = Mainloop::col(lane, j);
        if (col >= n) continue;
        TD* const dc = d + col * args.ldd;
        const TC* const cc = c + col * args.ldc;
#pragma unroll
        for (int i = 0; i < Mainloop::ROWS; ++i) {
            const int row = Mainloop::row(lane, i);
            if (row >= m) continue;
            float y = args.alpha * acc[Mainloop::index(i, j)];
            if constexpr (!Cfg::BETA_ZERO) y += args.beta * gt_to_f32(cc[row]);
            dc[row] = gt_from_f32<TD>(y);
        }
    }
}
