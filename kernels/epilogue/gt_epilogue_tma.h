// epilogue/gt_epilogue_tma.h: the epilogue of the persistent kernel (scheduler/gt_persistent.h).
// The consumers stage alpha * accumulators, already in D's type (epilogue/gt_out_staging.h), in
// an LDS tile of its own (layout/gt_wgmma_tile.h's GtOutTile, outside the operand ring, which
// the producer is already refilling with the next tile's operands), and one thread (one per
// warpgroup where each warpgroup owns whole store boxes: OWN_ROWS, OWN_COLS) hands it to the
// tensor memory accelerator, which writes it to D while the consumers go on with the next tile
// (a last, partial chunk of M goes out through the consumers' own stores: store_partial_chunk).
// The tile goes out in PASSES column groups of OUT_N (at most 128 columns each), so the staging
// area costs the operand ring as little LDS as possible; before a group is staged, the previous
// group's stores must have read the area (two halves used in turn, each group half as wide,
// ran slower). Only the consumers take part, on barriers of their own.
//
// D = alpha * AB + beta * C: where beta is not 0 (READS_C) and C comes through LDS (C_VIA_LDS:
// every mode below but direct), C of the whole tile comes in through a tensor map of C, in the
// staging area's layout (C and D share a type), and each thread reads C at exactly the places
// it stages, with the instruction that mirrors its stores (ldmatrix for stmatrix), rounding
// alpha * acc + beta * C once as the other epilogues round. The consumers wait for C on an
// mbarrier (one per leader and C tile). Where C lands (GtCfg::C_STAGES, chosen by the host by
// the LDS left):
//   apart (C_STAGES tiles, 1 or 2): a ring of C tiles behind the staging area. The leader
//             issues the C of the tile C_STAGES ahead as soon as every consumer has blended
//             the current one, so it loads while the tiles between are multiplied and stored.
//   in place (0): the staging area, holding every column group. Halfway through a tile's K
//             steps each leader waits for the last tile's stores to have read the area and
//             says so on an mbarrier; the producer warp then issues the tile's C (a load issued
//             by the consumers in their main loop cost them spills at 168 registers). Each
//             thread overwrites its C with D: no LDS beyond D's tile. The data-parallel kernel
//             (its staging area the operand ring) has its leaders issue C after the main loop.
//   direct (GtCfg::C_DIRECT), or through the operand ring (GtCfg::C_STEPS): no LDS for C; each
//             thread folds C into its accumulators, from global memory (epilogue/gt_c_direct.h
//             says where) or from the ring's slots (epilogue/gt_c_ring.h), and D goes alone.
// Measured on an H200 (beta 1), kernel against kernel: asking L2 for the next tile's C as
// well ran 1-11% slower on every shape but one.
#pragma once

// Column groups of the persistent epilogue: the fewest equal groups of at most `most` bytes
// of columns per row of M (with 256, 128 columns of a 16-bit D, 64 of f32: a group of 128 rows
// is then 32 KiB either way), whole 8-column groups. Where the fewest do not split MT1 so,
// `widen` looks on to twice as many (a producer warpgroup's tall tiles: 256x160 of a 16-bit D
// in four groups of 40 columns instead of the whole tile); otherwise, or where none does, the
// whole tile is one group.
__host__ __device__ constexpr int gt_out_passes(int mt1, int es, int most, bool widen) {
    const int fewest = (mt1 * es + most - 1) / most;
    for (int p = fewest; p <= (widen ? 2 * fewest : fewest); ++p)
        if (mt1 % p == 0 && (mt1 / p) % 8 == 0)
            return p;
    return 1;
}

template <class Cfg, class Mainloop> struct GtTmaStoreEpilogue {
    typedef typename Cfg::TD TD;
    // Column groups of at most GROUP_BYTES a row: 128 beside a producer warpgroup, whose tall
    // tiles then keep four operand stages, and where 256 leave the ring no room (src/space's
    // persistent_group_limit).
    static constexpr int GROUP_BYTES = Cfg::PRODUCER_KIND == 2 || Cfg::OUT_NARROW ? 128 : 256;
    static constexpr int PASSES = gt_out_passes(Cfg::MT1, int(sizeof(TD)), GROUP_BYTES, GROUP_BYTES == 128), OUT_N = Cfg::MT1 / PASSES;
    static constexpr int ACC = Mainloop::ACC;
    static constexpr bool C_IN_RING = !Cfg::BETA_ZERO && Cfg::C_STEPS > 0, READS_C = !Cfg::BETA_ZERO && !C_IN_RING;
    // C through LDS (a ring of C tiles, or the staging area), or straight into registers.
    static constexpr bool C_DIRECT = READS_C && Cfg::C_DIRECT, C_VIA_LDS = READS_C && !C_DIRECT;
    static_assert(!C_VIA_LDS || sizeof(typename Cfg::TC) == sizeof(TD),
                  "C is read into a tile of D's layout: C and D share a type");
    // When the warpgroups stack along M (unswapped, N not split) and each one's rows are whole
    // store boxes along M, every warpgroup stages and stores its own rows: it synchronises
    // only its own four warps (hardware barrier 2 + its index) and its first thread issues
    // its boxes, so the warpgroups never wait for each other between tiles. Otherwise the
    // consumers share hardware barrier 1 (0 is the whole workgroup's) and thread 0 stores.
    static constexpr int WGT0 = Mainloop::Compute::WGT0, WGT1 = Mainloop::Compute::WGT1, WGS = Cfg::THREADS / 128;
    static constexpr bool OWN_ROWS =
        !Cfg::SWAP_AB && Cfg::WG1 == 1 && Cfg::WG0 > 4 && WGT0 % GtOutTile<TD, Cfg::MT0, OUT_N>::CE == 0;
    // Likewise when the warpgroups stand side by side along N (one warpgroup tall, D only):
    // each stages its own columns in a part of the staging area of its own, its column groups
    // OUT_N / WGS wide (whole 16-column steps where swapped, so the matrix stores stay whole),
    // and stores them (src/space's persistent_own_columns sizes D's store boxes to match).
    // Sharing the area instead, the two warpgroups of a 192x192 tile met on a barrier and
    // waited for one leader's stores three times a tile: its epilogue took 9.8 us of 83.5 on
    // 3072^3 (H200).
    static constexpr bool OWN_COLS = Cfg::WG0 == 4 && WGS > 1 && WGS <= 4 && Cfg::BETA_ZERO && !Cfg::STREAM_K &&
                                     Cfg::CONSUMERS == 1 && WGT1 % PASSES == 0 &&
                                     (WGT1 / PASSES) % (Cfg::SWAP_AB ? 16 : 8) == 0;
    // One column group of one set of stores: the whole tile's rows by OUT_N columns, or by a
    // warpgroup's share of them.
    static constexpr int GROUP_N = OWN_COLS ? WGT1 / PASSES : OUT_N;
    typedef GtOutTile<TD, Cfg::MT0, GROUP_N> Tile;
    // How the accumulators reach the staging area (epilogue/gt_out_staging.h).
    typedef GtOutStaging<Cfg, Mainloop, Tile, GROUP_N, PASSES, C_VIA_LDS, OWN_COLS> Staging;
    // Ping-pong (Cfg::CONSUMERS = 2): each set of consumers, one warpgroup, stores its own
    // tiles from an area of its own, AREA_BYTES past the other's, on a barrier of its own.
    static constexpr bool PING_PONG = Cfg::CONSUMERS > 1;
    static constexpr bool OWN_WARPGROUP = OWN_ROWS || OWN_COLS;
    static constexpr int SYNC_THREADS = OWN_WARPGROUP || PING_PONG ? 128 : Cfg::THREADS;

    GT_DEVICE static void consumers_sync(int tid) {
        if constexpr (PING_PONG) {
            static_assert(Cfg::CONSUMERS == 2 && Cfg::THREADS == 128, "two sets of one warpgroup");
            if (tid < 128) {
                gt_named_barrier<2>(128);
            } else {
                gt_named_barrier<3>(128);
            }
        } else if constexpr (!OWN_WARPGROUP) {
            gt_named_barrier<1>(Cfg::THREADS);
        } else {
            // Only as many barriers as warpgroups are named.
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
    // The thread that issues (and waits for) this thread's stores, and loads its C.
    GT_DEVICE static bool leader(int tid) { return tid % SYNC_THREADS == 0; }

    // C of the whole tile arrives at once: apart, as PASSES parts of a ring slot behind the
    // staging area; in place, in the staging area, which then has a part per column group.
    static constexpr int C_STAGES = C_VIA_LDS ? Cfg::C_STAGES : 0;
    static constexpr bool C_APART = C_STAGES > 0, IN_PLACE = C_VIA_LDS && !C_APART;
    static constexpr int C_SLOTS = C_APART ? C_STAGES : 1, C_TILE = PASSES * Tile::BYTES;
    // One set of consumers' output areas (ping-pong stores D only: one column group; with
    // OWN_COLS a part per warpgroup).
    static constexpr int AREA_BYTES = Tile::BYTES * (OWN_COLS ? WGS : 1);
    // Every column group in an area of its own, so that none waits for the stores of the one
    // before: in place (where C is) and in the data-parallel kernel, which has the LDS and no
    // next tile to overlap the wait with (H200, 4096x4096x1024 xf32, 128x256 in four groups:
    // 113.2 us waiting, 111.2 apart).
    static constexpr bool GROUPS_APART = IN_PLACE || !Cfg::PERSISTENT;
    // Where this thread's warpgroup stages its column groups, and its first column.
    GT_DEVICE static int own_off(int tid) { return OWN_COLS ? (tid / 128) * Tile::BYTES : 0; }
    GT_DEVICE static int own_n0(int tid) { return Staging::own_n0(tid); }
    static_assert(!PING_PONG || !READS_C, "ping-pong stores D only");
    // Where column group `pass` is staged, and where its C is in ring slot `slot` (the host's
    // lds_layout.rs counts the same areas).
    GT_DEVICE static int stage_off(int pass) { return GROUPS_APART ? pass * AREA_BYTES : 0; }
    GT_DEVICE static int c_off(int slot, int pass) {
        return (C_APART ? Tile::BYTES + slot * C_TILE : 0) + pass * Tile::BYTES;
    }
    // Does store box j belong to the rows of this thread's leader?
    GT_DEVICE static bool own_box(int j, int tid) { return !OWN_ROWS || Tile::box_m(j) / WGT0 == tid / 128; }
    static constexpr int LEADERS = OWN_ROWS ? Cfg::WG0 / 4 : 1;
    // The mbarrier on which this thread's leader's C arrives in slot `slot` (per warpgroup
    // with OWN_ROWS), and, in place, the one on which the leaders hand the staging area over.
    GT_DEVICE static gt_u32 c_bar(int tid, int slot) {
        __shared__ __align__(8) gt_u64 gt_c_bars[4 * C_SLOTS];
        return gt_lds_addr(&gt_c_bars[(OWN_ROWS ? tid / 128 : 0) * C_SLOTS + slot]);
    }
    GT_DEVICE static gt_u32 staging_free_bar() {
        __shared__ __align__(8) gt_u64 gt_staging_free_bar;
        return gt_lds_addr(&gt_staging_free_bar);
    }
    // Thread 0 initialises the C barriers (before the workgroup's first barrier).
    GT_DEVICE static void init(int tid) {
        if constexpr (C_VIA_LDS) {
            if (tid == 0) {
#pragma unroll
                for (int w = 0; w < LEADERS; ++w)
                    for (int slot = 0; slot < C_SLOTS; ++slot) gt_mbar_init(c_bar(128 * w, slot), 1);
                if constexpr (IN_PLACE) gt_mbar_init(staging_free_bar(), LEADERS);
                gt_mbar_init_fence();
            }
        }
    }
    // Issues the boxes of C of the tile at (m0, n0) of `batch` that the leader of thread
    // `owner` stores, into ring slot `slot`, completing on that leader's barrier.
    GT_DEVICE static void issue_c(const GtGemmArgs& args, unsigned char* out, int m0, int n0, int batch, int owner,
                                  int slot) {
        int boxes = 0;
#pragma unroll
        for (int j = 0; j < Tile::BOXES; ++j) boxes += own_box(j, owner) ? 1 : 0;
        const gt_u32 bar = c_bar(owner, slot), c_lds = gt_lds_addr(out);
        // Boxes clipped at C's edges still count whole (the tensor memory accelerator fills
        // the outside with zeros).
        gt_mbar_expect(bar, gt_u32(PASSES * boxes * Tile::BOX_ROWS * 128));
#pragma unroll
        for (int pass = 0; pass < PASSES; ++pass)
#pragma unroll
            for (int j = 0; j < Tile::BOXES; ++j)
                if (own_box(j, owner))
                    gt_tma_load_3d(c_lds + gt_u32(c_off(slot, pass) + Tile::box_src(j)), &args.tma_c,
                                   m0 + Tile::box_m(j), n0 + pass * GROUP_N + Tile::box_n(j), batch, bar);
    }
    // Apart: the leader issues its boxes of the tile's C into ring slot `slot`, whose last
    // tile every consumer of the leader has blended.
    GT_DEVICE static void fetch_c(const GtGemmArgs& args, unsigned char* out, int m0, int n0, int batch, int tid,
                                  int slot) {
        if constexpr (C_APART) issue_c(args, out, m0, n0, batch, tid, slot);
    }
    // In place, a leader: once the last tile's stores have read the staging area, hands it
    // to the producer for this tile's C (the consumers touch it only after C arrives).
    GT_DEVICE static void free_staging(int tid) {
        if constexpr (IN_PLACE) {
            if (leader(tid)) {
                gt_bulk_wait<0, true>();
                gt_mbar_arrive(staging_free_bar());
            }
        }
    }
    // In place, the producer: the C of this workgroup's tile `tile` at (m0, n0) of `batch`,
    // every leader's boxes, once the leaders have handed the staging area over.
    GT_DEVICE static void fetch_c_in_place(const GtGemmArgs& args, unsigned char* out, int m0, int n0, int batch,
                                           int tile) {
        if constexpr (IN_PLACE) {
            gt_mbar_wait(staging_free_bar(), gt_u32(tile) & 1u);
#pragma unroll
            for (int w = 0; w < LEADERS; ++w) issue_c(args, out, m0, n0, batch, 128 * w, 0);
        }
    }
    // Waits until the stores of the group staged before have read it (the leader issued them).
    GT_DEVICE static void reclaim(int tid) {
        if (leader(tid)) gt_bulk_wait<0, true>();
        consumers_sync(tid);
    }

    // A tile whose height is not whole 128-byte chunks of M (swapped tiles come in steps of 16
    // rows: 80, 176, 224) ends in a partial chunk of REM rows, whose box would also store the
    // CE - REM rows after the tile, the next tile's, from LDS this tile never wrote. That
    // chunk's rows go out through the consumers' own 16-byte stores instead, straight from the
    // staging area. cuBLASLt's persistent kernels for prefill GEMMs run such tiles (176x128 on
    // 28672x512x8192).
    static constexpr int REM = Cfg::MT0 % Tile::CE, REM_M0 = Cfg::MT0 - REM;
    static_assert(REM == 0 || !OWN_ROWS, "warpgroups that store their own rows own whole chunks");
    static_assert(REM * int(sizeof(TD)) % 16 == 0, "the partial chunk's rows are whole 16-byte vectors");
    GT_DEVICE static bool tma_box(int j) { return REM == 0 || Tile::box_m(j) < REM_M0; }
    // The partial chunk of the column group staged at `out` (GROUP_N columns from n0), by the
    // SYNC_THREADS consumers of thread `tid`'s set, clipped at D's edges as the boxes are.
    GT_DEVICE static void store_partial_chunk(const GtGemmArgs& args, const unsigned char* out, int m0, int n0,
                                              int batch, int tid) {
        constexpr int VEC = 16 / int(sizeof(TD)), PER_N = REM / VEC;
        TD* const d = reinterpret_cast<TD*>(args.d) + (gt_i64)batch * args.stride_d;
        for (int v = tid % SYNC_THREADS; v < PER_N * GROUP_N; v += SYNC_THREADS) {
            const int n = v / PER_N, m = REM_M0 + (v % PER_N) * VEC;
            const gt_i64 gm = m0 + m, gn = n0 + n;
            if (gn >= args.n || gm >= args.m) continue;
            TD* const dst = d + gn * args.ldd + gm;
            if (gm + VEC <= args.m) {
                *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(out + Tile::byte_off(m, n));
            } else {
                // D's last rows end inside this vector (element by element, from LDS, so the
                // vector stays out of local memory).
                for (int i = 0; gm + i < args.m; ++i) dst[i] = *reinterpret_cast<const TD*>(out + Tile::byte_off(m + i, n));
            }
        }
    }

    // Once every consumer (of this warpgroup) has staged its part, the leader stores the
    // column group staged at `out`, at (m0, n0) of `batch` (its warpgroup's boxes); the boxes
    // clip at D's edges.
    GT_DEVICE static void store(const GtGemmArgs& args, const unsigned char* out, int m0, int n0, int batch, int tid) {
        consumers_sync(tid);
        if (leader(tid)) {
            const gt_u32 lds = gt_lds_addr(out);
#pragma unroll
            for (int j = 0; j < Tile::BOXES; ++j)
                if (own_box(j, tid) && tma_box(j))
                    gt_tma_store_3d(&args.tma_d, lds + gt_u32(Tile::box_src(j)), m0 + Tile::box_m(j),
                                    n0 + Tile::box_n(j), batch);
            gt_bulk_commit();
        }
        if constexpr (REM != 0) store_partial_chunk(args, out, m0, n0, batch, tid);
    }

    // The whole tile at (m0, n0) of `batch`, group by group: this workgroup's tile `tile`
    // (counted from 0), whose C (through LDS) is in slot tile % C_SLOTS, phase tile / C_SLOTS.
    GT_DEVICE static void write(const GtGemmArgs& args, unsigned char* out, float (&acc)[ACC], const GtPos& pos, int m0,
                                int n0, int batch, int tid, int tile) {
        gt_plant_wrong_result(acc);
        const int slot = tile % C_SLOTS;
        if constexpr (C_VIA_LDS) gt_mbar_wait(c_bar(tid, slot), gt_u32(tile / C_SLOTS) & 1u);
        // Direct, C is in acc from here on, alpha with it (through the ring, it already is).
        if constexpr (C_DIRECT) gt_blend_c_direct<Cfg, Mainloop>(args, acc, pos, m0, n0, batch);
        const float alpha = C_DIRECT || C_IN_RING ? 1.0f : args.alpha;
        // With matrix stores or constant places unrolled, so each group's stores are known at
        // compile time; the other element stores stay a loop.
        constexpr int unroll = Staging::UNROLLED ? PASSES : 1;
#pragma unroll(unroll)
        for (int pass = 0; pass < PASSES; ++pass) {
            // The column groups take turns in one part, unless each has its own.
            if constexpr (!GROUPS_APART) reclaim(tid);
            unsigned char* const group = out + own_off(tid) + stage_off(pass);
            Staging::stage(group, out + c_off(slot, pass), acc, pos, alpha, args.beta, pass);
            store(args, group, m0, n0 + own_n0(tid) + pass * GROUP_N, batch, tid);
        }
    }

    // The last stores have completed (before the workgroup exits).
    GT_DEVICE static void drain(int tid) { if (leader(tid)) gt_bulk_wait<0, false>(); }
    // The last stores have read the staging area: the workgroup may leave, its LDS going to
    // a workgroup of the next wave, while the writes complete on their own (the grid's end
    // makes them visible; CUTLASS's epilogues leave the same way). The data-parallel kernel's
    // way out, one tile per workgroup.
    GT_DEVICE static void drain_reads(int tid) {
        if (leader(tid)) gt_bulk_wait<0, true>();
    }
};
