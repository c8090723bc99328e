// loader/gt_flat_stage.h: one operand of a batch copied into LDS as it lies in memory, ahead of
// the batch being multiplied (the flat batch path's staged form, FlatBatch = 2). Its flat range's
// whole 16-byte chunks go by asynchronous copies (cp.async on sm_80+; a plain load and store
// elsewhere) into a staging area, chunk c at 16 c, and the few elements beside them (at most
// seven at each end) into one register of the first threads; nothing waits for them until the
// next batch begins. Then `place` puts each staged element at its line and place in the batch's
// padded tile (loader/gt_flat_scatter.h's gt_flat_place), from LDS. loader/gt_flat_scatter.h
// reads the range into registers and waits out its memory latency before the batch can begin;
// staged, the copies of one batch fly while the one before it multiplies and stores.
#pragma once

// LDS bytes a staging area of `n` elements of T takes (constraints::flat_stage_bytes on the
// host): its whole chunks are at most the range's bytes.
template <class T> GT_DEVICE int gt_flat_stage_bytes(gt_i64 n) { return int((n * gt_i64(sizeof(T)) + 15) / 16 * 16); }

template <class T> struct GtFlatStage {
    static_assert(sizeof(T) == 2, "the flat tiles hold 16-bit elements");
    const T* src;
    gt_i64 n;
    unsigned char* raw;

    // Starts the copies of the range [src, src + n) into `raw`; thread t of nt. A thread under
    // the range's head + tail also loads the element beside the chunks that is its own into
    // `edge` (nt is at least a wave, above the fourteen there can be).
    GT_DEVICE void issue(int t, int nt, gt_u16& edge) const {
        const GtFlatRange<T> r(src, n);
        for (int c = t; c < r.whole; c += nt)
            gt_copy_async<16>(raw + c * 16, reinterpret_cast<const void*>(r.lo + gt_u64(c) * 16), 16);
        if (t < r.head + r.tail) edge = src[r.beside(t)].bits;
    }

    // After the copies have landed (gt_copy_wait, then a barrier): every element of the range
    // at its line and place in `tile`, from the staging area and the threads' `edge`.
    GT_DEVICE void place(const GtFlatTile& s, int ld, gt_u16* tile, int t, int nt, gt_u16 edge) const {
        typedef typename GtVec<16>::type Chunk;
        const GtFlatRange<T> r(src, n);
        for (int c = t; c < r.whole; c += nt) {
            const Chunk v = *reinterpret_cast<const Chunk*>(raw + c * 16);
            const gt_u32 w[4] = {v.x, v.y, v.z, v.w};
            gt_flat_place(tile, s, ld, r.head + c * 8, w);
        }
        if (t < r.head + r.tail) gt_flat_place_one(tile, s, ld, r.beside(t), edge);
    }
};
