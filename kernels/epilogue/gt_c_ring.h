// epilogue/gt_c_ring.h: C through the operand ring, for the persistent kernel
// (scheduler/gt_persistent.h) wherever its warpgroups stack along M and a tensor map reads C
// in D's layout (src/space's persistent_c_steps). After a tile's last K stage the producer
// loads the tile's C into the ring's next STEPS slots as if they were K stages: column groups of
// GROUP_N columns, PER_STAGE groups a slot, each laid out as the staging area's tiles
// (layout/gt_wgmma_tile.h's GtOutTile, the tensor map of C in boxes of one 128-byte chunk of M
// by GROUP_N columns). So C lands as the K stages do, STAGES ahead, while the tile's last K
// steps are multiplied. The consumers wait for each of those slots as for a K stage, fold
// beta * C into alpha * acc at their places, and hand the slot back; the epilogue then
// stores D alone (epilogue/gt_epilogue_tma.h). No LDS of its own, so the ring keeps its
// stages where C's tile in LDS of its own would cost one, and no round trip in the epilogue:
// read directly from global memory instead (epilogue/gt_c_direct.h), each thread of an f32 C's
// 128x256 tile waited out sixteen round trips to the L2, a fifth of the warps' samples under
// ncu on 11008x4096x4096 NT (H200).
//
//   producer:  ... K stage ktiles - 1 | C step 0 | ... | C step STEPS - 1 | next tile's K stage 0 ...
//   consumers: ... multiply           | blend    | ... | blend            | store D | multiply ...
#pragma once

template <class Cfg, class Mainloop> struct GtRingC {
    typedef typename Cfg::TC TC;
    static constexpr int ACC = Mainloop::ACC, STAGE_BYTES = Mainloop::STAGE_BYTES;
    static constexpr int GROUP_N = 32;
    typedef GtOutTile<TC, Cfg::MT0, GROUP_N> Tile;
    static constexpr int GROUPS = Cfg::MT1 / GROUP_N, PER_STAGE = STAGE_BYTES / Tile::BYTES;
    // The ring slots a tile's C takes (the host's persistent_c_steps counts the same).
    static constexpr int STEPS = Cfg::BETA_ZERO || Cfg::C_STEPS == 0 ? 0 : (GROUPS + PER_STAGE - 1) / (PER_STAGE > 0 ? PER_STAGE : 1);
    static_assert(STEPS == 0 || (STEPS == Cfg::C_STEPS && Cfg::MT1 % GROUP_N == 0 && STEPS <= Cfg::STAGES),
                  "C through the ring: whole column groups, as many slots as the host counted, at most the ring");
    // Where the chunks' swizzle period starts: every group at a multiple of it in its slot.
    static_assert(STEPS == 0 || Tile::BYTES % GT_SW128_PERIOD == 0, "a C group keeps the swizzle period aligned");

    // The producer (one thread): C step `step` of the tile at (m0, n0) of `batch` into the
    // ring slot at LDS address `slot`, completing on the slot's barrier `bar`. Boxes clipped
    // at C's edges still count whole (the tensor memory accelerator fills the outside with
    // zeros).
    GT_DEVICE static void load(const GtGemmArgs& args, gt_u32 slot, gt_u32 bar, int m0, int n0, int batch, int step) {
        const int g0 = step * PER_STAGE;
        const int count = GROUPS - g0 < PER_STAGE ? GROUPS - g0 : PER_STAGE;
        gt_mbar_expect(bar, gt_u32(count * Tile::BYTES));
        for (int g = 0; g < count; ++g)
#pragma unroll
            for (int j = 0; j < Tile::BOXES; ++j)
                gt_tma_load_3d(slot + gt_u32(g * Tile::BYTES + Tile::box_src(j)), &args.tma_c, m0 + Tile::box_m(j),
                               n0 + (g0 + g) * GROUP_N + Tile::box_n(j), batch, bar);
    }

    // The consumers, once the slot of C step `step` has landed at `slot`: acc = alpha * acc +
    // beta * C at each of this thread's places in the step's column groups. The warpgroups
    // (unswapped, not splitting N: the host's rule) hold their accumulators in slices of 64
    // rows by 8-column steps (mainloop/gt_wgmma.h's acc_coord), which move a place by whole
    // chunks of M and whole rows of the staging layout and leave its swizzle alone, so each
    // thread works out its four places of the first step and every other one is a constant
    // away: one load a place, the step's own places only, known at compile time with the step
    // unrolled. (Worked out place by place, the addresses took ten instructions a load, about
    // 1,600 a thread for a 128x256 tile's blend; with warpgroups side by side along N the
    // places' groups were known only at run time and a 320x128 tile spilled 1.6 KiB.)
    GT_DEVICE static void blend(const GtGemmArgs& args, float (&acc)[ACC], const GtPos& pos,
                                const unsigned char* slot, int step) {
        constexpr int SLICE = Mainloop::Compute::ACC_SLICE;
        static_assert(STEPS == 0 || (!Cfg::SWAP_AB && Cfg::WG1 == 1 && 64 % Tile::CE == 0 && GROUP_N % 8 == 0),
                      "C through the ring: unswapped warpgroups stacked along M, slices of whole chunks");
        int first[4];
        Tile::template first_places<Mainloop>(pos.lane, pos.wm0, first);
#pragma unroll
        for (int i = 0; i < ACC; ++i) {
            const int s = i / SLICE, n8 = 8 * ((i % SLICE) / 4), q = i % 4;
            const int g = n8 / GROUP_N - step * PER_STAGE;
            if (g >= 0 && g < PER_STAGE) {
                const int off = g * Tile::BYTES + Tile::place_step(s, n8 % GROUP_N);
                const TC c = *reinterpret_cast<const TC*>(slot + off + first[q]);
                acc[i] = args.alpha * acc[i] + args.beta * gt_to_f32(c);
            }
        }
    }
};
