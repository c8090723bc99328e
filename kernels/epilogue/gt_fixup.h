// epilogue/gt_fixup.h: output tiles shared between workgroups. Contributors lo..hi (stream-K
// workgroups, or the splits of a GSU<n>K tile) each hold an f32 partial of one output tile.
// Each writes its own to its workspace slot and counts itself in the tile's flag; the one that
// sees the count complete adds the partials in contributor order (deterministic: the same sum
// whichever finishes last), leaves the sum in its staging tile and resets the flag to zero, so
// the flags are clean for the next launch. Nobody waits for anybody: no deadlock whatever the
// number of workgroups resident at once.
#pragma once

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
        // The barrier orders every thread's partial before thread 0's device-scope fence, which
        // publishes them all before the count (and, after it, makes the others' visible here).
        gt_barrier();
        if (tid == 0) {
            gt_fence_device();
            const gt_u32 before = gt_atomic_add_u32(flag, 1u);
            gt_fence_device();
            *last_flag = before == hi - lo;
        }
        gt_barrier();
        if (!*last_flag) return false;
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
