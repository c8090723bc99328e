// loader/gt_tma_loader.h: operand stages through the Hopper tensor memory accelerator. A ring
// of STAGES LDS slots with one mbarrier each: thread 0 announces a stage's bytes and issues the
// boxes of both operand tiles (the tensor maps in the arguments describe A and B as
// (K, rows, batch) when K-major and (rows, K, batch) when MN-major, with the swizzles of
// layout/gt_wgmma_tile.h), every thread waits for the slot's phase. Edges cost nothing: the maps zero-fill whatever lies outside the
// matrices.
//
// In a cluster of CLUSTER_M x CLUSTER_N workgroups (ClusterM, ClusterN,
// layout/gt_cluster_layout.h) the CLUSTER_N workgroups of a tile row share its A tile of each
// stage: each loads 1 / CLUSTER_N of it (of a K-major tile the rows, A's tensor map having
// boxes that many times shorter; of an M-major one whole chunks, or a slice of every chunk's K
// where the chunks are too few) into the slots of all of them at once. The CLUSTER_M workgroups of a tile column share B the same way; an operand nobody
// shares is loaded whole as usual. Every slot barrier still counts the whole stage's bytes;
// the shares of the others arrive on it too. A slot may be refilled only once every workgroup
// it is written into has released it (loader/gt_free_slots.h).
#pragma once

template <class Cfg, class TileA, class TileB> struct GtTmaRing {
    static constexpr int STAGES = Cfg::STAGES, DU = Cfg::DU;
    static constexpr int STAGE_BYTES = TileA::BYTES + TileB::BYTES;
    static constexpr int CLUSTER_N = Cfg::CLUSTER_N, CLUSTER_M = Cfg::CLUSTER_M;
    gt_u32 lds, bar0;  // LDS address of slot 0 and of the first barrier

    GT_DEVICE GtTmaRing(unsigned char* smem, gt_u64* bars) : lds(gt_lds_addr(smem)), bar0(gt_lds_addr(bars)) {}
    // Thread 0 initialises the barriers (the caller's next barrier publishes them) and starts
    // fetching both tensor maps, so the first loads do not wait for them: the maps live in
    // the kernel's parameters, which a cold cache holds nowhere near.
    GT_DEVICE void init(const GtGemmArgs& args, int tid) const {
        if (tid == 0) {
            gt_prefetch_tensor_map(&args.tma_a);
            gt_prefetch_tensor_map(&args.tma_b);
#pragma unroll
            for (int s = 0; s < STAGES; ++s) gt_mbar_init(bar0 + 8 * s, 1);
            gt_mbar_init_fence();
        }
    }
    // Thread 0 only: loads the K slice at k0 of the tile at (m0, n0) of `batch` into `slot`.
    GT_DEVICE void load(const GtGemmArgs& args, int slot, int k0, int m0, int n0, int batch) const {
        const gt_u32 bar = bar0 + 8 * slot, st = lds + gt_u32(slot * STAGE_BYTES);
        gt_mbar_expect(bar, STAGE_BYTES);
        if constexpr (CLUSTER_N > 1 || CLUSTER_M > 1) {
            // This workgroup's share of each shared tile, to its row (A) or column (B); an
            // unshared tile whole.
            using Layout = GtClusterLayout<CLUSTER_N, CLUSTER_M>;
            const int rank = int(gt_cluster_rank());
            if constexpr (CLUSTER_N > 1) {
                share<TileA, CLUSTER_N>(st, &args.tma_a, k0, m0, batch, bar, Layout::n_of(rank),
                                        Layout::row_mask(rank));
            } else {
#pragma unroll
                for (int j = 0; j < TileA::BOXES; ++j) load_box<TileA>(st, &args.tma_a, j, k0, m0, batch, bar);
            }
            const gt_u32 st_b = st + gt_u32(TileA::BYTES);
            if constexpr (CLUSTER_M > 1) {
                share<TileB, CLUSTER_M>(st_b, &args.tma_b, k0, n0, batch, bar, Layout::m_of(rank),
                                        Layout::column_mask(rank));
            } else {
#pragma unroll
                for (int j = 0; j < TileB::BOXES; ++j) load_box<TileB>(st_b, &args.tma_b, j, k0, n0, batch, bar);
            }
        } else if constexpr (TileA::BOXES == TileB::BOXES) {
            // The same number of boxes (K-major tiles of 16-bit types): A's and B's slabs of
            // one K range are issued together.
#pragma unroll
            for (int j = 0; j < TileA::BOXES; ++j) {
                load_box<TileA>(st, &args.tma_a, j, k0, m0, batch, bar);
                load_box<TileB>(st + gt_u32(TileA::BYTES), &args.tma_b, j, k0, n0, batch, bar);
            }
        } else {
#pragma unroll
            for (int j = 0; j < TileA::BOXES; ++j) load_box<TileA>(st, &args.tma_a, j, k0, m0, batch, bar);
#pragma unroll
            for (int j = 0; j < TileB::BOXES; ++j)
                load_box<TileB>(st + gt_u32(TileA::BYTES), &args.tma_b, j, k0, n0, batch, bar);
        }
    }
    // Share `part` of SHARERS of an operand tile, multicast into the slots of the workgroups
    // in `ranks`: of a K-major tile a slice of every box, BOX_ROWS / SHARERS of its rows (the
    // operand's tensor map has boxes that much shorter); of an M- or N-major one whole chunks,
    // BOXES / SHARERS of them, where they divide evenly.
    template <class Tile, int SHARERS>
    GT_DEVICE static void share(gt_u32 tile, const GtTensorMap* map, int k0, int mn0, int batch, gt_u32 bar, int part,
                                unsigned short ranks) {
        if constexpr (Tile::K_MAJOR) {
            static_assert(Tile::BOX_ROWS % (8 * SHARERS) == 0,
                          "a cluster shares K-major tiles whose boxes split into whole 8-row groups");
            constexpr int SLICE = Tile::BOX_ROWS / SHARERS;
#pragma unroll
            for (int j = 0; j < Tile::BOXES; ++j)
                gt_tma_load_3d_multicast(tile + gt_u32(Tile::box_dst(j) + part * SLICE * 128), map,
                                         Tile::box_c0(j, k0, mn0), Tile::box_c1(j, k0, mn0) + part * SLICE, batch,
                                         bar, ranks);
        } else if constexpr (Tile::BOXES % SHARERS == 0) {
            constexpr int SHARE = Tile::BOXES / SHARERS;
#pragma unroll
            for (int i = 0; i < SHARE; ++i) {
                const int j = part * SHARE + i;
                gt_tma_load_3d_multicast(tile + gt_u32(Tile::box_dst(j)), map, Tile::box_c0(j, k0, mn0),
                                         Tile::box_c1(j, k0, mn0), batch, bar, ranks);
            }
        } else {
            // Too few chunks to share out: a slice of K of every chunk (the operand's tensor
            // map has boxes that much shorter), each keeping the swizzle period aligned.
            constexpr int SLICE = Tile::DEPTH / SHARERS;
            static_assert(Tile::DEPTH % (8 * SHARERS) == 0 && SLICE * Tile::PITCH % GT_SW128_PERIOD == 0,
                          "a cluster shares M- or N-major tiles in whole chunks or in aligned slices of K");
#pragma unroll
            for (int j = 0; j < Tile::BOXES; ++j)
                gt_tma_load_3d_multicast(tile + gt_u32(Tile::box_dst(j) + part * SLICE * Tile::PITCH), map,
                                         Tile::box_c0(j, k0, mn0), Tile::box_c1(j, k0, mn0) + part * SLICE, batch,
                                         bar, ranks);
        }
    }
    // Box j of an operand tile whose slot is at LDS address `tile`.
    template <class Tile>
    GT_DEVICE static void load_box(gt_u32 tile, const GtTensorMap* map, int j, int k0, int mn0, int batch, gt_u32 bar) {
        gt_tma_load_3d(tile + gt_u32(Tile::box_dst(j)), map, Tile::box_c0(j, k0, mn0), Tile::box_c1(j, k0, mn0), batch,
                       bar);
    }
    // Waits for the stage at `p`: its fill of the slot completes that phase of the slot's
    // barrier.
    GT_DEVICE void wait(const GtRingPos<STAGES>& p) const { gt_mbar_wait(bar0 + 8 * p.slot, p.phase); }
    // The same for the t-th stage loaded since the ring was set up.
    GT_DEVICE void wait(int t) const { wait(GtRingPos<STAGES>(t)); }
};
