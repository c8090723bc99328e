// scheduler/gt_tile_map.h: which output tile a workgroup computes. WorkGroupMapping:
// consecutive workgroups walk down a group of WGM tile rows (along M) before moving to the next
// tile column, so the B columns they share stay in L2. ClusterM x ClusterN: the workgroups of a
// cluster take a block of neighbouring tiles; those of one row share their A tile, those of
// one column their B tile (layout/gt_cluster_layout.h). GtEdgeShift: where the warp-level LDS
// paths compute an edge tile.
#pragma once

// How far back the warp-level LDS paths compute an edge tile: a tile at mn0 that runs past
// `lim` (M or N) is computed at lim - MT instead, inside the matrix, where its loads need no
// bounds tests and take the interior tiles' loop; its store leaves out the rows or columns
// the tile before it stores (GtEpilogue::store). Not where the matrix is narrower than a
// tile, nor where the shifted start would break the operand's vectors along mn
// (GlobalReadVectorWidth elements, where the operand is M- or N-contiguous) or the store's
// along M (StoreVectorWidth). The warpgroup path's tensor maps fill what lies outside the
// matrix by themselves. In a one-wave grid the edge tiles set the kernel's time: on an H200,
// f32 NT on 256x128x16 (cuBLASLt 331 us), 2048x2048x2048 ran in 355.6 us, 2000x2048x2048 in
// 390.7 unshifted and 345.5 shifted, 2000^3 in 382.3 and 338.8. (Moving the accumulators in
// the staging instead of leaving rows out of the store cost a stream-K mma.sync kernel 48
// bytes of spills.)
template <class Cfg> struct GtEdgeShift {
    // GT_EDGE_SHIFT: the host names it only where the problem has such an edge tile, so that
    // kernels of whole tiles compile without the bookkeeping (carried by every kernel, it
    // pushed tiles at 128 or 64 registers past them, so fewer workgroups fit a compute unit:
    // 256^3 x64 f32 on 128x128x16 in 71 us against 58.4, 17^3 x50000 f16 on 32x32 in 186.5
    // against 181.3).
    static constexpr bool SHIFTS = GT_EDGE_SHIFT && !Cfg::WGMMA && !Cfg::GEMV;
    template <int MT, int ALIGN> GT_DEVICE static int by(int mn0, gt_i64 lim) {
        if (!SHIFTS || mn0 + MT <= lim || lim < MT || (lim - MT) % ALIGN != 0) return 0;
        return int(mn0 + MT - lim);
    }
    GT_DEVICE static int m(int m0, gt_i64 M) {
        // Both widths are powers of two: the larger is a multiple of the other.
        constexpr int LOADS = Cfg::TRANS_A ? 1 : Cfg::GRVW;
        return by<Cfg::MT0, (LOADS > Cfg::SVW ? LOADS : Cfg::SVW)>(m0, M);
    }
    GT_DEVICE static int n(int n0, gt_i64 N) { return by<Cfg::MT1, Cfg::TRANS_B ? Cfg::GRVW : 1>(n0, N); }
};

template <int WGM> GT_DEVICE void gt_tile_of(int id, int tiles_m, int tiles_n, int& tm, int& tn) {
    const int per_group = WGM * tiles_n;
    const int group = id / per_group;
    const int first_m = group * WGM;
    const int rows = (tiles_m - first_m) < WGM ? (tiles_m - first_m) : WGM;
    const int in_group = id - group * per_group;
    tm = first_m + in_group % rows;
    tn = in_group / rows;
}

// The tile of this workgroup when clusters of CM x CN workgroups (ClusterM, ClusterN) take
// CM x CN blocks of neighbouring tiles (tiles_m a multiple of CM, tiles_n of CN): block
// `group` in WorkGroupMapping order over the blocks, and in it the tile of this workgroup's
// rank in its (CN * CM, 1, 1) cluster, blockIdx.x % (CN * CM), as layout/gt_cluster_layout.h
// places it. CN = CM = 1 is gt_tile_of.
template <int WGM, int CN, int CM>
GT_DEVICE void gt_cluster_tile_of(int group, int tiles_m, int tiles_n, int& tm, int& tn) {
    using Layout = GtClusterLayout<CN, CM>;
    const int rank = int(blockIdx.x) % Layout::SIZE;
    int gm, gn;
    gt_tile_of<WGM>(group, tiles_m / CM, tiles_n / CN, gm, gn);
    // Unclustered directions take the block's first row or column at compile time.
    tm = gm * CM + (CM > 1 ? Layout::m_of(rank) : 0);
    tn = gn * CN + (CN > 1 ? Layout::n_of(rank) : 0);
}

// The split and batch of this workgroup in a grid of (tiles, GSU splits x batch layers,
// batches): a grid's z holds at most 65535 batches, so the host folds more into y, GSU splits
// a layer (split = y % GSU, batch = (y / GSU) * gridDim.z + z), for kernels with no reduction
// kernel after them (FOLDS; the reduction kernel's grid has one layer a batch, so the space
// keeps those to 65535 batches and their grid is (tiles, GSU, batch) as it was). False for
// the workgroups past the last batch, which have nothing to do. 2x2x2 x65536 could only walk
// its batches by stream-K before: 459 us [cuBLASLt 53].
template <int GSU, bool FOLDS> GT_DEVICE bool gt_split_and_batch(const GtGemmArgs& args, int& split, int& batch) {
    if constexpr (!FOLDS) {
        // (Folding here too cost the GEMV along N 12 spilled bytes at 96 registers, sm_90a.)
        split = int(blockIdx.y);
        batch = int(blockIdx.z);
        return true;
    }
    split = int(blockIdx.y % GSU);
    batch = int(blockIdx.y / GSU) * int(gridDim.z) + int(blockIdx.z);
    // The first layer (every grid of at most 65535 batches) is answered from y alone: asking
    // args.batch of every workgroup, or comparing batch with gridDim.z, made ptxas spill 4 to
    // 8 bytes at 64 to 80 registers (a 64x32 warp-level tile of 333x109x77 NN; sm_90a).
    return blockIdx.y < GSU || batch < args.batch;
}
