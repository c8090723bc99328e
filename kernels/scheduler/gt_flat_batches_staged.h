// scheduler/gt_flat_batches_staged.h: the flat batch path's staged schedule (FlatBatch = 2), for
// many batches up to a few hundred rows and columns on matrix cores. A workgroup is one group of
// WavesN waves that walks batches x, x + grid, x + 2 grid, ... (as many workgroups as fit on
// the GPU at once). Each batch's operands are staged into LDS as they lie in memory while the
// batch before it multiplies and stores (loader/gt_flat_stage.h), then put into the padded
// tiles of whole instructions (layout/gt_flat_tile.h) whose padding was zeroed once, and
// multiplied and stored as in the unstaged form (mainloop/gt_flat_batch_mma.h, epilogue/
// gt_flat_store.h). The unstaged form (scheduler/gt_flat_batches.h) copies a batch, waits, then
// multiplies: past about 96 x 96 a workgroup's LDS and registers leave one or two on a compute
// unit, and its memory sits idle while they multiply and store.
#pragma once

template <class Cfg> struct GtFlatBatchesStaged {
    typedef GtFlatBatchMma<Cfg> Mainloop;
    typedef typename Cfg::TA TA;
    typedef typename Cfg::TB TB;
    static_assert(Cfg::USE_MMA && Cfg::WG0 == 1 && Cfg::GSU == 1 && !Cfg::STREAM_K,
                  "the staged flat batch path is one group of waves a workgroup on matrix cores, each batch whole");

    GT_DEVICE static void run(const GtGemmArgs& args, unsigned char* lds, int tid) {
        constexpr int LANES = Mainloop::LANES;
        const GtFlatTile sa = Mainloop::tile_a(args), sb = Mainloop::tile_b(args);
        gt_u16* const ta = reinterpret_cast<gt_u16*>(lds);
        gt_u16* const tb = reinterpret_cast<gt_u16*>(lds + sa.bytes(2));
        // The staging areas follow the tiles (constraints::flat_batch_lds_bytes).
        const gt_i64 na = (sa.lines - 1) * args.lda + sa.len, nb = (sb.lines - 1) * args.ldb + sb.len;
        unsigned char* const raw_a = lds + Mainloop::group_bytes(args);
        unsigned char* const raw_b = raw_a + gt_flat_stage_bytes<TA>(na);
        const typename Mainloop::Operands ops{typename Mainloop::ViewA{reinterpret_cast<const TA*>(ta), sa.pitch},
                                              typename Mainloop::ViewB{reinterpret_cast<const TB*>(tb), sb.pitch},
                                              Mainloop::padded_k(args) / Mainloop::Atom::K};
        const auto stage_a = [&](gt_i64 batch) {
            return GtFlatStage<TA>{reinterpret_cast<const TA*>(args.a) + batch * args.stride_a, na, raw_a};
        };
        const auto stage_b = [&](gt_i64 batch) {
            return GtFlatStage<TB>{reinterpret_cast<const TB*>(args.b) + batch * args.stride_b, nb, raw_b};
        };
        // The tiles' padding is the same for every batch: zeroed once.
        gt_flat_zero_padding(ta, sa, tid, LANES);
        gt_flat_zero_padding(tb, sb, tid, LANES);
        gt_u16 edge_a = 0, edge_b = 0;
        gt_i64 batch = blockIdx.x;
        if (batch < args.batch) {
            stage_a(batch).issue(tid, LANES, edge_a);
            stage_b(batch).issue(tid, LANES, edge_b);
        }
        gt_copy_commit();
        for (; batch < args.batch; batch += gridDim.x) {
            // The batch's copies have landed, and every wave is done with the tiles.
            gt_copy_wait<0>();
            gt_barrier();
            stage_a(batch).place(sa, int(args.lda), ta, tid, LANES, edge_a);
            stage_b(batch).place(sb, int(args.ldb), tb, tid, LANES, edge_b);
            // The tiles are whole, and the staging areas free for the next batch.
            gt_barrier();
            const gt_i64 next = batch + gridDim.x;
            if (next < args.batch) {
                stage_a(next).issue(tid, LANES, edge_a);
                stage_b(next).issue(tid, LANES, edge_b);
            }
            gt_copy_commit();
            gt_flat_batch_out<Cfg, Mainloop>(args, ops, batch, tid);
        }
    }
};
