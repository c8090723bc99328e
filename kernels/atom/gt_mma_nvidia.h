// atom/gt_mma_nvidia.h: NVIDIA matrix-core atoms (mma.sync.aligned.m16n8k16, sm_80+)
// implementing the interface described in atom/gt_mma.h. The warpgroup instruction (wgmma,
// sm_90a, MI 64x8x16) is not an atom of that interface: atom/gt_sm90.h has its primitives.
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
    static constexpr int M = 16, N = 8, K = 16, WAVE = 32, C_REGS = 4, C_COLS = 2;
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

// The atom of MI MxNxK for element type T (see atom/gt_mma.h); B's type is A's on this path.
template <class T, int M, int N, int K, class TB = T> struct GtAtomFor {
    static_assert(M == 16 && N == 8 && K == 16,
                  "NVIDIA kernels support the matrix instructions 16x8x16 (mma.sync) and 64x8x16 (wgmma) only");
    typedef GtAtomM16N8K16<T> type;
};
