//! The sim backend's model of a flat batch kernel (FlatBatch = 1): many small batches, each
//! copied into LDS and multiplied whole by a group of waves with FMAs. Its time is its FMAs,
//! with its LDS reads and its memory traffic half hidden under them:
//!
//! 1. **FMAs** = batches x MacroTile0 x MacroTile1 (the padded tile) x K, at 40% of the f32 rate
//!    (each multiply-add waits on LDS reads issued beside it).
//! 2. **LDS reads** = batches x lanes of a group x K x (FM + FN), at a quarter of the FMA rate
//!    (a compute unit reads 32 lanes' words a cycle where it issues 128 lanes' FMAs).
//! 3. **Memory** = the operands' flat ranges, D (and C) once, at 90% of the bandwidth.
//! 4. **Total** = FMAs + half of (LDS + memory) + 3 us for the launch and the last batches.
//!
//! Against an H200 (bench's default set): 17x17x17 x50000 f16 on 24x20 and 45x45x45 x8000 TT f32
//! on 48x48 of two waves ran 79.6 and 114.7 us where this says 57 and 104; 33x33x33 x10000 NN
//! f16 60.5 against 56. Good enough to rank the path's tiles and wave counts, and to put it
//! beside the tile kernels.
//!
//! On matrix cores (a MatrixInstruction) the kernel waits on its copies more than it issues:
//! a compute unit spends about 0.3 cycles an element of the flat ranges and 400 a batch (the
//! loads' latency, the barrier, the store's places), plus the padded instructions
//! (MacroTile0 x MacroTile1 x K rounded up to the instruction's K) at 15% of the type's
//! tensor rate, never less than the memory traffic. Fitted to seven batches on an H200
//! (13x13x64 to 80x60x70, 3000-50000 batches, 40.9-133.1 us), each within 15% but 13x13x64
//! x20000 NN bf16 (57 us for 48.8).
//!
//! The staged form (FlatBatch = 2) copies a batch while the one before it multiplies: a
//! compute unit spends 0.26 cycles an element of the operands (putting the staged elements
//! into the tiles), 1.8 per thousand padded multiply-adds and 0.41 an output, never less than
//! the memory traffic. Fitted to eight batches on an H200 (45x45x45 to 150x150x150, 1500-8000
//! batches, 39.4-219.8 us, beta 0), each within 20%.

use crate::hw::HwSpec;
use crate::problem::{DataType, GemmProblem};
use crate::space::{constraints, KernelConfig};

/// The modelled time of one flat batch launch in microseconds, without noise.
pub fn flat_batch_time_us(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> f64 {
    let batches = p.batch.max(1) as f64;
    let memory_us = batches * flat_bytes(p) / (hw.memory_bandwidth_gbps * 1e9 * 0.9) * 1e6;
    // FMAs a second: two flops each.
    let fma_rate = hw.peak_tflops_for(DataType::F32) * 1e12 / 2.0;
    if c.uses_matrix_cores() {
        let units = f64::from(hw.compute_units.max(1));
        let kp = (p.k.max(1) as f64 / f64::from(c.mi[2])).ceil() * f64::from(c.mi[2]);
        let macs = f64::from(c.mt0) * f64::from(c.mt1) * kp;
        let mma_us = 2.0 * macs / (hw.peak_tflops_for(p.a_type) * 1e12 * 0.15 / units) * 1e6;
        let [ea, eb] = constraints::flat_extents(p);
        if c.fb == 2 {
            // Staged: the copies fly while the batch before multiplies (module header).
            let outputs = (p.m * p.n) as f64;
            let cycles = 0.26 * (ea + eb) as f64 + 0.0018 * macs + 0.41 * outputs;
            let us = batches / units * cycles / f64::from(hw.boost_clock_mhz.max(1));
            return us.max(memory_us) + 3.0;
        }
        let copy_us = (0.3 * (ea + eb) as f64 + 400.0) / f64::from(hw.boost_clock_mhz.max(1));
        return (batches / units * (copy_us + mma_us)).max(memory_us) + 3.0;
    }
    let lanes = c.wg[1] * hw.wave_size;
    let (fm, fn_) = constraints::flat_sub_tile(c, hw.wave_size).unwrap_or((c.mt0, c.mt1));
    let per_k = f64::from(fm + fn_);
    let k = p.k as f64;
    let fma_us = batches * f64::from(c.mt0) * f64::from(c.mt1) * k / (fma_rate * 0.4) * 1e6;
    let lds_us = batches * f64::from(lanes) * k * per_k / (fma_rate / 4.0) * 1e6;
    fma_us + 0.5 * (lds_us + memory_us) + 3.0
}

/// Bytes a batch moves: its operands' flat ranges, D, and C where beta is not zero.
fn flat_bytes(p: &GemmProblem) -> f64 {
    let [ea, eb] = constraints::flat_extents(p);
    let out = (p.m * p.n) as f64;
    let mut bytes = ea as f64 * p.a_type.bytes() as f64
        + eb as f64 * p.b_type.bytes() as f64
        + out * p.d_type.bytes() as f64;
    if p.beta != 0.0 {
        bytes += out * p.c_type.bytes() as f64;
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_and_waves_cost_what_they_add() {
        let hw = HwSpec::by_name("H200").unwrap();
        let mut p = GemmProblem::new(17, 17, 17);
        p.batch = 50000;
        (p.a_type, p.b_type, p.c_type, p.d_type) =
            (DataType::F16, DataType::F16, DataType::F16, DataType::F16);
        p.fill_defaults();
        let cfg = |name: &str| KernelConfig::parse(name).unwrap();
        let tight =
            cfg("MT24x20x16_MI1x1x1_WG4x1_PGR1_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW1_SVW1_SU0_FB1");
        let padded =
            cfg("MT32x32x16_MI1x1x1_WG4x1_PGR1_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW1_SVW1_SU0_FB1");
        let two =
            cfg("MT24x24x16_MI1x1x1_WG2x2_PGR1_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW1_SVW1_SU0_FB1");
        let t = flat_batch_time_us(&tight, &p, &hw);
        assert!(t < flat_batch_time_us(&padded, &p, &hw));
        assert!(t < flat_batch_time_us(&two, &p, &hw));
        // Within a factor of two of the H200's 79.6 us.
        assert!((40.0..160.0).contains(&t), "{t}");
    }

    #[test]
    fn matrix_cores_win_the_larger_batches_and_lose_the_smallest() {
        let hw = HwSpec::by_name("H200").unwrap();
        // The model's time of the flat batch kernel `tile` on `waves` (WavesMxWavesN) with
        // instruction `mi`, for `count` batches of m^3 f16.
        let time = |m: i64, count: i64, tile: &str, mi: &str, waves: &str| {
            let mut p = GemmProblem::new(m, m, m);
            p.batch = count;
            (p.a_type, p.b_type, p.c_type, p.d_type) =
                (DataType::F16, DataType::F16, DataType::F16, DataType::F16);
            p.fill_defaults();
            let name = format!(
                "MT{tile}x16_MI{mi}_WG{waves}_PGR1_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW1_SVW1_SU0_FB1"
            );
            flat_batch_time_us(&KernelConfig::parse(&name).unwrap(), &p, &hw)
        };
        // 77^3 x3000: 73.2 us on matrix cores, 126.1 on FMAs (H200).
        let mma = time(77, 3000, "96x80", "16x8x16", "1x4");
        let fma = time(77, 3000, "80x80", "1x1x1", "1x4");
        assert!((55.0..95.0).contains(&mma) && mma < fma, "{mma} {fma}");
        // 17^3 x50000: 133.1 on matrix cores, 79.3 on FMAs.
        let mma = time(17, 50000, "32x24", "16x8x16", "4x1");
        let fma = time(17, 50000, "24x20", "1x1x1", "4x1");
        assert!((100.0..170.0).contains(&mma) && fma < mma, "{mma} {fma}");
    }

    #[test]
    fn the_staged_form_follows_its_batches_on_the_gpu() {
        let hw = HwSpec::by_name("H200").unwrap();
        let time = |(m, n, k): (i64, i64, i64), count: i64, tile: &str, waves: &str| {
            let mut p = GemmProblem::new(m, n, k);
            p.batch = count;
            (p.a_type, p.b_type, p.c_type, p.d_type) =
                (DataType::F16, DataType::F16, DataType::F16, DataType::F16);
            p.fill_defaults();
            let name = format!(
                "MT{tile}x16_MI16x8x16_WG{waves}_PGR1_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW1_SVW1_SU0_FB2"
            );
            flat_batch_time_us(&KernelConfig::parse(&name).unwrap(), &p, &hw)
        };
        // H200: 150^3 x2000 NN 219.8 us on 160x160 of eight waves; 90x90x30 x5000 NN 94.9 on
        // 96x96 of four; 77^3 x3000 67.2 on 96x80 of four (the unstaged form 73.2).
        let cases = [
            (time((150, 150, 150), 2000, "160x160", "1x8"), 219.8),
            (time((90, 90, 30), 5000, "96x96", "1x4"), 94.9),
            (time((77, 77, 77), 3000, "96x80", "1x4"), 67.2),
        ];
        for (model, gpu) in cases {
            assert!(
                (0.75..1.3).contains(&(model / gpu)),
                "{model} against {gpu}"
            );
        }
        // A tile padded further costs more.
        assert!(
            time((150, 150, 150), 2000, "160x160", "1x8")
                < time((150, 150, 150), 2000, "192x192", "1x8")
        );
    }
}
