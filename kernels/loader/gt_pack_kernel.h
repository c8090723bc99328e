// loader/gt_pack_kernel.h: the body of an operand-packing kernel (<name>_pack_a / _pack_b), run
// before the main kernel of a warpgroup GEMM whose operand the tensor memory accelerator
// cannot read where it is: a leading dimension or batch stride that is not a multiple of 16
// bytes (N = 109 rows of B in an NT GEMM), or an M- or N-major operand whose tile is no whole
// number of swizzle chunks. It copies the operand, K-major, into the workspace with a leading
// dimension rounded up to 16 bytes (gt_packed_ld); the main kernel then reads the copy as a
// K-major operand. For a skinny GEMM's small operand the copy costs a few microseconds.
//
// Grid (ceil(K / 32), ceil(rows / 32), batch), block (32, 8): each block moves a 32 x 32 tile
// through shared memory, read and written along each side's contiguous dimension.
#pragma once

constexpr int GT_PACK_TILE = 32, GT_PACK_ROWS = 8;

// The packed leading dimension: K rounded up to whole 16-byte vectors.
template <class T> GT_DEVICE gt_i64 gt_packed_ld(gt_i64 k) {
    constexpr gt_i64 V = 16 / gt_i64(sizeof(T));
    return (k + V - 1) / V * V;
}

// Packs `rows` x K (rows = M for A, N for B) stored K-major (MN_MAJOR = false: element (r, k)
// at src[r * ld + k]) or MN-major (element (r, k) at src[k * ld + r]) into dst[r * kp + k].
template <class T, bool MN_MAJOR>
GT_DEVICE void gt_pack_operand(const T* src, gt_i64 ld, gt_i64 stride, gt_i64 rows, gt_i64 k, T* dst) {
    __shared__ T tile[GT_PACK_TILE][GT_PACK_TILE + 1];  // [k][r]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const gt_i64 k0 = gt_i64(blockIdx.x) * GT_PACK_TILE, r0 = gt_i64(blockIdx.y) * GT_PACK_TILE;
    const gt_i64 b = blockIdx.z, kp = gt_packed_ld<T>(k);
    src += b * stride;
    dst += b * rows * kp;
#pragma unroll
    for (int j = 0; j < GT_PACK_TILE; j += GT_PACK_ROWS) {
        // Lanes walk the stored contiguous dimension.
        const gt_i64 r = MN_MAJOR ? r0 + tx : r0 + ty + j, kk = MN_MAJOR ? k0 + ty + j : k0 + tx;
        if (r < rows && kk < k) {
            const T v = src[MN_MAJOR ? kk * ld + r : r * ld + kk];
            if (MN_MAJOR) {
                tile[ty + j][tx] = v;
            } else {
                tile[tx][ty + j] = v;
            }
        }
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < GT_PACK_TILE; j += GT_PACK_ROWS) {
        const gt_i64 r = r0 + ty + j, kk = k0 + tx;
        if (r < rows && kk < k) dst[r * kp + kk] = tile[tx][ty + j];
    }
}
