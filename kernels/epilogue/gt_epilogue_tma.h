// epilogue/gt_epilogue_tma.h: the epilogue of the persistent kernel (scheduler/gt_persistent.h).
// The consumers stage alpha * accumulators, already in D's type, in an LDS tile of its own
// (layout/gt_wgmma_tile.h's GtOutTile, outside the operand ring, which the producer is already
// refilling with the next tile's operands), and one thread (one per warpgroup where each
// warpgroup owns whole store boxes: OWN_ROWS) hands it to the tensor memory accelerator,
// which writes it to D while the consumers go on with the next tile. The tile
// goes out in PASSES column groups of OUT_N (at most 128 columns each), so the staging area
// costs the operand ring as little LDS as possible; before a group is staged, the previous
// group's stores must have read the area (two halves used in turn, each group a half as
// wide, ran slower: the extra barriers and stores cost more than the wait). Only the
// consumers take part: they synchronise on barriers of their own, never with the producer
// warp.
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
    static_assert(Cfg::BETA_ZERO, "the persistent epilogue stores alpha * AB (beta = 0)");
    // When the warpgroups stack along M (unswapped, N not split) and each one's rows are whole
    // store boxes along M, every warpgroup stages and stores its own rows: it synchronises
    // only its own four warps (hardware barrier 2 + its index) and its first thread issues
    // its boxes, so the warpgroups never wait for each other between tiles. Otherwise the
    // consumers share hardware barrier 1 (0 is the whole workgroup's) and thread 0 stores.
    static constexpr int WGT0 = Mainloop::Compute::WGT0;
    static constexpr bool OWN_ROWS = !Cfg::SWAP_AB && Cfg::WG1 == 1 && Cfg::WG0 > 4 && WGT0 % Tile::CE == 0;
    static constexpr int SYNC_THREADS = OWN_ROWS ? 128 : Cfg::THREADS;

    GT_DEVICE static void consumers_sync(int tid) {
        if constexpr (!OWN_ROWS) {
            gt_named_barrier<1>(Cfg::THREADS);
        } else {
            // Only as many barriers as warpgroups are named.
            constexpr int WGS = Cfg::WG0 / 4;
            static_assert(WGS <= 4, "at most four warpgroups");
            const int wg = tid / 128;
            if (wg == 0) {
                gt_named_barrier<2>(128);
            } else if (WGS == 2 || wg == 1) {
                gt_named_barrier<3>(128);
            } else if (WGS == 3 || wg == 2) {
                gt_named_barrier<4>(128);
            } else {
                gt_named_barrier<5>(128);
            }
        }
    }
    // The thread that issues (and waits for) this thread's stores.
    GT_DEVICE static bool leader(int tid) { return tid % SYNC_THREADS == 0; }

    // Waits until the stores of the group staged before have read it (the leader issued them).
    GT_DEVICE static void reclaim(int tid) {
        if (leader(tid)) gt_bulk_wait<0, true>();
        consumers_sync(tid);
    }

    // 16-bit D goes through matrix stores: per 64-row slice s and 8 instruction columns j a
    // warp holds two 8x8 fragments (rows 0-7 and 8-15 of its 16), and one stmatrix writes
    // four of them (columns j and j + 1) as 16-byte runs along M, where element stores would
    // take 32 instructions. Unswapped, a fragment's rows are m and its columns n: written
    // transposed, each run is 8 m of one n. Swapped, its rows are n and each run is a row.
    // A group of 8 or 16 n must lie inside one column group.
    static constexpr bool MATRIX_STORES = !GT_VENDOR_AMD && sizeof(TD) == 2 && (!Cfg::SWAP_AB || OUT_N % 16 == 0);
    static constexpr int SLICES = Mainloop::Compute::SLICES, JS = Mainloop::Compute::ACC_SLICE / 4;

    // This warp's first column: a constant 0 when the warpgroups do not split N (unswapped),
    // so that with the column groups unrolled the tests below fold away and only the matrix
    // stores of each group are emitted.
    GT_DEVICE static int wn0(const GtPos& pos) { return !Cfg::SWAP_AB && Cfg::WG1 == 1 ? 0 : pos.wn0; }
    // Is fragment group (s, j) of this warp inside column group `pass`?
    GT_DEVICE static bool in_pass(const GtPos& pos, int s, int j, int pass) {
        if (PASSES == 1) return true;
        const int n = (Cfg::SWAP_AB ? wn0(pos) + s * 64 : wn0(pos) + 8 * j) - pass * OUT_N;
        return n >= 0 && n < OUT_N;
    }
    // The LDS address lane `lane` names for row lane % 8 of fragment `f` (rows 8 (f % 2)..,
    // columns 8 (j + f / 2)..) of slice s.
    GT_DEVICE static gt_u32 row_addr(gt_u32 out, const GtPos& pos, int s, int j, int f, int pass) {
        const int r = pos.lane & 7, rows = s * 64 + 8 * (f & 1), cols = 8 * (j + (f >> 1));
        const int m = Cfg::SWAP_AB ? pos.wm0 + cols : pos.wm0 + rows;
        const int n = (Cfg::SWAP_AB ? wn0(pos) + rows + r : wn0(pos) + cols + r) - pass * OUT_N;
        return out + gt_u32(Tile::byte_off(m, n));
    }
    GT_DEVICE static void stage_matrices(unsigned char* out, const float (&acc)[ACC], const GtPos& pos, float alpha,
                                         int pass) {
        constexpr bool TRANS = !Cfg::SWAP_AB;
        const gt_u32 base = gt_lds_addr(out);
        // Fragment rows 0-7 (h = 0) or 8-15 (h = 1) of group (s, j), packed pairs of columns.
        auto frag = [&](int s, int j, int h) {
            const int i = s * Mainloop::Compute::ACC_SLICE + 4 * j + 2 * h;
            return gt_pack2_from_f32<TD>(alpha * acc[i], alpha * acc[i + 1]);
        };
#pragma unroll
        for (int s = 0; s < SLICES; ++s) {
#pragma unroll
            for (int j = 0; j < JS; j += 2) {
                const bool a = in_pass(pos, s, j, pass), b = j + 1 < JS && in_pass(pos, s, j + 1, pass);
                const int f = (pos.lane >> 3) & 3;
                if (a && b) {
                    gt_stmatrix_x4<TRANS>(row_addr(base, pos, s, j, f, pass), frag(s, j, 0), frag(s, j, 1),
                                          frag(s, j + 1, 0), frag(s, j + 1, 1));
                } else {
                    // One of the two straddles the column groups' border (indices stay
                    // compile-time constants: a selected index would put acc in local memory).
                    if (a) gt_stmatrix_x2<TRANS>(row_addr(base, pos, s, j, f & 1, pass), frag(s, j, 0), frag(s, j, 1));
                    if (b)
                        gt_stmatrix_x2<TRANS>(row_addr(base, pos, s, j + 1, f & 1, pass), frag(s, j + 1, 0),
                                              frag(s, j + 1, 1));
                }
            }
        }
    }

    // Each consumer thread writes its accumulators of column group `pass`, times alpha, in
    // D's type.
    GT_DEVICE static void stage(unsigned char* out, const float (&acc)[ACC], const GtPos& pos, float alpha, int pass) {
        if constexpr (MATRIX_STORES) {
            stage_matrices(out, acc, pos, alpha, pass);
        } else {
#pragma unroll
            for (int i = 0; i < ACC; ++i) {
                int m, n;
                Mainloop::acc_coord(pos.lane, i, m, n);
                n += pos.wn0 - pass * OUT_N;
                if (PASSES == 1 || (n >= 0 && n < OUT_N))
                    *reinterpret_cast<TD*>(out + Tile::byte_off(pos.wm0 + m, n)) = gt_from_f32<TD>(alpha * acc[i]);
            }
        }
        // The tensor-map stores read LDS through the async proxy.
        gt_fence_proxy_async();
    }

    // Once every consumer (of this warpgroup) has staged its part, the leader stores the
    // column group at (m0, n0) of `batch` (its warpgroup's boxes); the boxes clip at D's edges.
    GT_DEVICE static void store(const GtGemmArgs& args, gt_u32 out, int m0, int n0, int batch, int tid) {
        consumers_sync(tid);
        if (leader(tid)) {
#pragma unroll
            for (int j = 0; j < Tile::BOXES; ++j)
                if (!OWN_ROWS || Tile::box_m(j) / WGT0 == tid / 128)
                    gt_tma_store_3d(&args.tma_d, out + gt_u32(Tile::box_src(j)), m0 + Tile::box_m(j),
                                    n0 + Tile::box_n(j), batch);
            gt_bulk_commit();
        }
    }

    // The whole tile at (m0, n0) of `batch`, group by group.
    GT_DEVICE static void write(const GtGemmArgs& args, unsigned char* out, float (&acc)[ACC], const GtPos& pos, int m0,
                                int n0, int batch, int tid) {
        gt_plant_wrong_result(acc);
        const gt_u32 out_lds = gt_lds_addr(out);
        // With matrix stores unrolled, so each group's stores are known at compile time; the
        // element stores, 128 per group, stay a loop.
        constexpr int unroll = MATRIX_STORES ? PASSES : 1;
#pragma unroll(unroll)
        for (int pass = 0; pass < PASSES; ++pass) {
            reclaim(tid);
            stage(out, acc, pos, args.alpha, pass);
            store(args, out_lds, m0, n0 + pass * OUT_N, batch, tid);
        }
    }

    // The last stores have completed (before the workgroup exits).
    GT_DEVICE static void drain(int tid) {
        if (leader(tid)) gt_bulk_wait<0, false>();
    }
};
