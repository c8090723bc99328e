// epilogue/gt_c_direct.h: C read straight from global memory into the accumulators' registers,
// for the persistent kernel's epilogue (epilogue/gt_epilogue_tma.h's direct mode): in go a
// finished tile's accumulators, out come alpha * acc + beta * C at the same places, which the
// epilogue then stages and stores as it stores D alone. No LDS and no barrier, but few values
// in flight (the accumulators hold the registers), so a tile waits out many round trips: the
// host picks it only where C through LDS is worse or impossible (src/space's
// persistent_c_direct: C a tensor map cannot read into D's tile; an f32 C whose tile would
// leave fewer than three operand stages). Measured on an H200 (beta 1): 4096^3 bf16 on
// 128x256, four stages direct ran 311 us against 187 on three with C in place; reading C one
// value per store, as an earlier epilogue did, ran 1.5-7x slower than C through LDS. Where
// C's rows allow a tensor map (Cfg::C_PREFETCH), the producer has the L2 fetch the tile's C
// as it starts loading the tile (scheduler/gt_persistent.h), so these reads wait on L2.
#pragma once

// acc = alpha * acc + beta * C at this thread's places of the tile at (m0, n0) of `batch`. A
// chunk's loads are issued together, so that the consumers wait out one latency per chunk
// rather than one per value; a warp's loads of one register share 32-byte sectors along C's
// rows (8 rows of M a column). Eight a chunk: with 16 or 32, ptxas (CUDA 13.0) spilled 44-804
// bytes on 128x256 and 192x192 tiles. Outside C (edge tiles) a place reads nothing.
template <class Cfg, class Mainloop>
GT_DEVICE void gt_blend_c_direct(const GtGemmArgs& args, float (&acc)[Mainloop::ACC], const GtPos& pos, int m0,
                                 int n0, int batch) {
    typedef typename Cfg::TC TC;
    constexpr int ACC = Mainloop::ACC, CHUNK = ACC % 8 == 0 ? 8 : ACC;
    const gt_i64 row0 = gt_i64(m0) + pos.wm0, col0 = gt_i64(n0) + pos.wn0;
    const TC* const c = reinterpret_cast<const TC*>(args.c) + gt_i64(batch) * args.stride_c + col0 * args.ldc + row0;
    const bool inside = m0 + Cfg::MT0 <= args.m && n0 + Cfg::MT1 <= args.n;
#pragma unroll
    for (int q = 0; q < ACC; q += CHUNK) {
        float v[CHUNK];
#pragma unroll
        for (int e = 0; e < CHUNK; ++e) {
            int m, n;
            Mainloop::acc_coord(pos.lane, q + e, m, n);
            v[e] = inside || (row0 + m < args.m && col0 + n < args.n) ? gt_to_f32(c[n * args.ldc + m]) : 0.0f;
        }
#pragma unroll
        for (int e = 0; e < CHUNK; ++e) acc[q + e] = args.alpha * acc[q + e] + args.beta * v[e];
    }
}
