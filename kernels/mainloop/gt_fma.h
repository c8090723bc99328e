// mainloop/gt_fma.h: the per-wave compute of one LDS stage with f32 fused multiply-adds, for
// element types without matrix instructions (MI 1x1x1). The wave tile is split over a LM x LN
// grid of lanes, each owning an FM x FN sub-tile (register blocking: every operand value read
// from LDS feeds FN or FM multiply-adds). LM is the power of two that makes the sub-tile
// squarest.
//
// Both operand tiles are MN-major in LDS ([k][m], [k][n]; loader/gt_transpose_loader.h), so a
// lane that owns runs of 4 consecutive rows reads each run with one 4-element vector per k:
// FM / 4 + FN / 4 reads feed FM x FN multiply-adds, and a k step needs FM + FN registers of
// operands (twice that with PrefetchLocalRead), which leaves room for 128 accumulators. Lanes
// that differ only in the other operand's index read the same address (an LDS broadcast);
// neighbouring lanes read neighbouring runs. Rows that cannot be read in vectors (FM or FN
// not a multiple of 4, or rows of a pitch that is not) are read one element at a time.
// With PrefetchLocalRead and three or more stages the first k of the next stage is read during
// this stage's last multiplies and carried over (Carry), so no stage starts waiting on LDS.
#pragma once

// The rows (m of A, n of B) one lane owns in a wave tile and how it reads them: F rows per
// lane, L lanes along the rows.
template <class View, int F, int L> struct GtFmaOperand {
    typedef typename View::T T;
    static_assert(!View::K_CONTIG, "the FMA path reads MN-major operand tiles");
    static constexpr int VEC_BYTES = 4 * int(sizeof(T));
    static constexpr bool VEC = F % 4 == 0 && View::Layout::ROW_BYTES % VEC_BYTES == 0;

    // Row of element i of lane l: runs of 4 rows L * 4 apart (VEC), else rows L apart.
    GT_DEVICE static int row(int l, int i) { return VEC ? ((i / 4) * L + l) * 4 + i % 4 : l + i * L; }

    // The address of element i of lane l (row base + row(l, i)) at k; `p` is the lane's first
    // element at k = 0, v.ptr(base + row(l, 0), 0), formed once by the caller. In a linear
    // (unswizzled) tile every element is a constant away from it and is addressed so, which
    // the compiler folds into the loads. Addressed as tile offsets, NVRTC (unlike nvcc, same
    // CUDA 13.0) redid each 32-bit offset and its widening to 64 bits for every read: on an
    // H200 the 256x128x8 f32 kernel took 239 registers instead of 229 and ran 4096^3 in 3344
    // us against 2974. (Formed inside this function, the pointer cost NVRTC 235 registers.)
    GT_DEVICE static const T* at(const T* p, const View& v, int base, int l, int i, int k) {
        if constexpr (View::Layout::LINEAR) {
            return p + k * View::Layout::LD + (row(0, i) - row(0, 0));
        } else {
            return v.ptr(base + row(l, i), k);
        }
    }

    // The F operand values of lane l at rows base + row(l, .) and k.
    GT_DEVICE static void fetch(float (&x)[F], const View& v, int base, int l, int k) {
        const T* const p = v.ptr(base + row(l, 0), 0);
        if constexpr (VEC) {
            typedef typename GtVec<VEC_BYTES>::type V;
#pragma unroll
            for (int g = 0; g < F / 4; ++g) {
                float e[4];
                gt_unpack<T>(*reinterpret_cast<const V*>(at(p, v, base, l, g * 4, k)), e);
#pragma unroll
                for (int j = 0; j < 4; ++j) x[g * 4 + j] = e[j];
            }
        } else {
#pragma unroll
            for (int i = 0; i < F; ++i) x[i] = gt_to_f32(*at(p, v, base, l, i, k));
        }
    }
};

template <class Cfg, class ViewA, class ViewB> struct GtFma {
    static constexpr int WT0 = Cfg::WT0, WT1 = Cfg::WT1, WAVE = Cfg::WAVE;
    static constexpr int LM = gt_lanes_m(WT0, WT1, WAVE);
    static_assert(LM > 0, "FMA wave tile must give every lane a whole sub-tile");
    static constexpr int LN = WAVE / LM, FM = WT0 / LM, FN = WT1 / LN;
    static constexpr int ACC = FM * FN;
    typedef GtFmaOperand<ViewA, FM, LM> OpA;
    typedef GtFmaOperand<ViewB, FN, LN> OpB;

    // One k of the outer product, row by row, each row walked the other way from the one
    // before (a snake): consecutive multiply-adds share an operand across the turn as well as
    // along the row, and ptxas schedules the stage into denser issue (a count of register-bank
    // conflicts read off the machine code did not explain which orders ran faster:
    // docs/performance.md).
    // H200, 4096^3 f32, kernel against kernel, rows in one direction / snake [cuBLASLt]: TN
    // 256x128x8 2951.0 / 2899.5 us [2728]; NN 256x128x16 WG2x4 2936.6 / 2825.6 [2673]; NT
    // 2885.2 / 2662.3 [2650]; TT WG4x2 2990.4 / 2921.6 [2797]. Column by column (FM-long runs
    // sharing b) ran 2-7% slower than rows, and pairs of rows in a zigzag (every multiply-add
    // sharing one operand with the one before) 3-10% slower.
    GT_DEVICE static void fma_step(float (&acc)[ACC], const float (&a)[FM], const float (&b)[FN]) {
#pragma unroll
        for (int i = 0; i < FM; ++i)
#pragma unroll
            for (int s = 0; s < FN; ++s) {
                const int j = i % 2 == 0 ? s : FN - 1 - s;
                acc[i * FN + j] = fmaf(a[i], b[j], acc[i * FN + j]);
            }
    }

    // Cross-stage prefetch, with PrefetchLocalRead (mainloop/gt_mainloop_lds.h uses it with a
    // ring of three or more stages, where it waits for the stage after the one being
    // multiplied): the operands of that stage's first k are read during the last multiplies of
    // this one and carried over in registers. Without it every stage began with its first
    // multiplies waiting on LDS reads that the stage's barrier kept from starting early. H200,
    // 4096^3 f32 TN, with / without (cuBLASLt 2729 us): 256x128x8 on 8 waves 2974 / 3247 us,
    // 128x128x8 3133 / 3414; 16 k a stage 3103 / 3174 on 256x128, but 3243 / 3095 on 128x128
    // WG1x4.
    static constexpr bool CARRIES = Cfg::PLR != 0;
    struct Carry {
        float a[FM], b[FN];
    };

    // Reads the operands of k = 0 of a stage into `c`.
    GT_DEVICE static void prime(Carry& c, const ViewA& va, const ViewB& vb, int wm0, int wn0, int lane) {
        OpA::fetch(c.a, va, wm0, lane % LM, 0);
        OpB::fetch(c.b, vb, wn0, lane / LM, 0);
    }

    // PrefetchLocalRead: the operands of step k+1 are read while step k multiplies, so the LDS
    // latency hides behind FMAs even with one workgroup per compute unit. Two k per
    // iteration, so each buffer keeps its registers; the stage is unrolled whole, so no loop
    // edge sits between the reads and their multiplies: on an H100 4096^3 f32 ran 3059-3089 us
    // against 3152-3156 unrolled by 4 (cuBLASLt 2729), and ptxas stopped spilling small tiles
    // (MT32x48 spilled 4 bytes at 80 registers). `c` holds k = 0 of (va, vb) on entry and, with
    // NEXT, k = 0 of (na, nb) on return.
    template <bool NEXT>
    GT_DEVICE static void walk_stage(float (&acc)[ACC], Carry& c, const ViewA& va, const ViewB& vb, const ViewA& na,
                                     const ViewB& nb, int wm0, int wn0, int lane) {
        static_assert(Cfg::DU % 2 == 0, "PrefetchLocalRead walks the stage two k at a time");
        const int lm = lane % LM, ln = lane / LM;
        float a1[FM], b1[FN];
#pragma unroll
        for (int k = 0; k < Cfg::DU; k += 2) {
            OpA::fetch(a1, va, wm0, lm, k + 1);
            OpB::fetch(b1, vb, wn0, ln, k + 1);
            fma_step(acc, c.a, c.b);
            if (k + 2 < Cfg::DU) {
                OpA::fetch(c.a, va, wm0, lm, k + 2);
                OpB::fetch(c.b, vb, wn0, ln, k + 2);
            } else if (NEXT) {
                prime(c, na, nb, wm0, wn0, lane);
            }
            fma_step(acc, a1, b1);
        }
    }

    // One stage whose k = 0 is already in `c`; k = 0 of the next stage (na, nb) is left there.
    GT_DEVICE static void compute_stage_carried(float (&acc)[ACC], Carry& c, const ViewA& va, const ViewB& vb,
                                                const ViewA& na, const ViewB& nb, int wm0, int wn0, int lane) {
        walk_stage<true>(acc, c, va, vb, na, nb, wm0, wn0, lane);
    }

    GT_DEVICE static void compute_stage(float (&acc)[ACC], const ViewA& va, const ViewB& vb, int wm0, int wn0,
                                        int lane) {
        if constexpr (Cfg::PLR != 0) {
            Carry c;
            prime(c, va, vb, wm0, wn0, lane);
            walk_stage<false>(acc, c, va, vb, va, vb, wm0, wn0, lane);
        } else {
            const int lm = lane % LM, ln = lane / LM;
#pragma unroll
            for (int k = 0; k < Cfg::DU; ++k) {
                float a[FM], b[FN];
                OpA::fetch(a, va, wm0, lm, k);
                OpB::fetch(b, vb, wn0, ln, k);
                fma_step(acc, a, b);
            }
        }
    }

    GT_DEVICE static void acc_coord(int lane, int idx, int& m, int& n) {
        m = OpA::row(lane % LM, idx / FN);
        n = OpB::row(lane / LM, idx % FN);
    }
};
