//! The GEMV path (`kernels/mainloop/gt_gemv.h`, `kernels/scheduler/gt_gemv_rows.h`): rules for
//! Gemv = 1, and the one rule every other config obeys about it.
//!
//! Rule `gemv`: the path is for N up to 8 with one workgroup covering every column (MacroTile1
//! 1, 2, 4 or 8, at least N) and one column of waves, multiplying with FMAs (MI 1x1x1) or, for
//! 16-bit TN on NVIDIA, with mma.sync (MI 16x8x16: 8 columns, 16-byte vectors); rows split
//! evenly (MacroTile0 = WavesM x rows per wave, at most 8 each, where A is K-contiguous; a
//! multiple of wave x GlobalReadVectorWidth lanes' vectors, at most two per lane, where A is
//! M-contiguous; one to four groups of 16 rows on the matrix cores); vector loads of A (and of B's K-contiguous columns) aligned; K split with a
//! reduction kernel or atomics; registers and LDS within the GPU's. The LDS, pipeline and
//! store parameters mean nothing to it: [`KernelConfig::canonical`] fixes them, so they never
//! make two GEMV kernels of one.

use std::borrow::Cow;

use super::{fail, Violation};
use crate::hw::{HwSpec, Vendor};
use crate::problem::GemmProblem;
use crate::space::config::{GsuAlgo, KernelConfig};

/// The widest N the GEMV path covers (its columns live in every thread's registers).
pub const GEMV_MAX_N: i64 = 8;
/// Rows per wave (K-contiguous A) and vectors of rows per lane (M-contiguous A), at most.
const MAX_ROWS_PER_WAVE: u32 = 8;
const MAX_VECTORS_PER_LANE: u32 = 2;
/// PrefetchGlobalRead: vectors of A in flight per row (K-contiguous A), or k's of a run
/// (M-contiguous A, whose lanes hold one or two vectors a k: more runs in flight there).
const MAX_LOADS_IN_FLIGHT: u32 = 4;
const MAX_RUN_IN_FLIGHT: u32 = 8;
/// K elements a split keeps at least: with M-contiguous A a workgroup's rows are one wave's
/// vectors, so few rows make few workgroups, and splits of 128 k's are what fill the GPU.
pub const MIN_SPLIT_K: i64 = 256;
pub const MIN_SPLIT_K_M_CONTIGUOUS: i64 = 128;

/// The matrix instruction of the matrix-core GEMV (`kernels/mainloop/gt_gemv_mma.h`).
pub const GEMV_MMA: [u32; 3] = [16, 8, 16];
/// 16-row groups per workgroup of the matrix-core GEMV, at most.
const MAX_MMA_GROUPS: u32 = 4;

/// The problem a GEMV kernel computes: `p`, or with SwapAB = 1 its transpose D^T = B^T A^T
/// (rows along N, the M <= 8 rows of D as its columns; `GemmProblem::transposed`), for a
/// vector or a few rows times a long matrix.
pub fn gemv_problem<'a>(c: &KernelConfig, p: &'a GemmProblem) -> Cow<'a, GemmProblem> {
    if c.sab == 1 {
        Cow::Owned(p.transposed())
    } else {
        Cow::Borrowed(p)
    }
}

/// Rows per wave (A K-contiguous), vectors of rows per lane (A M-contiguous), or 16-row
/// groups per workgroup (matrix cores).
pub fn gemv_rows(c: &KernelConfig, p: &GemmProblem, wave: u32) -> u32 {
    rows(c, &gemv_problem(c, p), wave)
}

/// [`gemv_rows`] of the problem the kernel computes.
fn rows(c: &KernelConfig, p: &GemmProblem, wave: u32) -> u32 {
    if c.mi == GEMV_MMA {
        c.mt0 / 16
    } else if p.trans_a.is_t() {
        c.mt0 / c.wg[0].max(1)
    } else {
        c.mt0 / (wave * c.grvw.max(1))
    }
}

/// Whether a GEMV kernel runs many short batches a wave each, WavesM batches a workgroup
/// (`GtGemv::wave_batches`, kernels/mainloop/gt_gemv.h, which applies the same test): FMAs on a
/// K-contiguous A, no split, more than one batch, each batch's rows within one wave's, and K
/// of at most four wave-wide vector runs.
pub fn gemv_wave_batches(c: &KernelConfig, p: &GemmProblem, wave: u32) -> bool {
    let q = &*gemv_problem(c, p);
    c.gv == 1
        && c.mi != GEMV_MMA
        && q.trans_a.is_t()
        && c.gsu == 1
        && q.batch > 1
        && q.m <= rows(c, q, wave) as i64
        && q.k <= 4 * (wave * c.grvw) as i64
}

/// How a GEMV kernel reads an N-contiguous B (transB = T of the problem it computes;
/// `GT_GEMV_B_VECTORS`, kernels/gt_config.h): 1 its single column as a K-contiguous run of
/// GlobalReadVectorWidth vectors (ldb = 1: a packed row vector, M = 1 along N), 2 each row's
/// MacroTile1 columns as one vector of at most 16 bytes or two of 16 (eight f32 columns; ldb
/// a multiple of MacroTile1), 0 element by element. Batch strides must keep the vectors
/// aligned too. Measured (H200, same call, cuBLASLt in brackets): 1x4096x4096 NN along N 18.4
/// us element by element [15.0].
pub fn gemv_b_vectors(c: &KernelConfig, p: &GemmProblem) -> u32 {
    let p = &*gemv_problem(c, p);
    if !p.trans_b.is_t() {
        return 0;
    }
    let eb = p.b_type.bytes() as u32;
    let strided = |v: u32| p.batch <= 1 || p.stride_b % v as i64 == 0;
    if c.mt1 == 1 && p.ldb == 1 && c.grvw * eb <= 16 && strided(c.grvw) {
        1
    } else if c.mt1 >= 2 && c.mt1 * eb <= 32 && p.ldb % c.mt1 as i64 == 0 && strided(c.mt1) {
        2
    } else {
        0
    }
}

/// LDS bytes of a GEMV kernel: the waves' partial sums where they split K (A M-contiguous,
/// the matrix cores, and K-contiguous A where rows past M leave waves to join the others
/// along K).
pub fn gemv_lds_bytes(c: &KernelConfig, p: &GemmProblem) -> u64 {
    lds_bytes(c, &gemv_problem(c, p))
}

/// [`gemv_lds_bytes`] of the problem the kernel computes.
fn lds_bytes(c: &KernelConfig, p: &GemmProblem) -> u64 {
    if c.mi == GEMV_MMA && c.wg[0] > 1 {
        return c.wg[0] as u64 * c.mt0 as u64 * 8 * 4;
    }
    if c.wg[0] <= 1 {
        0
    } else if p.trans_a.is_t() {
        // Every wave's R x MT1 totals: MT0 x MT1 floats.
        c.mt0 as u64 * c.mt1 as u64 * 4
    } else {
        c.wg[0] as u64 * c.mt0 as u64 * c.mt1 as u64 * 4
    }
}

/// Registers per thread of a GEMV kernel: its sums, the vectors of A in flight, the values of
/// B beside them, and a fixed part for addresses and loop state. The compilers load B for
/// every vector of A in flight before the first multiply (they hoist the loads to overlap
/// them), so B counts once per PrefetchGlobalRead: as packed vectors where B's columns are
/// K-contiguous, as one f32 per element otherwise; K-contiguous rows of A are unpacked to f32 before
/// they meet B (every vector in flight).
pub fn gemv_registers(c: &KernelConfig, p: &GemmProblem, wave: u32) -> u32 {
    registers(c, &gemv_problem(c, p), wave)
}

/// Registers the GEMV along N (SwapAB) holds beyond the same kernel unswapped: NVVM reads B's
/// size and leading dimension in pairs with their 16-byte-aligned neighbours (n with k, ldb
/// with lda), and ptxas keeps the unused halves across the main loop. Measured on sm_90a:
/// 4x4096x4096 e4m3 along N on MT32x4 (PGR2, eight rows per wave) spilled at 168 registers,
/// and at 255 with one workgroup per unit asked for, where 4096x4x4096 on the same config
/// uses 180 and no spill; the estimate of both is 248.
const ALONG_N_REGISTERS: u32 = 8;

/// [`gemv_registers`] of the problem the kernel computes.
fn registers(c: &KernelConfig, p: &GemmProblem, wave: u32) -> u32 {
    let along_n = if c.sab == 1 { ALONG_N_REGISTERS } else { 0 };
    let r = rows(c, p, wave).max(1);
    if c.mi == GEMV_MMA {
        // Two 16-byte vectors of A per group and one of B per step in flight, four sums per
        // group.
        return c.pgr * (8 * r + 4) + 4 * r + 2 * r + 30 + along_n;
    }
    let a_vec = (c.grvw * p.a_type.bytes() as u32).div_ceil(4);
    let b_vec = (c.grvw * p.b_type.bytes() as u32).div_ceil(4);
    let (sums, b) = if p.trans_a.is_t() {
        // B read element by element: one f32 per element, and half again for the loads'
        // addresses and the conversions in flight (gfx90a spilled at 220 estimated without).
        let b = if p.trans_b.is_t() {
            c.pgr * c.mt1 * c.grvw * 3 / 2
        } else {
            c.pgr * c.mt1 * b_vec
        };
        (r * c.mt1 + c.pgr * r * c.grvw, b)
    } else {
        (r * c.grvw * c.mt1, c.pgr * c.mt1)
    };
    sums + c.pgr * r * a_vec + b + 2 * r + 24 + along_n
}

/// The matrix-core GEMV: mma.sync on NVIDIA, 16-bit A and B of one type, both K-contiguous
/// (their 16-byte vectors go straight into fragments), the instruction's 8 columns.
fn matrix_cores(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    let ok = hw.vendor == Vendor::Nvidia
        && hw.mi_shapes(p.a_type).contains(&GEMV_MMA)
        && p.a_type == p.b_type
        && p.a_type.bytes() == 2
        && p.trans_a.is_t()
        && !p.trans_b.is_t();
    if !ok {
        return fail(
            "gemv",
            format!(
                "the matrix-core GEMV (MI16x8x16) needs NVIDIA mma.sync, 16-bit A and B of one type, transA=T and transB=N (this is {} {} on {})",
                p.a_type,
                p.layout(),
                hw.name
            ),
        );
    }
    if c.mt1 != 8 || c.grvw != 8 {
        return fail(
            "gemv",
            "the matrix-core GEMV computes the instruction's 8 columns (MacroTile1=8) from 16-byte vectors (GlobalReadVectorWidth=8)"
                .into(),
        );
    }
    Ok(())
}

/// `gemv`: Gemv is 0 or 1, and a Gemv = 1 config is one the GEMV kernels can run.
pub(super) fn gemv(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    let rule = "gemv";
    match c.gv {
        0 => return Ok(()),
        1 => {}
        v => return fail(rule, format!("Gemv is 0 or 1, not {v}")),
    }
    // SwapAB = 1: the kernel runs along N, and everything below holds for the transposed
    // problem (its N is this one's M).
    let along_n = match c.sab {
        0 => false,
        1 => true,
        v => return fail(rule, format!("SwapAB is 0 or 1, not {v}")),
    };
    let p = &*gemv_problem(c, p);
    if p.n > GEMV_MAX_N {
        return fail(
            rule,
            if along_n {
                format!(
                    "the GEMV path along N (SwapAB=1) covers M up to {GEMV_MAX_N}, not {}",
                    p.n
                )
            } else {
                format!(
                    "the GEMV path covers N up to {GEMV_MAX_N} (or M up to {GEMV_MAX_N} with SwapAB=1), not {}",
                    p.n
                )
            },
        );
    }
    if !matches!(c.mt1, 1 | 2 | 4 | 8) || (c.mt1 as i64) < p.n {
        return fail(
            rule,
            format!(
                "GEMV covers every column in one workgroup: MacroTile1 is 1, 2, 4 or 8 and at least N={}, not {}",
                p.n, c.mt1
            ),
        );
    }
    if c.wg[1] != 1 || (c.mi != [1, 1, 1] && c.mi != GEMV_MMA) {
        return fail(
            rule,
            "GEMV kernels multiply with FMAs (MI1x1x1) or mma.sync (MI16x8x16), on one column of waves (WavesN=1)"
                .into(),
        );
    }
    if c.mi == GEMV_MMA {
        matrix_cores(c, p, hw)?;
    }
    if !c.mt0.is_multiple_of(16) || c.mt0 as u64 > (p.m.max(16) as u64).next_power_of_two() {
        return fail(
            rule,
            format!(
                "GEMV MacroTile0 is a multiple of 16 no larger than M={} needs, not {}",
                p.m, c.mt0
            ),
        );
    }
    let ea = p.a_type.bytes() as u32;
    let eb = p.b_type.bytes() as u32;
    // B's K-contiguous columns are read in vectors of as many elements as A's.
    let b_vectors = p.trans_a.is_t() && !p.trans_b.is_t();
    let widest = if b_vectors { ea.max(eb) } else { ea };
    if !c.grvw.is_power_of_two() || c.grvw * widest > 16 {
        return fail(
            rule,
            format!(
                "GEMV loads of GlobalReadVectorWidth {} elements must be a power of two of at most 16 bytes",
                c.grvw
            ),
        );
    }
    let wave = hw.wave_size;
    let r = rows(c, p, wave);
    if c.mi == GEMV_MMA {
        // (MacroTile0 is a multiple of 16, checked above.)
        if !(1..=MAX_MMA_GROUPS).contains(&r) {
            return fail(
                rule,
                format!(
                    "the matrix-core GEMV takes 1..{MAX_MMA_GROUPS} groups of 16 rows: MacroTile0 {} is not one",
                    c.mt0
                ),
            );
        }
    } else if p.trans_a.is_t() {
        if !c.mt0.is_multiple_of(c.wg[0]) || !(1..=MAX_ROWS_PER_WAVE).contains(&r) {
            return fail(
                rule,
                format!(
                    "GEMV with K-contiguous A gives each of WavesM={} waves 1..{MAX_ROWS_PER_WAVE} of MacroTile0={} rows",
                    c.wg[0], c.mt0
                ),
            );
        }
    } else if !c.mt0.is_multiple_of(wave * c.grvw) || !(1..=MAX_VECTORS_PER_LANE).contains(&r) {
        return fail(
            rule,
            format!(
                "GEMV with M-contiguous A gives each of {wave} lanes 1..{MAX_VECTORS_PER_LANE} vectors of GlobalReadVectorWidth={} rows: MacroTile0 {} is not such a multiple",
                c.grvw, c.mt0
            ),
        );
    }
    // M-contiguous A on FMAs: runs of k's, which fewer rows a workgroup leave to split finer.
    let runs = c.mi != GEMV_MMA && !p.trans_a.is_t();
    let most = if runs {
        MAX_RUN_IN_FLIGHT
    } else {
        MAX_LOADS_IN_FLIGHT
    };
    if c.pgr > most {
        return fail(
            rule,
            format!("GEMV PrefetchGlobalRead (loads in flight per row) is 1..{most} here"),
        );
    }
    let v = c.grvw as i64;
    let b_misaligned = b_vectors && (p.ldb % v != 0 || (p.batch > 1 && p.stride_b % v != 0));
    if p.lda % v != 0 || (p.batch > 1 && p.stride_a % v != 0) || b_misaligned {
        return fail(
            rule,
            format!(
                "GEMV vector loads need lda{} (and batch strides) that are multiples of GlobalReadVectorWidth {}",
                if b_vectors { " and ldb" } else { "" },
                c.grvw
            ),
        );
    }
    // Stream-K keeps its letter without a split (GSU1S), so it is refused whatever GSU is.
    if c.gsu_algo == GsuAlgo::StreamK || (c.gsu > 1 && c.gsu_algo == GsuAlgo::SingleKernel) {
        return fail(
            rule,
            "GEMV splits K with the reduction kernel or atomics (GlobalSplitUAlgorithm 0 or 1)"
                .into(),
        );
    }
    let least = if runs {
        MIN_SPLIT_K_M_CONTIGUOUS
    } else {
        MIN_SPLIT_K
    };
    if c.gsu as i64 > (p.k + least - 1) / least {
        return fail(
            rule,
            format!(
                "GlobalSplitU {} leaves splits of fewer than {least} of K={}",
                c.gsu, p.k
            ),
        );
    }
    let lds = lds_bytes(c, p);
    if lds > hw.lds_bytes_per_workgroup {
        return fail(
            rule,
            format!(
                "the waves' partial sums need {lds} bytes of LDS, {} has {}",
                hw.name, hw.lds_bytes_per_workgroup
            ),
        );
    }
    super::fma_registers(rule, registers(c, p, wave), c, hw)?;
    super::atom::compute_type(p)
}
