// epilogue/gt_out_staging.h: how a consumer thread's accumulators reach the persistent and
// data-parallel kernels' staging area (layout/gt_wgmma_tile.h's GtOutTile, one column group of
// GROUP_N columns at a time), as alpha * acc (+ beta * C, read at the same places where C came
// into LDS: C_VIA_LDS), in D's type, for epilogue/gt_epilogue_tma.h to hand to the tensor
// memory accelerator. In: the accumulators in the warpgroup instruction's register layout
// (mainloop/gt_wgmma.h's acc_coord) and this thread's warp position; out: LDS writes of column
// group `pass`. Three ways, by what fits: matrix stores (16-bit D), places a constant apart
// (32-bit D, unswapped), or place by place.
#pragma once

// OWN_COLS: each warpgroup stages its own columns, in a column group of its own.
template <class Cfg, class Mainloop, class Tile, int GROUP_N, int PASSES, bool C_VIA_LDS, bool OWN_COLS>
struct GtOutStaging {
    typedef typename Cfg::TD TD;
    static constexpr int ACC = Mainloop::ACC;
    // The first column of thread `tid`'s warpgroup where each stages its own columns.
    GT_DEVICE static int own_n0(int tid) { return OWN_COLS ? (tid / 128) * Mainloop::Compute::WGT1 : 0; }

    // 16-bit D goes through matrix stores: per 64-row slice s and 8 instruction columns j a
    // warp holds two 8x8 fragments (rows 0-7 and 8-15 of its 16), and one stmatrix writes
    // four of them (columns j and j + 1) as 16-byte runs along M, where element stores would
    // take 32 instructions. Unswapped, a fragment's rows are m and its columns n: written
    // transposed, each run is 8 m of one n. Swapped, its rows are n and each run is a row.
    // A group of 8 or 16 n must lie inside one column group.
    static constexpr bool MATRIX_STORES = !GT_VENDOR_AMD && sizeof(TD) == 2 && (!Cfg::SWAP_AB || GROUP_N % 16 == 0);
    static constexpr int SLICES = Mainloop::Compute::SLICES, JS = Mainloop::Compute::ACC_SLICE / 4;

    // This warp's first column (in its warpgroup's columns with OWN_COLS): a constant 0 when
    // the warpgroups do not split N (unswapped) or each stores its own columns, so that with
    // the column groups unrolled the tests below fold away and only the matrix stores of each
    // group are emitted.
    GT_DEVICE static int wn0(const GtPos& pos) {
        if constexpr (!Cfg::SWAP_AB && (Cfg::WG1 == 1 || OWN_COLS)) return 0;
        return pos.wn0 - own_n0(pos.tid);
    }
    // Is fragment group (s, j) of this warp inside column group `pass`?
    GT_DEVICE static bool in_pass(const GtPos& pos, int s, int j, int pass) {
        if (PASSES == 1) return true;
        const int n = (Cfg::SWAP_AB ? wn0(pos) + s * 64 : wn0(pos) + 8 * j) - pass * GROUP_N;
        return n >= 0 && n < GROUP_N;
    }
    // The LDS offset in a column group lane `lane` names for row lane % 8 of fragment `f`
    // (rows 8 (f % 2).., columns 8 (j + f / 2)..) of slice s.
    GT_DEVICE static int row_off(const GtPos& pos, int s, int j, int f, int pass) {
        const int r = pos.lane & 7, rows = s * 64 + 8 * (f & 1), cols = 8 * (j + (f >> 1));
        const int m = Cfg::SWAP_AB ? pos.wm0 + cols : pos.wm0 + rows;
        const int n = (Cfg::SWAP_AB ? wn0(pos) + rows + r : wn0(pos) + cols + r) - pass * GROUP_N;
        return Tile::byte_off(m, n);
    }
    // `out` is where column group `pass` is staged, `c_in` where its C is (read where C_VIA_LDS).
    GT_DEVICE static void stage_matrices(unsigned char* out, const unsigned char* c_in, const float (&acc)[ACC],
                                         const GtPos& pos, float alpha, float beta, int pass) {
        constexpr bool TRANS = !Cfg::SWAP_AB;
        const gt_u32 base = gt_lds_addr(out);
        // Fragment rows 0-7 (h = 0) or 8-15 (h = 1) of group (s, j), packed pairs of columns,
        // plus beta times C's pair `c` (the same fragment, read with the mirrored instruction).
        auto frag = [&](int s, int j, int h, gt_u32 c) {
            const int i = s * Mainloop::Compute::ACC_SLICE + 4 * j + 2 * h;
            float x[2] = {alpha * acc[i], alpha * acc[i + 1]};
            if constexpr (C_VIA_LDS) {
                float y[2];
                gt_unpack<TD, 2>(c, y);
                x[0] += beta * y[0];
                x[1] += beta * y[1];
            }
            return gt_pack2_from_f32<TD>(x[0], x[1]);
        };
#pragma unroll
        for (int s = 0; s < SLICES; ++s) {
#pragma unroll
            for (int j = 0; j < JS; j += 2) {
                const bool a = in_pass(pos, s, j, pass), b = j + 1 < JS && in_pass(pos, s, j + 1, pass);
                const int f = (pos.lane >> 3) & 3;
                if (a && b) {
                    const int off = row_off(pos, s, j, f, pass);
                    gt_u32 c[4] = {0, 0, 0, 0};
                    if constexpr (C_VIA_LDS) gt_ldmatrix_x4(c, c_in + off, TRANS);
                    gt_stmatrix_x4<TRANS>(base + gt_u32(off), frag(s, j, 0, c[0]), frag(s, j, 1, c[1]),
                                          frag(s, j + 1, 0, c[2]), frag(s, j + 1, 1, c[3]));
                } else {
                    // One of the two straddles the column groups' border (indices stay
                    // compile-time constants: a selected index would put acc in local memory).
#pragma unroll
                    for (int q = 0; q < 2; ++q) {
                        if (!(q == 0 ? a : b)) continue;
                        const int off = row_off(pos, s, j + q, f & 1, pass);
                        gt_u32 c[2] = {0, 0};
                        if constexpr (C_VIA_LDS) gt_ldmatrix_x2(c, c_in + off, TRANS);
                        gt_stmatrix_x2<TRANS>(base + gt_u32(off), frag(s, j + q, 0, c[0]), frag(s, j + q, 1, c[1]));
                    }
                }
            }
        }
    }

    // One element stored at LDS offset `off`: alpha * a (+ beta * C read at the same place).
    GT_DEVICE static void put(unsigned char* out, const unsigned char* c_in, int off, float a, float alpha,
                              float beta) {
        float x = alpha * a;
        if constexpr (C_VIA_LDS) x += beta * gt_to_f32(*reinterpret_cast<const TD*>(c_in + off));
        *reinterpret_cast<TD*>(out + off) = gt_from_f32<TD>(x);
    }

    // A 32-bit D (no matrix stores) from unswapped warpgroups whose columns start at a
    // constant (stacked along M, or each storing its own columns): a thread's places move by
    // whole chunks of M from slice to slice and by whole rows of the staging layout from one
    // 8-column step to the next, leaving the swizzle alone (as in epilogue/gt_c_ring.h's
    // blend). So each thread works out its four places of the first step once and every
    // other one is a constant away, the column groups unrolled so that each group's stores are
    // known at compile time. Place by place, with each group's places tested at run time, a
    // 128x256 tile's f32 stores took about 6,000 instructions a thread.
    static constexpr bool CONST_PLACES = !MATRIX_STORES && !Cfg::SWAP_AB && (Cfg::WG1 == 1 || OWN_COLS) &&
                                         64 % Tile::CE == 0 && GROUP_N % 8 == 0;
    GT_DEVICE static void stage_places(unsigned char* out, const unsigned char* c_in, const float (&acc)[ACC],
                                       const GtPos& pos, float alpha, float beta, int pass) {
        constexpr int SLICE = Mainloop::Compute::ACC_SLICE;
        int first[4];
        Tile::template first_places<Mainloop>(pos.lane, pos.wm0, first);
#pragma unroll
        for (int i = 0; i < ACC; ++i) {
            const int s = i / SLICE, n8 = 8 * ((i % SLICE) / 4) - pass * GROUP_N, q = i % 4;
            if (n8 >= 0 && n8 < GROUP_N) {
                put(out, c_in, first[q] + Tile::place_step(s, n8), acc[i], alpha, beta);
            }
        }
    }

    // Each consumer thread writes its outputs of column group `pass`, alpha * acc (+ beta * C),
    // in D's type.
    GT_DEVICE static void stage(unsigned char* out, const unsigned char* c_in, const float (&acc)[ACC],
                                const GtPos& pos, float alpha, float beta, int pass) {
        if constexpr (MATRIX_STORES) {
            stage_matrices(out, c_in, acc, pos, alpha, beta, pass);
        } else if constexpr (CONST_PLACES) {
            stage_places(out, c_in, acc, pos, alpha, beta, pass);
        } else {
#pragma unroll
            for (int i = 0; i < ACC; ++i) {
                int m, n;
                Mainloop::acc_coord(pos.lane, i, m, n);
                n += pos.wn0 - own_n0(pos.tid) - pass * GROUP_N;
                if (PASSES == 1 || (n >= 0 && n < GROUP_N))
                    put(out, c_in, Tile::byte_off(pos.wm0 + m, n), acc[i], alpha, beta);
            }
        }
        // The tensor-map stores read LDS through the async proxy.
        gt_fence_proxy_async();
    }

    // Whether each column group's stores are known at compile time with the groups unrolled
    // (the place-by-place stores stay a loop).
    static constexpr bool UNROLLED = MATRIX_STORES || CONST_PLACES;
};
