// scheduler/gt_tile_walk.h: the work one cluster of the persistent kernel
// (scheduler/gt_persistent.h) takes, as a sequence of segments: a tile group (one tile per
// workgroup of the cluster) and a range of its K tiles. The producer warp and the consumers
// walk the same sequence.
//
//   GtWholeTiles    (PersistentKernel alone): groups first, first + step, ..., each with all
//                   its K tiles
//   GtStreamKUnits  (PersistentKernel with GSU1S): whole groups wave by wave as above but
//                   for the last one to two waves' worth, whose (tile group, K tile) units
//                   the clusters share evenly, each a contiguous range, as GtStreamK shares
//                   them among the stream-K kernel's workgroups: every compute unit gets the
//                   same work whatever the tile count (the hybrid of the Stream-K paper: the
//                   whole waves keep the groups in flight at once neighbours, whose operands
//                   L2 holds, and only the last groups are split). Only a range's first and
//                   last segments can be parts of a tile, whose contributors complete it
//                   through the workspace (epilogue/gt_fixup.h, GtRegisterPartials).
//
// Where a tile has at least 32 K tiles, a range that starts inside a tile walks that first
// part last: every segment before it then starts at K tile 0, so at any moment the clusters
// read about the same K tiles of A and B. Walked in range order, each cluster's K position
// was offset by where its range began, so together they read all of K at once:
// 1280x1280x8192 on 100 tiles of 128x128 read A and B from DRAM about three times over and
// ran 62 us against 48 on whole tiles. Walking the first part last, on the same binary
// (H200, us, range order -> first part last):
//   1280x1280x8192   (128 K tiles) 256x128 57.5 -> 53.6, 128x128 60.9 -> 52.7
//   3072x3072x4096   (64)          256x128 122.5 -> 110.4
//   12288x300x2048   (32)          128x128 53.2 -> 50.2, 256x64 65.8 -> 58.5
//   5120x5120x1280   (20)          256x128 100.8 -> 103.8
//   4224x4096x1024   (16)          256x128 63.1 -> 65.0
// With few K tiles the clusters' K positions are close together anyway, and range order
// stays.
//
// Both take (first, step, groups, ktiles): stream-K reads `first` as this cluster's index and
// `step` as the number of clusters.
#pragma once

struct GtSegment {
    int g, k0, k1;  // tile group g, its K tiles [k0, k1)
    GT_DEVICE bool whole(int ktiles) const { return k0 == 0 && k1 == ktiles; }
};

struct GtWholeTiles {
    int g, step, groups, ktiles;
    GT_DEVICE GtWholeTiles(int first, int step_, int groups_, int ktiles_)
        : g(first), step(step_), groups(groups_), ktiles(ktiles_) {}
    GT_DEVICE bool more() const { return g < groups; }
    GT_DEVICE GtSegment segment() const { return GtSegment{g, 0, ktiles}; }
    GT_DEVICE void next(const GtSegment&) { g += step; }
};

struct GtStreamKUnits {
    GtWholeTiles whole;  // the groups that go whole: those before base()
    GtStreamK sk;
    // The next unit of this cluster's stream-K range and the end of the stretch being walked;
    // `first`: where the range's part of its first tile ends, walked last where the range
    // starts inside that tile and goes on past it (`deferred`, the part's first unit).
    gt_u32 x, end, first, deferred;
    GT_DEVICE GtStreamKUnits(int cluster, int clusters, int groups, int ktiles)
        : whole(cluster, clusters, stream_k_base(clusters, groups), ktiles) {
        const gt_u32 work = gt_u32(groups - base()) * gt_u32(ktiles), kt = gt_u32(ktiles);
        sk = GtStreamK{work / gt_u32(clusters), work % gt_u32(clusters)};
        x = sk.start(gt_u32(cluster));
        end = sk.start(gt_u32(cluster) + 1);
        first = deferred = x;
        const gt_u32 boundary = (x / kt + 1) * kt;
        if (kt >= 32 && x % kt != 0 && boundary < end) first = x = boundary;
    }
    // All waves but the last two go whole; the rest (one to two groups a cluster) is shared
    // by units. A whole number of waves goes whole.
    GT_DEVICE static int stream_k_base(int clusters, int groups) {
        const int waves = groups / clusters, left = groups - waves * clusters;
        return (left == 0 ? waves : waves > 0 ? waves - 1 : 0) * clusters;
    }
    // The first group of the stream-K share.
    GT_DEVICE int base() const { return whole.groups; }
    GT_DEVICE bool more() const { return whole.more() || x < end || deferred < first; }
    // One division per segment, none per K tile.
    GT_DEVICE GtSegment segment() const {
        if (whole.more()) return whole.segment();
        const int ktiles = whole.ktiles;
        // After the rest of the range, its deferred first part.
        const gt_u32 at = x < end ? x : deferred, stop = x < end ? end : first;
        const int u = int(at / gt_u32(ktiles)), k0 = int(at - gt_u32(u) * gt_u32(ktiles));
        const gt_u32 left = stop - at;
        return GtSegment{base() + u, k0, left < gt_u32(ktiles - k0) ? k0 + int(left) : ktiles};
    }
    GT_DEVICE void next(const GtSegment& s) {
        if (whole.more()) {
            whole.next(s);
        } else if (x < end) {
            x += gt_u32(s.k1 - s.k0);
        } else {
            deferred += gt_u32(s.k1 - s.k0);
        }
    }
    // The clusters whose ranges hold split group gr's units: lo..hi.
    GT_DEVICE gt_u32 first_owner(int gr) const { return sk.owner(gt_u32(gr - base()) * gt_u32(whole.ktiles)); }
    GT_DEVICE gt_u32 last_owner(int gr) const { return sk.owner(gt_u32(gr - base() + 1) * gt_u32(whole.ktiles) - 1); }
    // Cluster c's workspace slot for its part of split group gr, whose first owner is lo, of
    // its two: 0 where gr is the first group of c's range, 1 where it is the last (a range
    // holds at most two parts of tiles). Only the first owner's range can start before gr's
    // units.
    GT_DEVICE gt_u32 part_slot(gt_u32 c, gt_u32 lo, int gr) const {
        return c * 2 + (c == lo && sk.start(c) < gt_u32(gr - base()) * gt_u32(whole.ktiles) ? 1u : 0u);
    }
};
