// epilogue/gt_epilogue_tma.h: the epilogue of the persistent kernel (scheduler/gt_persistent.h).
// The consumers stage alpha * accumulators, already in D's type, in an LDS tile of its own
// (layout/gt_wgmma_tile.h's GtOutTile, outside the operand ring, which the producer is already
// refilling with the next tile's operands), and one thread hands it to the tensor memory
// accelerator, which writes it to D while the consumers go on with the next tile. The tile
// goes out in PASSES column groups of OUT_N (at most 128 columns each), so the staging area
// costs the operand ring as little LDS as possible; before a group is staged, the previous
// group's stores must have read the area. Only the consumers take part: they synchronise on
// a barrier of their own, never with the producer warp.
//
// D = alpha * AB only (beta = 0): rounding alpha * acc once to D's type is exactly what the
// other epilogues compute then.
#pragma once

// Column groups of the persistent epilogue: the fewest equal groups of at most 128 columns
// (whole 8-column groups), or the whole tile when MT1 does not split so.
__host__ __device__ constexpr int gt_out_passes(int mt1) {
    return mt1 % ((mt1 + 127) / 128) == 0 && (mt1 / ((mt1 + 127) / 128)) % 8 == 0 ? (mt1 + 127) / 128 : 1;
}

template <class Cfg, class Mainloop> struct GtTmaStoreEpilogue {
    typedef typename Cfg::TD TD;
    static constexpr int PASSES = gt_out_passes(Cfg::MT1), OUT_N = Cfg::MT1 / PASSES;
    typedef GtOutTile<TD, Cfg::MT0, OUT_N> Tile;
    static constexpr int ACC = Mainloop::ACC;
    // Hardware barrier 1: the consumers' own (0 is the whole workgroup's).
    static constexpr int CONSUMER_BARRIER = 1;
    static_assert(Cfg::BETA_ZERO, "the persistent epilogue stores alpha * AB (beta = 0)");

    GT_DEVICE static void consumers_sync() { gt_named_barrier(CONSUMER_BARRIER, Cfg::THREADS); }

    // Waits until the stores of the tile staged before have read it (thread 0 issued them).
    GT_DEVICE static void reclaim(int tid) {
        if (tid == 0) gt_bulk_wait<0, true>();
        consumers_sync();
    }

    // Each consumer thread writes its accumulators of column group `pass`, times alpha, in
    // D's type.
    GT_DEVICE static void stage(unsigned char* out, const float (&acc)[ACC], const GtPos& pos, float alpha, int pass) {
#pragma unroll
        for (int i = 0; i < ACC; ++i) {
            int m, n;
            Mainloop::acc_coord(pos.lane, i, m, n);
            n += pos.wn0 - pass * OUT_N;
            if (PASSES == 1 || (n >= 0 && n < OUT_N))
                *reinterpret_cast<TD*>(out + Tile::byte_off(pos.wm0 + m, n)) = gt_from_f32<TD>(alpha * acc[i]);
        }
        // The tensor-map stores read LDS through the async proxy.
        gt_fence_proxy_async();
    }

    // Once every consumer has staged its part, thread 0 stores the column group at (m0, n0)
    // of `batch`; the boxes clip at D's edges.
    GT_DEVICE static void store(const GtGemmArgs& args, gt_u32 out, int m0, int n0, int batch, int tid) {
        consumers_sync();
        if (tid == 0) {
#pragma unroll
            for (int j = 0; j < Tile::BOXES; ++j)
                gt_tma_store_3d(&args.tma_d, out + gt_u32(Tile::box_src(j)), m0 + Tile::box_m(j), n0 + Tile::box_n(j),
                                batch);
            gt_bulk_commit();
        }
    }

    // The whole tile at (m0, n0) of `batch`, group by group.
    GT_DEVICE static void write(const GtGemmArgs& args, unsigned char* out, float (&acc)[ACC], const GtPos& pos, int m0,
                                int n0, int batch, int tid) {
        gt_plant_wrong_result(acc);
        const gt_u32 out_lds = gt_lds_addr(out);
#pragma unroll 1
        for (int pass = 0; pass < PASSES; ++pass) {
            reclaim(tid);
            stage(out, acc, pos, args.alpha, pass);
            store(args, out_lds, m0, n0 + pass * OUT_N, batch, tid);
        }
    }

    // The last stores have completed (before the workgroup exits).
    GT_DEVICE static void drain(int tid) {
        if (tid == 0) gt_bulk_wait<0, false>();
    }
};
