// layout/gt_cluster_layout.h: where the workgroups of a cluster sit among the output tiles.
// A cluster of CM x CN workgroups (ClusterM along M, ClusterN along N) takes a CM x CN block
// of neighbouring tiles; the workgroup of cluster rank r computes the tile at (r % CM, r / CM)
// of the block. The CN workgroups of one tile row share its A tile, the CM of one tile column
// its B tile: each loads its share of a shared tile into the slots of all of them
// (loader/gt_tma_loader.h), so a workgroup's slot is written by its row and its column, and
// its consumers release the slot to those same peers (loader/gt_free_slots.h).
//
//   rank -> (m_of, n_of) in the block; row_mask / column_mask: the ranks sharing A / B;
//   peer(rank, i), i < PEERS: the ranks of its row and column, each once (itself included)
#pragma once

template <int CN, int CM> struct GtClusterLayout {
    static constexpr int SIZE = CN * CM;
    // A row and a column of the block meet in one workgroup.
    static constexpr int PEERS = CN + CM - 1;
    static_assert(SIZE <= 16, "a multicast reaches at most 16 workgroups");

    GT_DEVICE static int m_of(int rank) { return rank % CM; }
    GT_DEVICE static int n_of(int rank) { return rank / CM; }
    // The ranks of this rank's tile row, which share its A tile.
    GT_DEVICE static unsigned short row_mask(int rank) {
        unsigned mask = 0;
#pragma unroll
        for (int j = 0; j < CN; ++j) mask |= 1u << (m_of(rank) + CM * j);
        return (unsigned short)mask;
    }
    // The ranks of this rank's tile column, which share its B tile.
    GT_DEVICE static unsigned short column_mask(int rank) {
        return (unsigned short)(((1u << CM) - 1) << (CM * n_of(rank)));
    }
    // The i-th of the workgroups that write into this rank's slots: its row's CN (in N order),
    // then the other CM - 1 of its column.
    GT_DEVICE static int peer(int rank, int i) {
        if (i < CN) return m_of(rank) + CM * i;
        const int m = i - CN;  // 0 .. CM - 2: the column's ranks other than this one
        return CM * n_of(rank) + (m < m_of(rank) ? m : m + 1);
    }
};
