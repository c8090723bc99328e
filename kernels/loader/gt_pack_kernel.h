// loader/gt_pack_kernel.h: the body of an operand-packing kernel (<name>_pack_a / _pack_b), run
// before the main kernel. On the FMA path (PackMNMajor) it copies a K-contiguous operand M- or
// N-major, the orientation of the FMA mainloop's LDS tiles, so the main kernel copies it into
// LDS as it lies instead of through registers (gt_pack_to_mn_major below), and an M- or
// N-major one whose rows start off the 16-byte grid onto aligned rows (gt_realign_mn_major),
// so the main kernel copies it in whole 16-byte vectors. On the warpgroup
// path it serves a GEMM whose operand the tensor memory accelerator cannot read where it is,
// or reads slowly: a leading dimension or batch stride that is not a
// multiple of 16 bytes (N = 109 rows of B in an NT GEMM), an M- or N-major operand whose tile
// is no whole number of swizzle chunks, or (PackUnaligned) rows that start on 16-byte but not
// 32-byte boundaries, which cost the L2 several requests per box row. It copies the operand,
// K-major, into the workspace with rows of whole 128-byte lines (gt_packed_ld); the main
// kernel then reads the copy as a K-major operand with aligned rows.
//
// K-major sources: grid (ceil(kp / (32 V)), ceil(rows / 8), batch), block (32, 8); each
// thread moves one 16-byte vector of one row (V elements), read as one vector where the
// source's rows and batches allow it, and zero-fills the padding past K. M- or N-major
// sources: grid (ceil(K / 32), ceil(rows / 32), batch), block (32, 8); each block moves a
// 32 x 32 tile through shared memory, read and written along each side's contiguous dimension.
// Grid rows past a launch's 65535 (a million rows of A copied K-major, 8 a block) are taken
// by the blocks in grid-sized strides: each body below takes its block row `by`.
#pragma once

constexpr int GT_PACK_TILE = 32, GT_PACK_ROWS = 8;

// The packed leading dimension: K rounded up to whole 128-byte lines, so that every packed
// row starts on one (GemmProblem::packed_ld on the host).
template <class T> GT_DEVICE gt_i64 gt_packed_ld(gt_i64 k) {
    constexpr gt_i64 L = 128 / gt_i64(sizeof(T));
    return (k + L - 1) / L * L;
}

// Packs `rows` x K stored K-major (element (r, k) at src[r * ld + k]) into dst[r * kp + k],
// one 16-byte vector per thread (the K-major grid above).
template <class T>
GT_DEVICE void gt_pack_k_major(const T* src, gt_i64 ld, gt_i64 stride, gt_i64 rows, gt_i64 k, T* dst, gt_i64 by) {
    constexpr int V = 16 / int(sizeof(T));
    typedef typename GtVec<16>::type Vec;
    const gt_i64 r = by * GT_PACK_ROWS + threadIdx.y;
    const gt_i64 k0 = (gt_i64(blockIdx.x) * GT_PACK_TILE + threadIdx.x) * V;
    const gt_i64 b = blockIdx.z, kp = gt_packed_ld<T>(k);
    // The same for every thread of the launch: whether every row of every batch starts on 16
    // bytes (not so where the tensor maps cannot read the operand at all).
    const bool vectors = reinterpret_cast<gt_u64>(src) % 16 == 0 && ld % V == 0 && stride % V == 0;
    if (r >= rows || k0 >= kp) return;
    src += b * stride + r * ld;
    dst += b * rows * kp + r * kp;
    // One vector's bytes, zero past K (no memcpy: NVRTC has no __builtin_memcpy).
    union {
        Vec v;
        T e[V];
    } u;
    if (vectors && k0 + V <= k) {
        u.v = *reinterpret_cast<const Vec*>(src + k0);
    } else {
        u.v = Vec{0, 0, 0, 0};
#pragma unroll
        for (int i = 0; i < V; ++i)
            if (k0 + i < k) u.e[i] = src[k0 + i];
    }
    *reinterpret_cast<Vec*>(dst + k0) = u.v;
}

// Copies the 32 x 32 tile at (i0, j0) of an ni x nj matrix stored j-contiguous (element (i, j)
// at src[i * sld + j]) into dst stored i-contiguous (element (i, j) at dst[j * dld + i]),
// through shared memory: the lanes walk j on the read and i on the write, so both sides move
// whole lines. Block (32, 8).
template <class T>
GT_DEVICE void gt_transpose_tile(const T* src, gt_i64 sld, gt_i64 ni, gt_i64 nj, gt_i64 i0, gt_i64 j0, T* dst,
                                 gt_i64 dld) {
    __shared__ T tile[GT_PACK_TILE][GT_PACK_TILE + 1];  // [i][j]
    const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
    for (int s = 0; s < GT_PACK_TILE; s += GT_PACK_ROWS) {
        const gt_i64 i = i0 + ty + s, j = j0 + tx;
        if (i < ni && j < nj) tile[ty + s][tx] = src[i * sld + j];
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < GT_PACK_TILE; s += GT_PACK_ROWS) {
        const gt_i64 i = i0 + tx, j = j0 + ty + s;
        if (i < ni && j < nj) dst[j * dld + i] = tile[tx][ty + s];
    }
}

// Packs `rows` x K stored MN-major (element (r, k) at src[k * ld + r]) into dst[r * kp + k]
// (the MN-major grid above: blocks along K by x, along the rows by y).
template <class T>
GT_DEVICE void gt_pack_mn_major(const T* src, gt_i64 ld, gt_i64 stride, gt_i64 rows, gt_i64 k, T* dst, gt_i64 by) {
    const gt_i64 b = blockIdx.z, kp = gt_packed_ld<T>(k);
    gt_transpose_tile(src + b * stride, ld, k, rows, gt_i64(blockIdx.x) * GT_PACK_TILE, by * GT_PACK_TILE,
                      dst + b * rows * kp, kp);
}

// The packed leading dimension of a copy made M- or N-major: the rows rounded up to whole
// 128-byte lines (GemmProblem::packed_mn_ld on the host).
template <class T> GT_DEVICE gt_i64 gt_packed_mn_ld(gt_i64 rows) {
    constexpr gt_i64 L = 128 / gt_i64(sizeof(T));
    return (rows + L - 1) / L * L;
}

// Copies `rows` x K stored K-major (element (r, k) at src[r * ld + k]) M- or N-major into
// dst[k * rp + r] (PackMNMajor, the FMA path, whose LDS tiles are MN-major): grid
// (ceil(rows / 32), ceil(K / 32), batch), block (32, 8), one 32 x 32 tile a block. The
// padding rows past `rows` are left as they are: the main kernel's loads never reach them.
template <class T>
GT_DEVICE void gt_pack_to_mn_major(const T* src, gt_i64 ld, gt_i64 stride, gt_i64 rows, gt_i64 k, T* dst,
                                   gt_i64 by) {
    const gt_i64 b = blockIdx.z, rp = gt_packed_mn_ld<T>(rows);
    gt_transpose_tile(src + b * stride, ld, rows, k, gt_i64(blockIdx.x) * GT_PACK_TILE, by * GT_PACK_TILE,
                      dst + b * k * rp, rp);
}

// Copies `rows` x K stored M- or N-major (element (r, k) at src[k * ld + r]) whose rows or
// batches start off the 16-byte grid into dst[k * rp + r], the same layout on aligned rows
// (PackMNMajor on such an operand, so the FMA main loop copies it in 16-byte vectors): the grid
// of gt_pack_to_mn_major, each thread moving one element of eight K rows, the lanes along the
// contiguous rows on both sides.
template <class T>
GT_DEVICE void gt_realign_mn_major(const T* src, gt_i64 ld, gt_i64 stride, gt_i64 rows, gt_i64 k, T* dst,
                                   gt_i64 by) {
    const gt_i64 b = blockIdx.z, rp = gt_packed_mn_ld<T>(rows);
    const gt_i64 r = gt_i64(blockIdx.x) * GT_PACK_TILE + threadIdx.x;
    if (r >= rows) return;
    src += b * stride;
    dst += b * k * rp;
#pragma unroll
    for (int s = 0; s < GT_PACK_TILE; s += GT_PACK_ROWS) {
        const gt_i64 kk = by * GT_PACK_TILE + threadIdx.y + s;
        if (kk < k) dst[kk * rp + r] = src[kk * ld + r];
    }
}

// Packs `rows` x K (rows = M for A, N for B): MODE 1 stored K-major, copied K-major; 2 stored
// M- or N-major, copied K-major; 3 stored K-major, copied M- or N-major; 4 stored M- or
// N-major off the 16-byte grid, copied as it lies onto aligned rows. Block row `by` of the
// grid the host sizes (src/compile/codegen.rs's pack_plans).
template <class T, int MODE>
GT_DEVICE void gt_pack_block_row(const T* src, gt_i64 ld, gt_i64 stride, gt_i64 rows, gt_i64 k, T* dst, gt_i64 by) {
    if constexpr (MODE == 4) {
        gt_realign_mn_major(src, ld, stride, rows, k, dst, by);
    } else if constexpr (MODE == 3) {
        gt_pack_to_mn_major(src, ld, stride, rows, k, dst, by);
    } else if constexpr (MODE == 2) {
        gt_pack_mn_major(src, ld, stride, rows, k, dst, by);
    } else {
        gt_pack_k_major(src, ld, stride, rows, k, dst, by);
    }
}

// The whole copy: every block row of the grid above, the launch's rows and then, in strides
// of them, those past its 65535.
template <class T, int MODE>
GT_DEVICE void gt_pack_operand(const T* src, gt_i64 ld, gt_i64 stride, gt_i64 rows, gt_i64 k, T* dst) {
    const gt_i64 block_rows = MODE == 1 ? (rows + GT_PACK_ROWS - 1) / GT_PACK_ROWS
                              : MODE == 2 ? (rows + GT_PACK_TILE - 1) / GT_PACK_TILE
                                          : (k + GT_PACK_TILE - 1) / GT_PACK_TILE;
    for (gt_i64 by = blockIdx.y; by < block_rows; by += gridDim.y)
        gt_pack_block_row<T, MODE>(src, ld, stride, rows, k, dst, by);
}
