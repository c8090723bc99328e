// mainloop/gt_flat_batch_mma.h: the flat batch path's multiply on matrix cores (FlatBatch = 1
// with a MatrixInstruction; 16-bit inputs). A group of WavesN waves computes one small batch
// whole, op(A) op(B) of at most MacroTile0 x MacroTile1 outputs over all of K, from tiles of
// its operands padded with zeros to whole instructions (layout/gt_flat_tile.h, written by
// loader/gt_flat_scatter.h from the flat ranges the operands occupy). The group's waves split
// the batch tile into a GM x GN grid of wave tiles of whole instructions, the squarest such
// (gt_grid_m); each wave walks K an instruction at a time, reading the next step's fragments
// while the current one multiplies. Where mainloop/gt_flat_batch.h spends a multiply-add a
// lane per output and k, this spends one instruction a wave per 16 x 8 x 16 (mma.sync): a
// 77 x 77 x 77 batch in 16-bit, padded to 96 x 80 x 80, takes 300 instructions instead of
// 456,533 multiply-adds.
#pragma once

template <class Cfg> struct GtFlatBatchMma {
    typedef typename Cfg::TA TA;
    typedef typename Cfg::TB TB;
    typedef typename GtAtomFor<TA, Cfg::MI_M, Cfg::MI_N, Cfg::MI_K, TB>::type Atom;
    static_assert(sizeof(TA) == 2 && sizeof(TB) == 2, "the flat batch path's matrix instructions take 16-bit inputs");
    static constexpr int MT0 = Cfg::MT0, MT1 = Cfg::MT1, WAVES = Cfg::WG1;
    // The lanes of one batch: a group of WavesN waves.
    static constexpr int LANES = WAVES * Cfg::WAVE;
    static constexpr int GM = gt_grid_m(MT0, MT1, WAVES, Atom::M, Atom::N), GN = WAVES / GM;
    static_assert(GM > 0, "the batch tile must give every wave of its group whole matrix instructions");
    static constexpr int WT0 = MT0 / GM, WT1 = MT1 / GN, TM = WT0 / Atom::M, TN = WT1 / Atom::N;
    static constexpr int ACC = TM * TN * Atom::C_REGS;
    // A lane's accumulators of one instruction: RA rows of CA neighbouring columns (atom/gt_mma.h).
    static constexpr int CA = Atom::C_COLS, RA = Atom::C_REGS / CA;
    // A is K-contiguous when transA = T, B when transB = N.
    typedef GtFlatView<TA, Cfg::TRANS_A> ViewA;
    typedef GtFlatView<TB, !Cfg::TRANS_B> ViewB;
    // The per-wave compute of the warp-level LDS path (mainloop/gt_warp_mma.h) on this path's
    // wave tiles, one instruction's K at a time.
    struct WaveCfg : Cfg {
        static constexpr int WT0 = GtFlatBatchMma::WT0, WT1 = GtFlatBatchMma::WT1, DU = Atom::K;
    };
    typedef GtWarpMma<WaveCfg, ViewA, ViewB> Wave;
    static_assert(Wave::ACC == ACC, "the wave's accumulators are the batch tile's share");
    typedef typename Atom::FragA FragA;
    typedef typename Atom::FragB FragB;

    // The two tiles of a batch (lines as stored, K padded to the instruction's K, M and N to the
    // batch tile's sides).
    struct Operands {
        ViewA a;
        ViewB b;
        int steps;  // instructions along K
    };
    GT_DEVICE static int padded_k(const GtGemmArgs& args) { return int((args.k + Atom::K - 1) / Atom::K) * Atom::K; }
    GT_DEVICE static GtFlatTile tile_a(const GtGemmArgs& args) {
        const int m = int(args.m), k = int(args.k), kp = padded_k(args);
        return Cfg::TRANS_A ? GtFlatTile::make(m, k, MT0, kp, 2) : GtFlatTile::make(k, m, kp, MT0, 2);
    }
    GT_DEVICE static GtFlatTile tile_b(const GtGemmArgs& args) {
        const int n = int(args.n), k = int(args.k), kp = padded_k(args);
        return Cfg::TRANS_B ? GtFlatTile::make(k, n, kp, MT1, 2) : GtFlatTile::make(n, k, MT1, kp, 2);
    }
    // LDS bytes of one group's tiles (constraints::flat_batch_lds_bytes on the host).
    GT_DEVICE static int group_bytes(const GtGemmArgs& args) { return tile_a(args).bytes(2) + tile_b(args).bytes(2); }

    // Copies the batch's operands (`a`, `b`: its first elements) into the group's LDS at `mine`.
    GT_DEVICE static Operands copy(const GtGemmArgs& args, const TA* a, const TB* b, unsigned char* mine, int lane) {
        const GtFlatTile sa = tile_a(args), sb = tile_b(args);
        TA* const ta = reinterpret_cast<TA*>(mine);
        TB* const tb = reinterpret_cast<TB*>(mine + sa.bytes(2));
        gt_scatter_flat(a, sa, int(args.lda), ta, lane, LANES);
        gt_scatter_flat(b, sb, int(args.ldb), tb, lane, LANES);
        return Operands{ViewA{ta, sa.pitch}, ViewB{tb, sb.pitch}, padded_k(args) / Atom::K};
    }

    // The wave tile's corner for the group's lane `lane`.
    GT_DEVICE static int wm0(int lane) { return (lane / Cfg::WAVE) % GM * WT0; }
    GT_DEVICE static int wn0(int lane) { return (lane / Cfg::WAVE) / GM * WT1; }

    // Adds the batch's products into this lane's accumulators, two steps of K an iteration so
    // that each set of fragments keeps its registers.
    GT_DEVICE static void accumulate(const GtGemmArgs&, const Operands& o, int lane, float (&acc)[ACC]) {
        const int m0 = wm0(lane), n0 = wn0(lane), l = lane % Cfg::WAVE;
        FragA fa[2][TM];
        FragB fb[2][TN];
        Wave::load_frags(fa[0], fb[0], o.a, o.b, m0, n0, 0, l);
        for (int s = 0; s < o.steps; s += 2) {
            if (s + 1 < o.steps) Wave::load_frags(fa[1], fb[1], o.a, o.b, m0, n0, s + 1, l);
            Wave::mma_tile(acc, fa[0], fb[0]);
            if (s + 1 < o.steps) {
                if (s + 2 < o.steps) Wave::load_frags(fa[0], fb[0], o.a, o.b, m0, n0, s + 2, l);
                Wave::mma_tile(acc, fa[1], fb[1]);
            }
        }
    }

    // The lane's outputs as a grid (epilogue/gt_flat_store.h): ROWS rows by COLS columns, each
    // instruction's RA x CA of them in turn.
    static constexpr int ROWS = TM * RA, COLS = TN * CA;
    GT_DEVICE static int row(int lane, int i) {
        int m, n;
        Atom::c_coord(lane % Cfg::WAVE, (i % RA) * CA, m, n);
        return wm0(lane) + (i / RA) * Atom::M + m;
    }
    GT_DEVICE static int col(int lane, int j) {
        int m, n;
        Atom::c_coord(lane % Cfg::WAVE, j % CA, m, n);
        return wn0(lane) + (j / CA) * Atom::N + n;
    }
    GT_DEVICE static constexpr int index(int i, int j) {
        return ((i / RA) * TN + j / CA) * Atom::C_REGS + (i % RA) * CA + j % CA;
    }
};
