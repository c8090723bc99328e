// loader/gt_flat_copy.h: one operand of a small batched GEMM copied into LDS as the flat range
// of memory it occupies, converted to f32 (the flat batch path, FlatBatch = 1). A batch of
// 17 x 17 f16 has rows of 34 bytes: a tile loader reads it element by element, each element's
// place formed and tested against the tile's bounds. The batch's elements are one contiguous
// range, though (from its first element to its last, with whatever lies between its rows where
// the leading dimension exceeds them), and that range is copied here in the 16-byte chunks of
// memory it lies in, with no bounds but the range's two ends: the mainloop
// (mainloop/gt_flat_batch.h) addresses the image with the leading dimension, as global memory
// is, an f32 for every element.
#pragma once

// The bytes an image of `n` elements of T takes: an f32 for every element of the range's 16-byte
// chunks, the first chunk starting up to 16 - sizeof(T) bytes before the range. codegen sizes
// the LDS with the same count (constraints::flat_image_bytes).
template <class T> GT_DEVICE int gt_flat_image_bytes(gt_i64 n) {
    constexpr int E = 16 / int(sizeof(T));
    return int(((n * gt_i64(sizeof(T)) + 15) / 16 + 1) * E * 4);
}

// A batch operand's flat range [src, src + n) as the 16-byte chunks of memory it lies in, for
// both flat copies (this and loader/gt_flat_scatter.h): the chunks wholly inside it from `lo`,
// `whole` of them, and the elements beside them, `head` before and `tail` after (at most
// 16 / sizeof(T) - 1 each; a range inside one chunk is all beside). Nothing outside the range
// is read.
template <class T> struct GtFlatRange {
    static constexpr gt_u64 Z = sizeof(T);
    gt_u64 at, lo, hi;
    int whole, head, tail;
    GT_DEVICE GtFlatRange(const T* src, gt_i64 n) {
        at = reinterpret_cast<gt_u64>(src);
        const gt_u64 end = at + gt_u64(n) * Z;
        const gt_u64 up = (at + 15) & ~gt_u64(15), down = end & ~gt_u64(15);
        lo = up < end ? up : end;
        hi = down > lo ? down : lo;
        whole = int((hi - lo) / 16);
        head = int((lo - at) / Z);
        tail = int((end - hi) / Z);
    }
    // The place in the range, in elements, of the e-th element beside the chunks.
    GT_DEVICE int beside(int e) const { return e < head ? e : int((hi - at) / Z) + e - head; }

    // Thread t of nt takes chunks t, t + nt, ... and hands each to `use` (its number and its
    // bytes), FLIGHT of them loaded before any is used. A wave alone on a batch walks many
    // chunks a lane (21 for 61 x 90 16-bit elements); loaded one at a time, each waited out a
    // memory latency before the next was asked for.
    template <int FLIGHT, class Use> GT_DEVICE void chunks(int t, int nt, Use use) const {
        typedef typename GtVec<16>::type Chunk;
        for (int c0 = t; c0 < whole; c0 += FLIGHT * nt) {
            Chunk v[FLIGHT];
#pragma unroll
            for (int u = 0; u < FLIGHT; ++u) {
                const int c = c0 + u * nt;
                if (c < whole) v[u] = gt_load_once<16>(reinterpret_cast<const void*>(lo + gt_u64(c) * 16));
            }
#pragma unroll
            for (int u = 0; u < FLIGHT; ++u) {
                const int c = c0 + u * nt;
                if (c < whole) use(c, v[u]);
            }
        }
    }
};

// Copies elements [src, src + n) into `dst` (LDS, 16-byte aligned) as f32, chunk for chunk: the
// c-th 16-byte chunk of global memory from the one src lies in becomes dst's c-th run of
// 16 / sizeof(T) floats. Converted once here, every element is read as it is by the
// multiply-adds (a 16-bit image converted each k took one instruction of every five of the 24x20
// tile's loop, sm_90a). The chunks wholly inside the range go as one 16-byte load each; then
// the elements beside them one a thread. Returns where src[0] lies in dst, in elements.
template <class T> GT_DEVICE int gt_copy_flat(const T* src, gt_i64 n, float* dst, int t, int nt) {
    typedef typename GtVec<16>::type Chunk;
    constexpr int E = 16 / int(sizeof(T));
    const GtFlatRange<T> r(src, n);
    // src[0]'s place in dst: its offset in the chunk it lies in.
    const int first = int(r.at % 16 / sizeof(T));
    r.template chunks<4>(t, nt, [&](int c, const Chunk& v) {
        float x[E];
        gt_unpack<T>(v, x);
        GtF4* const run = reinterpret_cast<GtF4*>(dst + first + r.head + c * E);
#pragma unroll
        for (int q = 0; q < E / 4; ++q) run[q] = GtF4{x[4 * q], x[4 * q + 1], x[4 * q + 2], x[4 * q + 3]};
    });
    for (int e = t; e < r.head + r.tail; e += nt) {
        const int i = r.beside(e);
        dst[first + i] = gt_to_f32(src[i]);
    }
    return first;
}
