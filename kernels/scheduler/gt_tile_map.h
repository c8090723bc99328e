// scheduler/gt_tile_map.h: which output tile a workgroup computes. WorkGroupMapping:
// consecutive workgroups walk down a group of WGM tile rows (along M) before moving to the next
// tile column, so the B columns they share stay in L2. ClusterM x ClusterN: the workgroups of a
// cluster take a block of neighbouring tiles; those of one row share their A tile, those of
// one column their B tile (layout/gt_cluster_layout.h).
#pragma once

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
