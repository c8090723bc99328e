// layout/gt_wgmma_tile.h: the LDS layouts of warpgroup-instruction (wgmma) operand tiles: what
// the instruction's matrix descriptors describe (atom/gt_sm90.h) and what a tensor map with the
// same swizzle writes (loader/gt_tma_loader.h), box by box.
//
// K-major tiles (A with transA = T, B with transB = N, and every 8-bit or tf32 operand) keep rows of
// 128 bytes of K with the 128-byte swizzle. MN-major tiles (A with transA = N, B with
// transB = T, 16-bit only) keep rows of CHUNK elements along M or N, one row per k, with the
// swizzle as wide as the row (128, 64 or 32 bytes); the instruction reads them transposed.
// Either kind says where a descriptor starts (desc_off), the descriptor's constant fields, and
// which tensor-map boxes fill it.
#pragma once

// The swizzle's period: tiles start at a multiple of it, because the hardware swizzles by
// shared-memory address.
constexpr int GT_SW128_PERIOD = 1024;

// Descriptor swizzle mode (bits 62-63) of a swizzle as wide as `bytes`.
__host__ __device__ constexpr int gt_swizzle_mode(int bytes) { return bytes == 128 ? 1 : bytes == 64 ? 2 : 3; }

// ROWS rows (m or n) of COLS elements of K, cut into slabs of 128 bytes of K: slab s holds
// columns [s * SLAB_COLS, (s + 1) * SLAB_COLS) of every row, one 128-byte row after another, and
// 16-byte chunk c of row r sits at chunk c ^ (r % 8). A tensor-map box holds at most 256 rows:
// a slab is filled by ROW_BOXES boxes of BOX_ROWS rows (gt_box_rows), box j being rows
// [(j % ROW_BOXES) * BOX_ROWS, ...) of slab j / ROW_BOXES, at (k0 + slab * SLAB_COLS,
// mn0 + first row).
template <class T, int ROWS, int COLS> struct GtWgmmaKTile {
    typedef T Elem;
    static constexpr bool K_MAJOR = true;
    static constexpr int ES = int(sizeof(T));
    static constexpr int SLAB_COLS = 128 / ES;
    static constexpr int SLAB_BYTES = ROWS * 128;
    static constexpr int SLABS = COLS / SLAB_COLS;
    static constexpr int ROW_BOXES = (ROWS + 255) / 256, BOX_ROWS = ROWS / ROW_BOXES;
    static constexpr int BOXES = SLABS * ROW_BOXES;
    static constexpr int BYTES = SLABS * SLAB_BYTES;
    static_assert((ES == 4 || ES == 2 || ES == 1) && COLS % SLAB_COLS == 0 && ROWS % 8 == 0,
                  "K-major wgmma tiles are 8-, 16- or 32-bit (tf32), whole 128-byte rows, whole 8-row groups");
    static_assert(ROWS % ROW_BOXES == 0 && BOX_ROWS % 8 == 0,
                  "a tile of more than 256 rows splits into equal boxes of whole 8-row groups");
    static_assert(SLAB_BYTES % GT_SW128_PERIOD == 0, "every slab keeps the swizzle period aligned");
    // Descriptor: 8-row groups 1024 bytes apart (stride offset), leading offset unused (1).
    static constexpr gt_u32 DESC_HI = gt_u32(1024 >> 4) | (gt_u32(gt_swizzle_mode(128)) << 30);
    static constexpr gt_u32 DESC_LBO = 1;

    // Byte offset of (row, col); for a row that is a multiple of 8 and a col of a multiple of
    // 16 bytes this is also the logical address a descriptor starts at.
    GT_DEVICE static constexpr int byte_off(int row, int col) {
        return (col / SLAB_COLS) * SLAB_BYTES + row * 128 +
               ((((col % SLAB_COLS) * ES >> 4) ^ (row & 7)) << 4) + ((col % SLAB_COLS) * ES & 15);
    }
    GT_DEVICE static constexpr int desc_off(int mn, int k) { return byte_off(mn, k); }
    GT_DEVICE static constexpr int box_dst(int j) {
        return (j / ROW_BOXES) * SLAB_BYTES + (j % ROW_BOXES) * BOX_ROWS * 128;
    }
    GT_DEVICE static constexpr int box_c0(int j, int k0, int) { return k0 + (j / ROW_BOXES) * SLAB_COLS; }
    GT_DEVICE static constexpr int box_c1(int j, int, int mn0) { return mn0 + (j % ROW_BOXES) * BOX_ROWS; }
};

// ROWS (m or n, rounded up to whole chunks) by COLS of K, MN-major: chunk j holds elements
// [j * CHUNK, (j + 1) * CHUNK) along M or N as COLS rows of PITCH = CHUNK * 2 bytes, one per k,
// the 16-byte units of row k permuted by the swizzle of width PITCH. Tensor-map box j is chunk
// j: CHUNK elements by COLS, at (mn0 + j * CHUNK, k0). A descriptor start must be at a whole
// chunk along M or N and a multiple of 8 along K.
template <class T, int ROWS, int COLS, int CHUNK> struct GtWgmmaMnTile {
    typedef T Elem;
    static constexpr bool K_MAJOR = false;
    static constexpr int ES = int(sizeof(T));
    static constexpr int PITCH = CHUNK * ES;
    static constexpr int BOXES = (ROWS + CHUNK - 1) / CHUNK;
    static constexpr int CHUNK_BYTES = COLS * PITCH;
    static constexpr int BYTES = BOXES * CHUNK_BYTES;
    // Rows (k) of one chunk.
    static constexpr int DEPTH = COLS;
    static_assert(ES == 2, "the instruction reads only 16-bit operands transposed");
    static_assert(PITCH == 128 || PITCH == 64 || PITCH == 32, "MN-major chunks are 16, 32 or 64 elements");
    static_assert(COLS % 8 == 0 && CHUNK_BYTES % GT_SW128_PERIOD == 0,
                  "every chunk holds whole 8-row groups and keeps the swizzle period aligned");
    // Descriptor: chunks CHUNK_BYTES apart along M or N (leading offset), 8-row groups of k
    // 8 * PITCH bytes apart (stride offset).
    static constexpr gt_u32 DESC_HI = gt_u32((8 * PITCH) >> 4) | (gt_u32(gt_swizzle_mode(PITCH)) << 30);
    static constexpr gt_u32 DESC_LBO = gt_u32(CHUNK_BYTES >> 4);

    GT_DEVICE static constexpr int desc_off(int mn, int k) { return (mn / CHUNK) * CHUNK_BYTES + k * PITCH; }
    GT_DEVICE static constexpr int box_dst(int j) { return j * CHUNK_BYTES; }
    GT_DEVICE static constexpr int box_c0(int j, int, int mn0) { return mn0 + j * CHUNK; }
    GT_DEVICE static constexpr int box_c1(int, int k0, int) { return k0; }
};

// The tile of an operand: K-major, or MN-major in chunks of CHUNK elements (CHUNK = 0: K-major).
template <class T, int ROWS, int COLS, int CHUNK>
using GtWgmmaTile = typename GtPick<CHUNK == 0, GtWgmmaKTile<T, ROWS, COLS>,
                                    GtWgmmaMnTile<T, ROWS, COLS, (CHUNK > 0 ? CHUNK : 64)>>::type;

// The output tile as a tensor-map store reads it: D's MT0 x MT1 tile in D's type, M-major in
// chunks of 128 bytes along M (CE elements), each chunk MT1 rows of 128 bytes (one per n) with
// the 128-byte swizzle, so the lanes of a warpgroup that write 8 rows of m for four columns
// of n hit four different banks. A store box holds a chunk's rows n in boxes of at most 256.
template <class T, int MT0, int MT1> struct GtOutTile {
    static constexpr int ES = int(sizeof(T));
    static constexpr int CE = 128 / ES;
    static constexpr int CHUNKS = (MT0 + CE - 1) / CE;
    static constexpr int CHUNK_BYTES = MT1 * 128;
    static constexpr int BYTES = CHUNKS * CHUNK_BYTES;
    static constexpr int ROW_BOXES = (MT1 + 255) / 256, BOX_ROWS = MT1 / ROW_BOXES;
    static constexpr int BOXES = CHUNKS * ROW_BOXES;
    static_assert(MT1 % ROW_BOXES == 0 && BOX_ROWS % 8 == 0, "store boxes are whole 8-row groups");
    static_assert(CHUNK_BYTES % GT_SW128_PERIOD == 0, "every chunk keeps the swizzle period aligned");

    GT_DEVICE static int byte_off(int m, int n) {
        const int in = (m % CE) * ES;
        return (m / CE) * CHUNK_BYTES + n * 128 + ((((in >> 4) ^ (n & 7))) << 4) + (in & 15);
    }
    // Store box j: its LDS offset and its (m, n) origin relative to the tile's.
    GT_DEVICE static int box_src(int j) { return (j / ROW_BOXES) * CHUNK_BYTES + (j % ROW_BOXES) * BOX_ROWS * 128; }
    GT_DEVICE static int box_m(int j) { return (j / ROW_BOXES) * CE; }
    GT_DEVICE static int box_n(int j) { return (j % ROW_BOXES) * BOX_ROWS; }

    // An unswapped warpgroup thread's places (the epilogue's D, the C ring's C): its four
    // places of its warp's first 64-row slice and 8-column step (`Acc`: the mainloop whose
    // acc_coord lays out the accumulators; the warp's rows from `wm0`), and how far the same
    // place lies s slices and n8 columns (a multiple of 8) on: whole chunks of M and whole rows
    // of the layout, which leave the swizzle alone where the slices are whole chunks.
    template <class Acc> GT_DEVICE static void first_places(int lane, int wm0, int (&first)[4]) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            int m, n;
            Acc::acc_coord(lane, q, m, n);
            first[q] = byte_off(wm0 + m, n);
        }
    }
    GT_DEVICE static constexpr int place_step(int s, int n8) { return (64 * s / CE) * CHUNK_BYTES + n8 * 128; }
};
