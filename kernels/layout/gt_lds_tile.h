// layout/gt_lds_tile.h: the shared-memory (LDS) layout of one operand tile for the loaders
// that write it with vectors (cp.async, plain loads) and the atoms that read it, and the view
// through which the atoms and the FMA loop address it by (mn, k) whatever its orientation.
//
// A tile is kept in its global orientation: ROWS rows along the operand's strided dimension,
// each row contiguous along the stored leading dimension, plus PAD elements of padding or an
// XOR swizzle of 16-byte chunks. So a global vector is one contiguous LDS write; the atoms read
// transposed when they need to (ldmatrix .trans), or, with TransposeLDS, an M- or N-contiguous
// operand is stored K-major instead (layout/gt_kpack_tile.h).
#pragma once

// ROWS rows of COLS contiguous elements (+ PAD). With SWZ, the 16-byte chunks of row r are
// permuted by XOR with r modulo SPAN (the largest power of two <= 8 that divides the chunks per
// row), which spreads the rows an ldmatrix reads together over distinct banks.
template <class T, int ROWS, int COLS, int PAD, bool SWZ> struct GtLdsTile {
    typedef T Elem;
    static constexpr int LD = COLS + PAD;
    static constexpr int ELEMS = ROWS * LD;
    static constexpr int BYTES = ELEMS * int(sizeof(T));
    static constexpr int ROW_BYTES = LD * int(sizeof(T));
    static constexpr int CHUNKS = COLS * int(sizeof(T)) / 16;
    static constexpr int SPAN = SWZ ? gt_min(gt_pow2_factor(CHUNKS > 0 ? CHUNKS : 1), 8) : 1;
    // Without the swizzle an element's offset is linear in its row and column, so a reader
    // can step from one element to another by a constant.
    static constexpr bool LINEAR = !SWZ;
    static_assert(!SWZ || (PAD == 0 && COLS * sizeof(T) % 16 == 0),
                  "the LDS swizzle needs unpadded rows of whole 16-byte chunks");
    static_assert(BYTES % 16 == 0, "every LDS tile must keep the next one 16-byte aligned");

    GT_DEVICE static int off(int row, int col) {
        if (SWZ) {
            const int byte = col * int(sizeof(T));
            const int chunk = (byte >> 4) ^ (row & (SPAN - 1));
            return row * LD + ((chunk << 4) | (byte & 15)) / int(sizeof(T));
        }
        return row * LD + col;
    }
};

// The tile of operand A (transA = T: K-contiguous rows of m; else M-contiguous rows of k) and
// of B (transB = N: K-contiguous rows of n; else N-contiguous rows of k).
template <class Cfg>
using GtLdsTileA = GtLdsTile<typename Cfg::TA, Cfg::TRANS_A ? Cfg::MT0 : Cfg::DU,
                             Cfg::TRANS_A ? Cfg::DU : Cfg::MT0, Cfg::LPA, Cfg::SWIZZLE>;
template <class Cfg>
using GtLdsTileB = GtLdsTile<typename Cfg::TB, Cfg::TRANS_B ? Cfg::DU : Cfg::MT1,
                             Cfg::TRANS_B ? Cfg::MT1 : Cfg::DU, Cfg::LPB, Cfg::SWIZZLE>;

// The view of an operand tile the atoms and the FMA loop read: element (mn, k), where mn is
// m for A and n for B, whatever the LDS orientation.
template <class Tile, bool KC> struct GtView {
    typedef Tile Layout;
    typedef typename Tile::Elem T;
    static constexpr bool K_CONTIG = KC;
    static constexpr bool ROWS_16B = sizeof(T) <= 2 && Tile::ROW_BYTES % 16 == 0;
    const T* base;
    GT_DEVICE const T* ptr(int mn, int k) const {
        return base + (KC ? Tile::off(mn, k) : Tile::off(k, mn));
    }
    GT_DEVICE T at(int mn, int k) const { return *ptr(mn, k); }
};
