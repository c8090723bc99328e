// scheduler/gt_tile_map.h: which output tile a workgroup computes. WorkGroupMapping:
// consecutive workgroups walk down a group of WGM tile rows (along M) before moving to the next
// tile column, so the B columns they share stay in L2. ClusterN: the CN workgroups of a
// cluster take CN neighbouring tiles of one row, which share their A tile; ClusterM: the CM
// workgroups of a cluster CM neighbouring tiles of one column, which share their B tile.
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

// The tile of this workgroup when clusters of CN workgroups along N (ClusterN) take groups of
// CN neighbouring tiles of a row (tiles_n a multiple of CN), or clusters of CM along M
// (ClusterM) groups of CM neighbouring tiles of a column (tiles_m a multiple of CM): group
// `group` in WorkGroupMapping order over the groups, and in it the tile of this workgroup's
// rank in its (CN * CM, 1, 1) cluster, blockIdx.x % (CN * CM). CN = CM = 1 is gt_tile_of.
template <int WGM, int CN, int CM>
GT_DEVICE void gt_cluster_tile_of(int group, int tiles_m, int tiles_n, int& tm, int& tn) {
    const int rank = int(blockIdx.x) % (CN * CM);
    int gm, gn;
    gt_tile_of<WGM>(group, tiles_m / CM, tiles_n / CN, gm, gn);
    tm = gm * CM + (CM > 1 ? rank : 0);
    tn = gn * CN + (CN > 1 ? rank : 0);
}
