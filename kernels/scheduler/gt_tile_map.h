// scheduler/gt_tile_map.h: which output tile a workgroup computes. WorkGroupMapping:
// consecutive workgroups walk down a group of WGM tile rows (along M) before moving to the next
// tile column, so the B columns they share stay in L2.
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
