// loader/gt_vector_loader.h: global -> LDS operand loads in vectors of GlobalReadVectorWidth
// elements, each thread moving its share of a tile (the stage loader that calls it for both
// operands: loader/gt_register_loader.h). On sm_80+ a vector travels by cp.async
// (completed by the mainloop's commit/wait), elsewhere (AMD, older NVIDIA) by a load and an
// LDS store, so the mainloop has one shape everywhere. Elements outside the matrix are
// zero-filled, so the compute loop never tests bounds; tiles entirely inside the matrix take a
// load path without any bounds test.
#pragma once

// Moves one ROWS x COLS tile (stored orientation) at (row0, col0) of `g` (leading dimension
// `ld`, row_lim x col_lim valid) into `lds`. Each of THREADS threads moves TOTAL / THREADS
// vectors of VEC elements. A vector lands in LDS as pieces of PIECE bytes: the largest power of
// two dividing both the vector and the LDS row pitch, so every piece is aligned whatever the
// padding (a 16-byte vector into rows padded by 8 bytes moves as two 8-byte pieces).
template <class Tile, int ROWS, int COLS, int VEC, bool GUARD, int THREADS>
GT_DEVICE void gt_load_tile(typename Tile::Elem* lds, const typename Tile::Elem* g, gt_i64 ld,
                            int row0, int col0, gt_i64 row_lim, gt_i64 col_lim, int tid) {
    typedef typename Tile::Elem T;
    constexpr int ES = int(sizeof(T));
    constexpr int VEC_BYTES = VEC * ES;
    constexpr int PIECE = gt_min(gt_pow2_factor(VEC_BYTES), gt_pow2_factor(Tile::ROW_BYTES));
    constexpr int PIECES = VEC_BYTES / PIECE;
    constexpr int VPR = COLS / VEC;
    constexpr int TOTAL = ROWS * VPR;
    static_assert(COLS % VEC == 0, "a tile row must hold whole vectors");
    // When the vectors do not divide evenly among the threads, the last round is partial.
    constexpr int ROUNDS = (TOTAL + THREADS - 1) / THREADS;
    constexpr bool EVEN = TOTAL % THREADS == 0;
    // Partly unrolled: narrow vectors mean many loads per thread, and fully unrolling them
    // would keep every address live in registers at once.
#pragma unroll 4
    for (int i = 0; i < ROUNDS; ++i) {
        const int v = tid + i * THREADS;
        if (!EVEN && v >= TOTAL) break;
        const int r = v / VPR;
        const int c = (v % VPR) * VEC;
        const T* src = g + (gt_i64)(row0 + r) * ld + (col0 + c);
        int valid = VEC_BYTES;
        if (GUARD) {
            const gt_i64 left = col_lim - (gt_i64)(col0 + c);
            valid = (row0 + r < row_lim && left > 0)
                        ? int(left < VEC ? left : VEC) * ES
                        : 0;
            if (valid == 0) src = g;  // nothing is read; keep the address inside the buffer
        }
#pragma unroll
        for (int p = 0; p < PIECES; ++p) {
            T* dst = lds + Tile::off(r, c + p * PIECE / ES);
            const char* s = reinterpret_cast<const char*>(src) + (valid > p * PIECE ? p * PIECE : 0);
            const int left = valid - p * PIECE;
            const int sb = left <= 0 ? 0 : (left >= PIECE ? PIECE : left);
            gt_copy_async<PIECE>(dst, s, sb);
        }
    }
}
