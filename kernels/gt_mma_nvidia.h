// gt_mma_nvidia.h: NVIDIA matrix-core atoms (mma.sync.aligned.m16n8k16, sm_80+) implementing
// the interface described in gt_mma.h, and the primitives of the warpgroup path (wgmma,
// sm_90a) that gemm.hip uses for MI 64x8x16.
//
// Fragment maps (PTX ISA, "Matrix fragments for mma.m16n8k16" with 16-bit inputs), with
// g = lane / 4 and t = lane % 4:
//   A (16 x 16): 4 registers of 2 elements. reg0 = A(g, 2t..2t+1), reg1 = A(g+8, 2t..2t+1),
//                reg2 = A(g, 2t+8..2t+9), reg3 = A(g+8, 2t+8..2t+9)
//   B (16 x 8):  2 registers. reg0 = B(2t..2t+1, g), reg1 = B(2t+8..2t+9, g)
//   C (16 x 8):  4 floats. c0, c1 = C(g, 2t..2t+1), c2, c3 = C(g+8, 2t..2t+1)
// Fragments are loaded with ldmatrix when the LDS view allows it (16-byte aligned rows of
// 8 elements): the non-transposed form when K is contiguous, the .trans form otherwise,
// because ldmatrix hands thread (g, t) the element pair of row g, columns 2t and 2t+1 (or,
// transposed, rows 2t and 2t+1 of column g), which is exactly the pairing above.
#pragma once

GT_DEVICE void gt_ldmatrix_x4(gt_u32 (&r)[4], const void* row_addr, bool trans) {
    gt_u32 a = gt_lds_addr(row_addr);
    if (trans) {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(a));
    } else {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(a));
    }
}

GT_DEVICE void gt_ldmatrix_x2(gt_u32 (&r)[2], const void* row_addr, bool trans) {
    gt_u32 a = gt_lds_addr(row_addr);
    if (trans) {
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                     : "=r"(r[0]), "=r"(r[1])
                     : "r"(a));
    } else {
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                     : "=r"(r[0]), "=r"(r[1])
                     : "r"(a));
    }
}

GT_DEVICE gt_u32 gt_pack2(gt_u16 lo, gt_u16 hi) { return gt_u32(lo) | (gt_u32(hi) << 16); }

// ELEM selects the PTX type name: bf16 or f16.
template <class ELEM> struct GtMmaPtx;
template <> struct GtMmaPtx<gt_bf16> {
    GT_DEVICE static void run(float (&c)[4], const gt_u32 (&a)[4], const gt_u32 (&b)[2]) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
            "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
};
template <> struct GtMmaPtx<gt_f16> {
    GT_DEVICE static void run(float (&c)[4], const gt_u32 (&a)[4], const gt_u32 (&b)[2]) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
            "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
};

template <class ELEM> struct GtAtomM16N8K16 {
    static constexpr int M = 16, N = 8, K = 16, WAVE = 32, C_REGS = 4;
    struct FragA { gt_u32 r[4]; };
    struct FragB { gt_u32 r[2]; };

    // Element i of lane's A fragment (8 per lane, 2 per register, in register order).
    GT_DEVICE static void a_coord(int lane, int i, int& m, int& k) {
        m = (lane >> 2) + ((i >> 1) & 1) * 8;
        k = (lane & 3) * 2 + (i & 1) + (i >> 2) * 8;
    }
    GT_DEVICE static void b_coord(int lane, int i, int& k, int& n) {
        n = lane >> 2;
        k = (lane & 3) * 2 + (i & 1) + (i >> 1) * 8;
    }
    GT_DEVICE static void c_coord(int lane, int i, int& m, int& n) {
        m = (lane >> 2) + (i >> 1) * 8;
        n = (lane & 3) * 2 + (i & 1);
    }

    template <class View>
    GT_DEVICE static void load_a(FragA& f, const View& v, int m0, int k0, int lane) {
        if (View::ROWS_16B) {
            // Matrices 0..3 = (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15),
            // (rows 8-15, k 8-15); lanes 8j..8j+7 give the 8 row addresses of matrix j.
            const int j = lane >> 3, r = lane & 7;
            if (View::K_CONTIG) {
                gt_ldmatrix_x4(f.r, v.ptr(m0 + r + (j & 1) * 8, k0 + (j >> 1) * 8), false);
            } else {
                // Stored rows run along M: each matrix row is one k, 8 consecutive m.
                gt_ldmatrix_x4(f.r, v.ptr(m0 + (j & 1) * 8, k0 + r + (j >> 1) * 8), true);
            }
        } else {
            gt_u16 e[8];
            gt_frag_load_generic<gt_u16, 8>(e, BitsView<View>{v}, m0, k0, lane, ACoord{});
#pragma unroll
            for (int i = 0; i < 4; ++i) f.r[i] = gt_pack2(e[2 * i], e[2 * i + 1]);
        }
    }

    template <class View>
    GT_DEVICE static void load_b(FragB& f, const View& v, int k0, int n0, int lane) {
        if (View::ROWS_16B) {
            // Matrices 0, 1 = (k 0-7), (k 8-15) of the 8 columns; lanes 0..15 give addresses
            // (lanes 16..31 repeat them: ldmatrix .x2 ignores them but they must be valid).
            const int j = (lane >> 3) & 1, r = lane & 7;
            if (View::K_CONTIG) {
                gt_ldmatrix_x2(f.r, v.ptr(n0 + r, k0 + j * 8), false);
            } else {
                gt_ldmatrix_x2(f.r, v.ptr(n0, k0 + r + j * 8), true);
            }
        } else {
            gt_u16 e[4];
            gt_frag_load_generic<gt_u16, 4>(e, BitsView<View>{v}, n0, k0, lane, BCoord{});
            f.r[0] = gt_pack2(e[0], e[1]);
            f.r[1] = gt_pack2(e[2], e[3]);
        }
    }

    GT_DEVICE static void mma(float (&c)[C_REGS], const FragA& a, const FragB& b) {
        GtMmaPtx<ELEM>::run(c, a.r, b.r);
    }

  private:
    // Adapters for the generic loader: coordinates as (mn, k) and element values as bits.
    struct ACoord {
        GT_DEVICE void operator()(int lane, int i, int& mn, int& k) const {
            a_coord(lane, i, mn, k);
        }
    };
    struct BCoord {
        GT_DEVICE void operator()(int lane, int i, int& mn, int& k) const {
            b_coord(lane, i, k, mn);
        }
    };
    template <class View> struct BitsView {
        const View& v;
        GT_DEVICE gt_u16 at(int mn, int k) const { return v.at(mn, k).bits; }
    };
};

// ---- warpgroup instruction (wgmma, sm_90a), MI 64x8x16 ------------------------------------
// Not an atom of the interface above: a warpgroup (4 consecutive warps) multiplies operand
// tiles that stay in LDS, named by 64-bit matrix descriptors (PTX ISA, "Matrix Descriptor
// Format"): bits 0-13 start address >> 4, 16-29 leading-dimension byte offset >> 4, 32-45
// stride-dimension byte offset >> 4, 49-51 base offset, 62-63 swizzle mode (1 = 128-byte).
// The template's wgmma tiles are K-major with the 128-byte swizzle: rows of 128 bytes of K,
// 16-byte chunk c of row r stored at chunk c ^ (r % 8), groups of 8 rows 1024 bytes apart
// (the stride offset; the leading offset is unused for swizzled K-major operands), every
// tile aligned to 1024 bytes so that the hardware's address-based swizzle matches ours.
#if GT_WGMMA
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "MI64x8x16 (wgmma) needs the sm_90a target"
#endif
constexpr int GT_SW128_ROW_BYTES = 128;
constexpr int GT_SW128_PERIOD = 1024;

// A descriptor of this layout in two halves: the high word (stride offset, swizzle mode) is
// the same for every operand tile, the low word holds the start address >> 4 (14 bits: every
// LDS address fits, so adding a tile offset >> 4 to the low word never carries out of the
// field) and the unused leading offset (1).
constexpr gt_u32 GT_WGMMA_DESC_HI = gt_u32(GT_SW128_PERIOD >> 4) | (1u << 30);
GT_DEVICE gt_u32 gt_wgmma_desc_lo(gt_u32 lds_addr) { return ((lds_addr & 0x3ffffu) >> 4) | (1u << 16); }
GT_DEVICE gt_u64 gt_wgmma_desc(gt_u32 lo) { return (gt_u64(GT_WGMMA_DESC_HI) << 32) | lo; }

// Orders this warpgroup's earlier register accesses (of the accumulators) before its next
// wgmma; required before the first wgmma of a batch.
GT_DEVICE void gt_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
// Closes the batch of wgmmas issued since the last commit into one group.
GT_DEVICE void gt_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// Waits until at most N committed groups of this warpgroup are still running.
template <int N> GT_DEVICE void gt_wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accesses of `x` across the asm around it: accumulators
// written by an asynchronous wgmma are only valid after the wait.
GT_DEVICE void gt_reg_fence(float& x) { asm volatile("" : "+f"(x)::"memory"); }

// ---- tensor memory accelerator loads (GT_TMA) -------------------------------------------------
// One thread asks for a whole operand box with one instruction; the copy lands in LDS in the
// 128-byte swizzle the tensor map names (the same layout as GtSw128Tile) and counts its bytes
// on an mbarrier, on which every thread waits. Out-of-bounds elements arrive as zeros.
// An mbarrier (8 bytes of LDS) expecting `count` arrivals per phase.
GT_DEVICE void gt_mbar_init(gt_u32 bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialisations visible to the other threads and to the async proxy.
GT_DEVICE void gt_mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
// Arrives on `bar`, announcing `bytes` more to come from asynchronous copies this phase.
GT_DEVICE void gt_mbar_expect(gt_u32 bar, gt_u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
// Arrives on `bar`, one of the arrivals its phase counts.
GT_DEVICE void gt_mbar_arrive(gt_u32 bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// Waits until the phase of `bar` with this parity has completed.
GT_DEVICE void gt_mbar_wait(gt_u32 bar, gt_u32 parity) {
    asm volatile(
        "{\n.reg .pred done;\nWAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
// Copies the box at coordinates (c0, c1, c2) of the tensor `map` (a kernel parameter) to LDS
// address `dst`, completing on mbarrier `bar`.
GT_DEVICE void gt_tma_load_3d(gt_u32 dst, const void* map, int c0, int c1, int c2, gt_u32 bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
        "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}
#endif

#if GT_MI_M > 1 && !GT_WGMMA
#if GT_MI_M == 16 && GT_MI_N == 8 && GT_MI_K == 16
typedef GtAtomM16N8K16<GT_TYPE_A> GtAtom;
#else
static_assert(GT_MI_M == 16 && GT_MI_N == 8 && GT_MI_K == 16,
              "NVIDIA kernels support the matrix instructions 16x8x16 (mma.sync) and 64x8x16 (wgmma) only");
#endif
#endif
