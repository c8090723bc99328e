// loader/gt_flat_scatter.h: one operand of a small batched GEMM copied from the flat range of
// memory it occupies into a zero-padded LDS tile of whole matrix instructions (the flat batch
// path on matrix cores; layout/gt_flat_tile.h). The range is read as loader/gt_flat_copy.h
// reads it, whole 16-byte chunks with no bounds but the range's ends and the elements at the
// two ends one a thread; each element then goes to its line and place in the tile, kept in the
// input type (the atoms read 16-bit fragments), and the elements between lines (a leading
// dimension past them) nowhere. The padding is written with zeros by the same threads, so the
// tile is whole after one barrier.
#pragma once

// Elements [src, src + extent) of a batch operand stored as `s.lines` lines `ld` apart, each
// `s.len` long, into `tile` (LDS, 16-byte aligned); thread t of nt. 16-bit elements.
template <class T> GT_DEVICE void gt_scatter_flat(const T* src, const GtFlatTile& s, int ld, T* tile, int t, int nt) {
    static_assert(sizeof(T) == 2, "the flat tiles hold 16-bit elements");
    typedef typename GtVec<16>::type Chunk;
    constexpr int E = 8;
    gt_u16* const out = reinterpret_cast<gt_u16*>(tile);
    const GtFlatRange<T> range(src, (s.lines - 1) * gt_i64(ld) + s.len);
    range.template chunks<8>(t, nt, [&](int c, const Chunk& v) {
        // The chunk's 16-bit elements, low half of each word first (no memcpy: NVRTC has no
        // __builtin_memcpy).
        const gt_u32 w[4] = {v.x, v.y, v.z, v.w};
        // The chunk's first element: line r, place p.
        const int e = range.head + c * E;
        int r = e / ld, p = e - r * ld;
        if (p + E <= s.len) {
            // Inside one line's elements, as most chunks of a line longer than a chunk are.
            gt_u16* const line = out + r * s.pitch + p;
#pragma unroll
            for (int q = 0; q < E; ++q) line[q] = gt_u16(w[q / 2] >> (q % 2 * 16));
            return;
        }
        // Across the end of a line, or of as many as the chunk holds.
#pragma unroll
        for (int q = 0; q < E; ++q) {
            if (p < s.len) out[r * s.pitch + p] = gt_u16(w[q / 2] >> (q % 2 * 16));
            if (++p == ld) {
                p = 0;
                ++r;
            }
        }
    });
    for (int i = t; i < range.head + range.tail; i += nt) {
        const int e = range.beside(i);
        const int r = e / ld, p = e - r * ld;
        if (p < s.len) out[r * s.pitch + p] = src[e].bits;
    }
    // Zeros past each line's end (a line a thread), then the lines past the batch's, in
    // 16-byte chunks.
    for (int r = t; r < s.lines; r += nt)
        for (int p = s.len; p < s.len_p; ++p) out[r * s.pitch + p] = 0;
    const int chunks = s.len_p / E;
    for (int i = t; i < (s.lines_p - s.lines) * chunks; i += nt) {
        const int r = i / chunks;
        *reinterpret_cast<Chunk*>(out + (s.lines + r) * s.pitch + (i - r * chunks) * E) = gt_vec_zero<16>();
    }
}
