// loader/gt_ring_pos.h: a stage's place in a ring of STAGES operand slots (the LDS ring of
// every mainloop, the tensor-map ring's barriers and the free-slot barriers of the
// warp-specialised ones): its slot and the parity of that slot's fill.
//
//   stage t -> (slot t % STAGES, phase t / STAGES & 1), carried from t to t + 1
#pragma once

// Carried from one stage to the next by an add and a compare. Computed as t % STAGES and
// t / STAGES they cost a wide multiply per stage (STAGES is rarely a power of two), which sat
// between one stage's wgmmas and the next's: on an H100, 11% of the warp stall samples of a
// six-stage 128x128 kernel fell on it (dispatch stalls), and without it 4096x512x14336 ran
// 81.5 us instead of 86.0 (cuBLASLt 78.9).
template <int STAGES> struct GtRingPos {
    int slot;
    gt_u32 phase;
    GT_DEVICE explicit GtRingPos(int t) : slot(t % STAGES), phase(gt_u32(t / STAGES) & 1u) {}
    GT_DEVICE void next() {
        if (++slot == STAGES) {
            slot = 0;
            phase ^= 1u;
        }
    }
};
