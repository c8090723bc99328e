// layout/gt_sw128_tile.h: the LDS layout of a warpgroup-instruction (wgmma) operand tile,
// K-major with the 128-byte swizzle. It is what the instruction's matrix descriptors describe
// (atom/gt_sm90.h) and what a tensor map with 128-byte swizzle writes (loader/gt_tma_loader.h).
#pragma once

// The swizzle's row: 128 bytes of K; its period: 8 rows. Tiles start at a multiple of the
// period, because the hardware swizzles by shared-memory address.
constexpr int GT_SW128_ROW_BYTES = 128;
constexpr int GT_SW128_PERIOD = 1024;

// ROWS rows (m or n) of COLS elements of K, cut into slabs of 128 bytes of K: slab s holds
// columns [64s, 64s + 64) (16-bit elements) of every row, one 128-byte row after another, and
// 16-byte chunk c of row r sits at chunk c ^ (r % 8). That is the layout the descriptor's
// swizzle mode 1 reads and what a tensor map with 128-byte swizzle writes, one box of 64
// elements by ROWS per slab.
template <class T, int ROWS, int COLS> struct GtSw128Tile {
    typedef T Elem;
    static constexpr int ES = int(sizeof(T));
    static constexpr int SLAB_COLS = GT_SW128_ROW_BYTES / ES;
    static constexpr int SLAB_BYTES = ROWS * GT_SW128_ROW_BYTES;
    static constexpr int BYTES = (COLS / SLAB_COLS) * SLAB_BYTES;
    // Pitch seen by a vector loader: vectors never straddle a 16-byte chunk.
    static constexpr int ROW_BYTES = GT_SW128_ROW_BYTES;
    static constexpr int ELEMS = BYTES / ES;
    static_assert(ES == 2 && COLS % SLAB_COLS == 0 && ROWS % 8 == 0,
                  "wgmma tiles are 16-bit, whole 128-byte rows, whole 8-row groups");
    static_assert(SLAB_BYTES % GT_SW128_PERIOD == 0, "every slab keeps the swizzle period aligned");

    // Byte offset of (row, col); for a row that is a multiple of 8 and a col that is a multiple
    // of 8 this is also the logical address a descriptor starts at.
    GT_DEVICE static constexpr int byte_off(int row, int col) {
        return (col / SLAB_COLS) * SLAB_BYTES + row * GT_SW128_ROW_BYTES +
               ((((col % SLAB_COLS) * ES >> 4) ^ (row & 7)) << 4) + ((col % SLAB_COLS) * ES & 15);
    }
    GT_DEVICE static int off(int row, int col) { return byte_off(row, col) / ES; }
};
