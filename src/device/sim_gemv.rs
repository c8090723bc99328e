//! The sim backend's model of a GEMV kernel (Gemv = 1): a stream of A with the few columns of
//! B beside it, so its time is the bytes it moves over the bandwidth it reaches, and that
//! bandwidth is set by the bytes in flight.
//!
//! 1. **Workgroups** = row blocks (M / MacroTile0) x GSU x batch; resident ones per compute
//!    unit from threads, registers and LDS, as for the tile kernels.
//! 2. **Bytes in flight** = resident threads x rows per thread x PrefetchGlobalRead x vector
//!    bytes; a GPU needs about 32 KiB per compute unit in flight to stream at full rate, and
//!    reaches `(in flight / needed)^0.5` of it below that. Narrow vectors cost
//!    `(vector bytes / 16)^0.25`.
//! 3. **Memory time** = (A + B + D (+ C) + the split partials written and read) / (bandwidth x
//!    those efficiencies x 0.92).
//! 4. **Compute time** = FMAs of every padded column (MacroTile1 >= N) at half the f32 rate
//!    (each FMA also converts its operands), or on the matrix cores (MI 16x8x16) at a
//!    quarter of their rate.
//! 5. **Total** = max + 15% of min + 2.5 us per launch (two with a reduction kernel).

use crate::hw::HwSpec;
use crate::problem::{DataType, GemmProblem};
use crate::space::{constraints, GsuAlgo, KernelConfig};

/// Bytes in flight per compute unit that stream at the full modelled bandwidth.
const FLIGHT_PER_CU: f64 = 32.0 * 1024.0;

/// The modelled time of one GEMV launch in microseconds, without noise.
pub fn gemv_time_us(c: &KernelConfig, problem: &GemmProblem, hw: &HwSpec) -> f64 {
    let wave = hw.wave_size;
    // The constraint helpers take the problem as given (they transpose it for SwapAB = 1
    // themselves); the model's rows, A and B are those of the problem the kernel computes.
    let per_cu = (constraints::workgroups_per_cu(c, problem, hw) as f64).min(32.0);
    let rows = constraints::gemv_rows(c, problem, wave) as f64;
    let p = &*constraints::gemv_problem(c, problem);
    let threads = c.threads(wave).max(1) as f64;
    let blocks = (p.m as f64 / c.mt0 as f64).ceil() * c.gsu as f64 * p.batch.max(1) as f64;
    let cus = hw.compute_units as f64;
    let resident = blocks.min(per_cu * cus);
    let ea = p.a_type.bytes() as f64;
    let vector = c.grvw as f64 * ea;
    let mma = c.mi == constraints::GEMV_MMA;
    // Rows of A a thread has vectors in flight for: on the matrix cores two rows of each
    // 16-row group per lane.
    let rows_per_thread = rows * if mma { 2.0 } else { 1.0 };
    let in_flight = resident * threads * rows_per_thread * c.pgr as f64 * vector;
    let flight_eff = (in_flight / (cus * FLIGHT_PER_CU)).min(1.0).sqrt();
    let vec_eff = (vector / 16.0).min(1.0).powf(0.25);
    let cu_fill = (blocks / cus).min(1.0);

    let batch = p.batch.max(1) as f64;
    let mn = (p.m * p.n) as f64 * batch;
    let mut bytes = (p.m * p.k) as f64 * ea * batch
        + (p.k * p.n) as f64 * p.b_type.bytes() as f64 * batch
        + mn * p.d_type.bytes() as f64;
    if p.beta != 0.0 {
        bytes += mn * p.c_type.bytes() as f64;
    }
    if c.gsu > 1 {
        bytes +=
            mn * 4.0 * 2.0 * (c.gsu as f64 + f64::from(u8::from(c.gsu_algo == GsuAlgo::Atomic)));
    }
    let memory_us = bytes
        / (hw.memory_bandwidth_gbps * 1e9 * 0.92 * flight_eff * vec_eff * cu_fill.sqrt())
        * 1e6;
    let fmas = (p.m * p.k) as f64 * c.mt1 as f64 * batch;
    // The matrix cores run 8 padded columns at a fraction of their rate.
    let rate = if mma {
        hw.peak_tflops_for(p.a_type) * 0.25
    } else {
        hw.peak_tflops_for(DataType::F32) * 0.5
    };
    let compute_us = 2.0 * fmas / (rate * 1e12 * cu_fill.max(0.02)) * 1e6;
    let launches = if c.gsu > 1 { 2.0 } else { 1.0 };
    memory_us.max(compute_us) + 0.15 * memory_us.min(compute_us) + 2.5 * launches
}
