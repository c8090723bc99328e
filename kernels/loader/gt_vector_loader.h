// loader/gt_vector_loader.h: global -> LDS operand loads in vectors of GlobalReadVectorWidth
// elements, each thread moving its share of a tile (the stage loader that calls it for both
// operands: loader/gt_register_loader.h). On sm_80+ a vector travels by cp.async
// (completed by the mainloop's commit/wait), elsewhere (AMD, older NVIDIA) by a load and an
// LDS store, so the mainloop has one shape everywhere. Elements outside the matrix are
// zero-filled, so the compute loop never tests bounds; tiles entirely inside the matrix take a
// load path without any bounds test.
#pragma once

// How THREADS threads share a ROWS x COLS tile (stored orientation) in vectors of VEC elements,
// and how a vector lands in LDS: as pieces of PIECE bytes, the largest power of two dividing
// both the vector and the LDS row pitch, so every piece is aligned whatever the padding (a
// 16-byte vector into rows padded by 8 bytes moves as two 8-byte pieces).
template <class Tile, int ROWS, int COLS, int VEC, int THREADS> struct GtTileVectors {
    typedef typename Tile::Elem T;
    static constexpr int ES = int(sizeof(T));
    static constexpr int VEC_BYTES = VEC * ES;
    static constexpr int PIECE = gt_min(gt_pow2_factor(VEC_BYTES), gt_pow2_factor(Tile::ROW_BYTES));
    static constexpr int PIECES = VEC_BYTES / PIECE;
    static constexpr int VPR = COLS / VEC;
    static constexpr int TOTAL = ROWS * VPR;
    static_assert(COLS % VEC == 0, "a tile row must hold whole vectors");
    // When the vectors do not divide evenly among the threads, the last round is partial.
    static constexpr int ROUNDS = (TOTAL + THREADS - 1) / THREADS;
    static constexpr bool EVEN = TOTAL % THREADS == 0;

    // Copies the vector at (r, c) of the tile from `src`, of which `valid` bytes are read (the
    // rest zero-filled), into its place in `lds`, piece by piece.
    GT_DEVICE static void copy(T* lds, int r, int c, const T* src, int valid) {
#pragma unroll
        for (int p = 0; p < PIECES; ++p) {
            T* dst = lds + Tile::off(r, c + p * PIECE / ES);
            const char* s = reinterpret_cast<const char*>(src) + (valid > p * PIECE ? p * PIECE : 0);
            const int left = valid - p * PIECE;
            const int sb = left <= 0 ? 0 : (left >= PIECE ? PIECE : left);
            gt_copy_async<PIECE>(dst, s, sb);
        }
    }
};

// gt_load_tile for vectors under 4 bytes (rows off the 4-byte grid: 2-byte vectors of a
// 33 x 33 f16 batch), where each thread moves many vectors: its first vector's place and
// address are formed once, and each round steps them by the THREADS vectors between its
// rounds (DR rows and DC columns, one row more where the columns pass the tile's width),
// tested against the tile's limits as counts of its own rows and columns. Formed afresh
// each round (a division by the row's vectors and a 64-bit multiply-add against the 64-bit
// limits), a 2-byte vector took 18 to 28 instructions to move (sm_90a, 48x48 tile of a
// 33x33x33 f16 batch on two warps); stepped, 6 to 27. On an H200, 17x17x17 x50000 ran 181.2
// us against 235.9, 33x33x33 x10000 NN f16 102.9 against 114.8. Not for 4-byte vectors:
// f32 batches of 33 and 45 on the FMA path ran 5% slower stepped.
template <class Tile, int ROWS, int COLS, int VEC, bool GUARD, int THREADS>
GT_DEVICE void gt_load_tile_stepped(typename Tile::Elem* lds, const typename Tile::Elem* g, gt_i64 ld, int row0,
                                    int col0, gt_i64 row_lim, gt_i64 col_lim, int tid) {
    typedef GtTileVectors<Tile, ROWS, COLS, VEC, THREADS> Vs;
    typedef typename Vs::T T;
    constexpr int VPR = Vs::VPR, ROUNDS = Vs::ROUNDS;
    constexpr int DR = THREADS / VPR, DC = (THREADS % VPR) * VEC;
    int r = tid / VPR, c = (tid % VPR) * VEC;
    const T* src = g + (gt_i64)(row0 + r) * ld + (col0 + c);
    const gt_i64 step = DR * ld + DC, wrap = ld - COLS;
    int rows_in = ROWS, cols_in = COLS;
    if constexpr (GUARD) {
        const gt_i64 rl = row_lim - row0, cl = col_lim - col0;
        rows_in = rl < ROWS ? (rl > 0 ? int(rl) : 0) : ROWS;
        cols_in = cl < COLS ? (cl > 0 ? int(cl) : 0) : COLS;
    }
#pragma unroll 4
    for (int i = 0; i < ROUNDS; ++i) {
        if (!Vs::EVEN && tid + i * THREADS >= Vs::TOTAL) break;
        int valid = Vs::VEC_BYTES;
        if constexpr (GUARD) {
            const int left = cols_in - c;
            valid = (r < rows_in && left > 0) ? (left < VEC ? left : VEC) * Vs::ES : 0;
        }
        // Nothing is read where nothing is valid; the address stays inside the buffer.
        Vs::copy(lds, r, c, GUARD && valid == 0 ? g : src, valid);
        r += DR;
        c += DC;
        src += step;
        if (DC != 0 && c >= COLS) {
            c -= COLS;
            ++r;
            src += wrap;
        }
    }
}

// Moves one ROWS x COLS tile (stored orientation) at (row0, col0) of `g` (leading dimension
// `ld`, row_lim x col_lim valid) into `lds`. Each of THREADS threads moves TOTAL / THREADS
// vectors of VEC elements (GtTileVectors).
template <class Tile, int ROWS, int COLS, int VEC, bool GUARD, int THREADS>
GT_DEVICE void gt_load_tile(typename Tile::Elem* lds, const typename Tile::Elem* g, gt_i64 ld,
                            int row0, int col0, gt_i64 row_lim, gt_i64 col_lim, int tid) {
    typedef GtTileVectors<Tile, ROWS, COLS, VEC, THREADS> Vs;
    typedef typename Vs::T T;
    constexpr int ES = Vs::ES, VEC_BYTES = Vs::VEC_BYTES, VPR = Vs::VPR, TOTAL = Vs::TOTAL;
    constexpr int ROUNDS = Vs::ROUNDS;
    constexpr bool EVEN = Vs::EVEN;
    if constexpr (VEC_BYTES < 4) {
        gt_load_tile_stepped<Tile, ROWS, COLS, VEC, GUARD, THREADS>(lds, g, ld, row0, col0, row_lim, col_lim, tid);
        return;
    }
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
        // Written out rather than through GtTileVectors::copy: through it, nvcc scheduled this
        // loop otherwise (sm_90a: the 64x64x32 mma.sync tile on 8-byte vectors took 128
        // registers for 127, the 48x48x8 f32 FMA tile 72 for 68), and these kernels' times
        // were measured with the loop as it is.
#pragma unroll
        for (int p = 0; p < Vs::PIECES; ++p) {
            T* dst = lds + Tile::off(r, c + p * Vs::PIECE / ES);
            const char* s = reinterpret_cast<const char*>(src) + (valid > p * Vs::PIECE ? p * Vs::PIECE : 0);
            const int left = valid - p * Vs::PIECE;
            const int sb = left <= 0 ? 0 : (left >= Vs::PIECE ? Vs::PIECE : left);
            gt_copy_async<Vs::PIECE>(dst, s, sb);
        }
    }
}
