// loader/gt_flat_scatter.h: one operand of a small batched GEMM copied from the flat range of
// memory it occupies into a zero-padded LDS tile of whole matrix instructions (the flat batch
// path on matrix cores; layout/gt_flat_tile.h). The range is read as loader/gt_flat_copy.h
// reads it, whole 16-byte chunks with no bounds but the range's ends and the elements at the
// two ends one a thread; each element then goes to its line and place in the tile, kept in the
// input type (the atoms read 16-bit fragments), and the elements between lines (a leading
// dimension past them) nowhere. The padding is written with zeros by the same threads, so the
// tile is whole after one barrier.
#pragma once

// Puts the 16-bit elements of one 16-byte chunk of a batch operand's flat range at their lines
// and places in `out`: `w` the chunk's four words (low half of each first), `e` its first
// element's place in the range. A chunk inside one line's elements, as most chunks of a line
// longer than a chunk are, goes in one run; one across the end of a line (or of as many as it
// holds) element by element, the elements between lines nowhere.
GT_DEVICE void gt_flat_place(gt_u16* out, const GtFlatTile& s, int ld, int e, const gt_u32 (&w)[4]) {
    constexpr int E = 8;
    int r = e / ld, p = e - r * ld;
    if (p + E <= s.len) {
        gt_u16* const line = out + r * s.pitch + p;
#pragma unroll
        for (int q = 0; q < E; ++q) line[q] = gt_u16(w[q / 2] >> (q % 2 * 16));
        return;
    }
#pragma unroll
    for (int q = 0; q < E; ++q) {
        if (p < s.len) out[r * s.pitch + p] = gt_u16(w[q / 2] >> (q % 2 * 16));
        if (++p == ld) {
            p = 0;
            ++r;
        }
    }
}

// Puts element `e` of the range (one beside its whole chunks) at its line and place.
GT_DEVICE void gt_flat_place_one(gt_u16* out, const GtFlatTile& s, int ld, int e, gt_u16 bits) {
    const int r = e / ld, p = e - r * ld;
    if (p < s.len) out[r * s.pitch + p] = bits;
}

// Zeros in `out` wherever no element of the batch goes: past each line's end (a line a
// thread), then the lines past the batch's, in 16-byte chunks. The same places for every
// batch of a problem.
GT_DEVICE void gt_flat_zero_padding(gt_u16* out, const GtFlatTile& s, int t, int nt) {
    typedef typename GtVec<16>::type Chunk;
    constexpr int E = 8;
    for (int r = t; r < s.lines; r += nt)
        for (int p = s.len; p < s.len_p; ++p) out[r * s.pitch + p] = 0;
    const int chunks = s.len_p / E;
    for (int i = t; i < (s.lines_p - s.lines) * chunks; i += nt) {
        const int r = i / chunks;
        *reinterpret_cast<Chunk*>(out + (s.lines + r) * s.pitch + (i - r * chunks) * E) = gt_vec_zero<16>();
    }
}

// Elements [src, src + extent) of a batch operand stored as `s.lines` lines `ld` apart, each
// `s.len` long, into `tile` (LDS, 16-byte aligned); thread t of nt. 16-bit elements.
template <class T> GT_DEVICE void gt_scatter_flat(const T* src, const GtFlatTile& s, int ld, T* tile, int t, int nt) {
    static_assert(sizeof(T) == 2, "the flat tiles hold 16-bit elements");
    typedef typename GtVec<16>::type Chunk;
    gt_u16* const out = reinterpret_cast<gt_u16*>(tile);
    const GtFlatRange<T> range(src, (s.lines - 1) * gt_i64(ld) + s.len);
    range.template chunks<8>(t, nt, [&](int c, const Chunk& v) {
        // No memcpy for the words: NVRTC has no __builtin_memcpy.
        const gt_u32 w[4] = {v.x, v.y, v.z, v.w};
        gt_flat_place(out, s, ld, range.head + c * 8, w);
    });
    for (int i = t; i < range.head + range.tail; i += nt) {
        const int e = range.beside(i);
        gt_flat_place_one(out, s, ld, e, src[e].bits);
    }
    gt_flat_zero_padding(out, s, t, nt);
}
