// layout/gt_flat_tile.h: one operand of a small batch in LDS for the flat batch path on matrix
// cores (FlatBatch = 1 with a MatrixInstruction), and the view the atoms read it through.
//
// The operand keeps its stored orientation: LINES lines (A's rows of m when it is
// K-contiguous, else its rows of k; B alike), each LEN elements, padded with zeros to whole
// matrix instructions (lines_p x len_p) and laid `pitch` elements apart. Every line starts on
// a 16-byte boundary, so the atoms read whole fragments (ldmatrix, or the plain or transposed
// form of it) whatever the batch's leading dimension; K past the batch's is zero in both
// operands, so the padded products add nothing.
#pragma once

struct GtFlatTile {
    int lines, len;      // as stored in the batch
    int lines_p, len_p;  // padded to the instruction's sides
    int pitch;           // elements from one line to the next

    // A line of len_p elements of `bytes` each (whole 16-byte chunks), laid an odd number of
    // chunks apart: the 8 lines one ldmatrix reads fall in 8 distinct groups of banks.
    GT_DEVICE static GtFlatTile make(int lines, int len, int lines_p, int len_p, int bytes) {
        const int chunks = len_p * bytes / 16;
        return GtFlatTile{lines, len, lines_p, len_p, (chunks | 1) * 16 / bytes};
    }
    GT_DEVICE int bytes(int elem_bytes) const { return lines_p * pitch * elem_bytes; }
};

// The view of a flat tile for the atoms (atom/gt_mma.h): element (mn, k), where mn is m for A
// and n for B; K_CONTIG when the lines run along K.
template <class T_, bool KC> struct GtFlatView {
    typedef T_ T;
    static constexpr bool K_CONTIG = KC;
    static constexpr bool ROWS_16B = true;
    const T* base;
    int pitch;
    GT_DEVICE const T* ptr(int mn, int k) const { return base + (KC ? mn * pitch + k : k * pitch + mn); }
    GT_DEVICE T at(int mn, int k) const { return *ptr(mn, k); }
};
