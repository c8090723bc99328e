// epilogue/gt_fixup.h: output tiles shared between workgroups. Contributors lo..hi (stream-K
// workgroups, or the splits of a GSU<n>K tile) each hold an f32 partial of one output tile.
// Each writes its own to its workspace slot and counts itself in the tile's flag; the one that
// sees the count complete adds the partials in contributor order (deterministic: the same sum
// whichever finishes last), leaves the sum in its staging tile and resets the flag to zero, so
// the flags are clean for the next launch. Nobody waits for anybody: no deadlock whatever the
// number of workgroups resident at once.
//
//   GtSharedTile        partials staged as an f32 tile in LDS (the stream-K kernel, GSU<n>K)
//   GtRegisterPartials  partials straight from and into the accumulator registers (the
//                       persistent kernel's stream-K, NVIDIA), whose LDS holds the operand
//                       ring and D's staging
#pragma once

// Counts one more part of a tile in its `flag`, once every thread's part is out, and says
// whether it was the last of `count`. The barrier `sync` orders every thread's part before
// thread 0's device-scope fence, which publishes them all before the count (and, after it,
// makes the others' visible here); `last` is the LDS word the answer passes through.
template <class Sync> GT_DEVICE bool gt_count_part(gt_u32* flag, gt_u32 count, int tid, int* last, Sync sync) {
    sync();
    if (tid == 0) {
        gt_fence_device();
        const gt_u32 before = gt_atomic_add_u32(flag, 1u);
        gt_fence_device();
        *last = before + 1 == count;
    }
    sync();
    return *last;
}

template <class Cfg> struct GtSharedTile {
    static constexpr int THREADS = Cfg::THREADS;
    static constexpr int TILE_VECS = Cfg::MT0 * Cfg::MT1 / 4;
    static_assert(Cfg::MT0 * Cfg::MT1 % 4 == 0, "partial tiles move in 16-byte vectors");
    // Vectors of the tile one thread sums per pass: all of a pass's loads of one partial are
    // in flight together, so a pass costs one L2 round trip per contributor, not one per vector.
    static constexpr int FIX_VECS = gt_min((TILE_VECS + THREADS - 1) / THREADS, 8);

    GT_DEVICE static void add(GtF4& s, const GtF4& v) {
        s.x += v.x;
        s.y += v.y;
        s.z += v.z;
        s.w += v.w;
    }

    // Finishes the staged partial tile `ctile` of contributor `me`; `slot(c)` is contributor
    // c's workspace slot. Returns whether this workgroup was the last contributor, in which
    // case `ctile` now holds the complete sum. Every thread of the launch calls it (a producer
    // warp only takes part in the barriers).
    template <class Slot>
    GT_DEVICE static bool finish(float* ctile, Slot slot, gt_u32* flag, gt_u32 lo, gt_u32 hi, gt_u32 me, int tid,
                                 int* last_flag) {
        GtF4* const staged = reinterpret_cast<GtF4*>(ctile);
        if (tid < THREADS) {
            GtF4* const mine = slot(me);
            for (int i = tid; i < TILE_VECS; i += THREADS) mine[i] = staged[i];
        }
        if (!gt_count_part(flag, hi - lo + 1, tid, last_flag, [] { gt_barrier(); })) return false;
        for (int base = 0; tid < THREADS && base < TILE_VECS; base += FIX_VECS * THREADS) {
            GtF4 sum[FIX_VECS];
#pragma unroll
            for (int j = 0; j < FIX_VECS; ++j) sum[j] = GtF4{0.0f, 0.0f, 0.0f, 0.0f};
            // This workgroup's own partial is read back from LDS.
            for (gt_u32 c = lo; c <= hi; ++c) {
                const GtF4* src = c == me ? staged : slot(c);
                GtF4 v[FIX_VECS];
#pragma unroll
                for (int j = 0; j < FIX_VECS; ++j) {
                    const int i = base + tid + j * THREADS;
                    if (i < TILE_VECS) v[j] = src[i];
                }
#pragma unroll
                for (int j = 0; j < FIX_VECS; ++j)
                    if (base + tid + j * THREADS < TILE_VECS) add(sum[j], v[j]);
            }
            // Every thread reads and writes only its own vectors of the staging tile.
#pragma unroll
            for (int j = 0; j < FIX_VECS; ++j) {
                const int i = base + tid + j * THREADS;
                if (i < TILE_VECS) staged[i] = sum[j];
            }
        }
        if (tid == 0) *flag = 0u;
        gt_barrier();
        return true;
    }

    // GSU<n>K: finishes this split's staged partial of output tile `tile` (linear over the
    // batch): split c's slot is the c-th of the tile's GSU consecutive ones.
    GT_DEVICE static bool finish_split(const GtGemmArgs& args, float* ctile, gt_u32 tile, int split, int tid,
                                       int* last_flag) {
        GtF4* const first = reinterpret_cast<GtF4*>(args.workspace) + gt_i64(tile) * Cfg::GSU * TILE_VECS;
        auto slot = [&](gt_u32 c) { return first + gt_i64(c) * TILE_VECS; };
        return finish(ctile, slot, args.flags + tile, 0u, gt_u32(Cfg::GSU - 1), gt_u32(split), tid, last_flag);
    }
};

#if !GT_VENDOR_AMD
// The persistent kernel's stream-K (scheduler/gt_persistent.h, NVIDIA): a tile split among
// contributors lo..hi (lo holds its first K tiles) meets in the workspace, one slot per part.
// A part goes there straight from the accumulator registers (element j of thread t at
// ((j / 4) * THREADS + t) * 4 + j % 4: one 16-byte vector a thread and four elements, each
// warp's 512 bytes contiguous), and the one that completes the tile adds the others' parts
// to its accumulators through the epilogue's staging area: the bulk-copy engine brings the
// parts in chunks, into two halves of the area in turn (one filling while the other is
// added), and each thread reads its own vectors back. Registers could not
// take them: with 128 accumulators a consumer thread has almost nothing beside them of its
// 168, and adding parts straight from global memory, few loads in flight, ran 3 x 1000^3 in
// 68 us against 25 on whole tiles (H100).
//
//   the first or last contributor, every other part in: add them, store the tile (the
//      common case: a range walks its parts of tiles last, scheduler/gt_tile_walk.h)
//   else: store it, count it in the tile's flag; the last to arrive adds the others' parts
//      and stores the tile
//
// Nobody waits for anybody. Which one completes a tile can change from run to run, and with
// it the order of the sums: with three or more parts the last bits of D may then differ
// between runs, as with the atomic split-K (GSU<n>A). Adding every part into one L2 sum with
// vector reductions instead (the last loading it) ran 3072^3 in 97.3 us on an H200: the
// reductions came in bursts on every compute unit at once and stalled the consumers
// (lg_throttle and the flag's barrier, 14% of the warp samples).
__host__ __device__ constexpr int gt_part_chunk(int vecs, int most) {
    return most <= 1 ? 1 : vecs % most == 0 ? most : gt_part_chunk(vecs, most - 1);
}

template <int ACC, int THREADS, int AREA_BYTES> struct GtRegisterPartials {
    static_assert(ACC % 4 == 0, "parts move in vectors of four accumulators");
    static constexpr int VECS = ACC / 4;
    // The staging area in two buffers, one filling while the other is added, where a buffer
    // holds a vector per thread; else one.
    static constexpr int BUFS = AREA_BYTES / 2 >= THREADS * 16 ? 2 : 1, BUF_BYTES = AREA_BYTES / BUFS;
    // Vectors per thread in one buffer.
    static constexpr int PER = gt_part_chunk(VECS, BUF_BYTES / (THREADS * 16));
    static constexpr int CHUNK_BYTES = PER * THREADS * 16;
    static_assert(PER >= 1 && BUF_BYTES >= CHUNK_BYTES, "a chunk fits a buffer of the staging area");

    // `slot(c)`: part c's slot; `sync()`: a barrier of the THREADS consumers, who alone call
    // this; `reclaim()`: waits until this thread's stores of the staging area `area` have
    // read it; `bars`: BUFS mbarriers of one arrival (8 bytes apart), whose next phases'
    // parities are the bits of `phases`. Returns whether this workgroup completed the tile,
    // which `acc` then holds whole.
    template <class Slot, class Sync, class Reclaim>
    GT_DEVICE static bool finish(float (&acc)[ACC], Slot slot, gt_u32* flag, gt_u32 lo, gt_u32 hi, gt_u32 me, int tid,
                                 int* last, Sync sync, Reclaim reclaim, unsigned char* area, gt_u32 bars,
                                 gt_u32& phases) {
        // Where the others have all counted themselves, nobody else can: this part is the
        // last, and need not go through the workspace. Only the first and the last
        // contributor ask: a range walks its part of a tile's first K tiles late, and its
        // part of a tile's last ones last (scheduler/gt_tile_walk.h); a part between them is
        // a whole range, walked first. (Asking in every part made ptxas spill 16 bytes at 168
        // registers on 128x256 tiles. The first barrier: everyone has read the answer word of
        // the previous part.)
        bool all_in = false;
        if (me == lo || me == hi) {
            sync();
            if (tid == 0) {
                const gt_u32 arrived = gt_atomic_add_u32(flag, 0u);
                gt_fence_device();
                *last = arrived == hi - lo;
                // Nobody counts in this flag any more: reset for the next launch.
                if (*last) *flag = 0u;
            }
            sync();
            all_in = *last;
        }
        if (!all_in) {
            float4* const mine = reinterpret_cast<float4*>(slot(me)) + tid;
#pragma unroll
            for (int j = 0; j < ACC; j += 4)
                __stcg(mine + (j / 4) * THREADS, make_float4(acc[j], acc[j + 1], acc[j + 2], acc[j + 3]));
            if (!gt_count_part(flag, hi - lo + 1, tid, last, sync)) return false;
            // Nobody counts in this flag any more: reset for the next launch.
            if (tid == 0) *flag = 0u;
        }
        // The staging area's last stores have read it.
        reclaim();
        sync();
        // The k-th part of the others, in contributor order.
        auto other = [&](gt_u32 k) {
            const gt_u32 c = lo + k;
            return reinterpret_cast<const float4*>(slot(c >= me ? c + 1 : c));
        };
        // Thread 0 copies vectors [v0, v0 + PER) of every thread of part k into buffer b.
        auto issue = [&](gt_u32 k, int v0, int b) {
            if (tid == 0) {
                // The buffer's last reads (ordered by the barrier) before the copy's writes.
                gt_fence_proxy_async();
                gt_mbar_expect(bars + 8 * b, gt_u32(CHUNK_BYTES));
                gt_bulk_load(gt_lds_addr(area + b * BUF_BYTES), other(k) + v0 * THREADS, gt_u32(CHUNK_BYTES), bars + 8 * b);
            }
        };
        const gt_u32 parts = hi - lo;
        int b = 0;
        for (gt_u32 k = 0; k < parts; ++k) {
            if constexpr (BUFS == 2) issue(k, 0, b);
#pragma unroll
            for (int v0 = 0; v0 < VECS; v0 += PER) {
                if constexpr (BUFS == 2) {
                    // The part's next chunk into the other buffer, read two chunks ago (a
                    // part's first chunk waits for the last's reads: prefetching it across
                    // parts made ptxas spill 12 bytes at 168 registers).
                    if (v0 + PER < VECS) issue(k, v0 + PER, b ^ 1);
                } else {
                    issue(k, v0, 0);
                }
                gt_mbar_wait(bars + 8 * b, (phases >> b) & 1u);
                phases ^= 1u << b;
                const float4* const in = reinterpret_cast<const float4*>(area + b * BUF_BYTES) + tid;
#pragma unroll
                for (int i = 0; i < PER; ++i) {
                    const float4 v = in[i * THREADS];
                    const int j = 4 * (v0 + i);
                    acc[j] += v.x;
                    acc[j + 1] += v.y;
                    acc[j + 2] += v.z;
                    acc[j + 3] += v.w;
                    // One vector at a time: hoisting every read of the chunk ahead of the adds
                    // made ptxas spill 384 bytes at 168 registers (128x256 tiles).
#pragma unroll
                    for (int q = 0; q < 4; ++q) gt_reg_fence(acc[j + q]);
                }
                sync();  // read before the buffer is refilled
                if constexpr (BUFS == 2) b ^= 1;
            }
        }
        return true;
    }
};
#endif
