// layout/gt_kpack_tile.h: the K-major LDS layout that an MN-contiguous operand is transposed
// into on its way from global memory (TransposeLDS, loader/gt_kpack_loader.h), so that the
// matrix-core atoms read it with the same K-contiguous vector reads as a K-contiguous operand
// (ds_read_b64 / ds_read_b128 on AMD, ldmatrix without .trans on NVIDIA) instead of gathering
// one element per read.
//
// K is cut into packs of 16 bytes (KPACK elements: 8 of a 16-bit type, 16 of an 8-bit one).
// Pack p holds, for every row mn of the tile, that row's KPACK consecutive k as one 16-byte
// chunk: [DU / KPACK][ROWS][KPACK], the "K0 x MN x K1" layout of Composable Kernel. The chunk
// of row r sits at slot r ^ ((r / 8) % 8) of its pack, a swizzle inside each group of 8 rows:
//   - the loader writes rows VEC apart from neighbouring lanes (each lane owns VEC
//     consecutive mn); without the swizzle rows 8 apart would land in the same banks;
//   - the atoms read consecutive rows, which the swizzle only permutes inside a group of
//     8 chunks (128 bytes), so those reads stay spread over all banks.
#pragma once

template <class T, int ROWS, int DU> struct GtKPackTile {
    typedef T Elem;
    static constexpr int ES = int(sizeof(T));
    static constexpr int KPACK = 16 / ES;
    static constexpr int ELEMS = ROWS * DU;
    static constexpr int BYTES = ELEMS * ES;
    // What the views ask of a "row": the run of one row inside a pack is a whole, aligned
    // 16-byte chunk.
    static constexpr int ROW_BYTES = 16;
    // The swizzle permutes whole groups of 8 rows; a tile of other heights keeps rows in order.
    static constexpr bool SWZ = ROWS % 8 == 0;
    static_assert(DU % KPACK == 0, "TransposeLDS needs DepthU in whole 16-byte packs of K");

    GT_DEVICE static int slot(int row) { return SWZ ? row ^ ((row >> 3) & 7) : row; }
    GT_DEVICE static int off(int row, int col) { return ((col / KPACK) * ROWS + slot(row)) * KPACK + col % KPACK; }
};
