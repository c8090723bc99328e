//! `sim`: a deterministic analytic model of a GPU, built from its hw spec.
//!
//! It lets every layer above the device (space, search, database, reports) be tested and
//! demonstrated without a GPU. The time of a config is modelled as follows, so a reader can
//! see why a config is fast or slow here:
//!
//! 1. **Work and tiles.** Workgroups = tiles(M) x tiles(N) x batch x GSU (stream-K: GSU per
//!    CU, at most one per (tile, K tile) iteration). Edge tiles compute padded elements:
//!    `tile_eff = M*N / (tiles_m*MT0 * tiles_n*MT1)`.
//! 2. **Occupancy.** Workgroups resident per CU = min over LDS, threads and registers
//!    (the same estimate the constraints use). **Wave quantisation**: the last round of
//!    workgroups may fill only part of the GPU; `quant_eff = wgs / (rounds * slots)` (1 for
//!    stream-K, which shares the work evenly).
//! 3. **Compute time** = padded FLOPs / (peak x per-config efficiency). The efficiency grows
//!    with the wave tile (operand reuse from registers), with pipelining (PrefetchGlobalRead,
//!    PrefetchLocalRead), and loses ~12% to LDS bank conflicts without padding or swizzle.
//! 4. **Memory time** = DRAM bytes / (bandwidth x efficiency). A is read once per tile column
//!    and B once per tile row, minus what L2 catches (better with WorkGroupMapping grouping
//!    when a group's panel fits in L2); split-K adds its f32 workspace traffic (stream-K: two
//!    partial tiles per workgroup at most, written and read once). Efficiency
//!    grows with vector width and with bytes in flight (resident workgroups x stages).
//! 5. **Total** = max(compute, memory) + 15% of the smaller (imperfect overlap) + launch
//!    overheads (a second launch for the split-K epilogue, none for stream-K), each sample
//!    multiplied by seeded log-normal noise (1.5%).
//!
//! GEMV kernels (Gemv = 1) have a model of their own, in `sim_gemv.rs`; so have flat batch
//! kernels (FlatBatch = 1 and 2), in `sim_flat_batch.rs`.
//!
//! The vendor baseline is modelled as a good fixed kernel: 80% of the compute peak or 85% of
//! the bandwidth, whichever binds, plus one launch.
//!
//! Configs can be *planted* to fail (`--sim-plant PATTERN=crash|hang|wrong|oob|compile`) to
//! exercise the harness's failure paths: `crash` aborts the process and `hang` never returns,
//! as a real faulting kernel would take down or stall its worker.

use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256};

use super::{
    Device, DeviceError, DeviceInfo, DeviceSelection, Outcome, TimingOptions, Verification,
};
use crate::compile::CompiledKernel;
use crate::hw::HwSpec;
use crate::plant::{Plant, PlantKind};
use crate::problem::GemmProblem;
use crate::space::{constraints, GsuAlgo, KernelConfig};

/// Simulated devices in the machine (indices `0..DEVICE_COUNT`), like an 8-GPU node, so
/// multi-device runs can be exercised and a wrong index fails as it would on real hardware.
pub const DEVICE_COUNT: u32 = 8;

pub struct SimDevice {
    info: DeviceInfo,
    hw: HwSpec,
    problem: Option<GemmProblem>,
    plants: Vec<Plant>,
    poisoned: bool,
}

impl SimDevice {
    pub fn new(sel: &DeviceSelection) -> Result<Self, DeviceError> {
        if sel.index >= DEVICE_COUNT {
            return Err(DeviceError::NoSuchDevice {
                backend: "sim",
                index: sel.index,
                count: DEVICE_COUNT,
            });
        }
        let hw = match &sel.hw_spec {
            Some(h) => h.clone(),
            None => HwSpec::by_name("H200").map_err(|e| DeviceError::Driver(e.to_string()))?,
        };
        let info = DeviceInfo {
            backend: "sim".into(),
            index: sel.index,
            name: format!("sim:{}", hw.name),
            vendor: hw.vendor,
            arch: hw.arch.clone(),
            driver_version: "sim-model-1".into(),
            compiler_version: "sim-1".into(),
            memory_bytes: hw.memory_bytes,
            compute_units: hw.compute_units,
            l2_bytes: hw.l2_bytes,
        };
        Ok(SimDevice {
            info,
            hw,
            problem: None,
            plants: sel.sim_plants.clone(),
            poisoned: false,
        })
    }

    fn plant_for(&self, name: &str) -> Option<PlantKind> {
        self.plants.iter().find(|p| p.matches(name)).map(|p| p.kind)
    }
}

/// The modelled time of one launch in microseconds, without noise.
pub fn model_time_us(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> f64 {
    if c.gv == 1 {
        return super::sim_gemv::gemv_time_us(c, p, hw);
    }
    if c.fb > 0 {
        return super::sim_flat_batch::flat_batch_time_us(c, p, hw);
    }
    let tiles_m = (p.m as f64 / c.mt0 as f64).ceil();
    let tiles_n = (p.n as f64 / c.mt1 as f64).ceil();
    let tiles = tiles_m * tiles_n * p.batch as f64;
    let stream_k = c.gsu_algo == GsuAlgo::StreamK;
    let iters = (p.k as f64 / c.depth_u as f64).ceil();
    // Stream-K: GSU persistent workgroups per CU sharing the work evenly (no partial wave).
    let wgs = if stream_k {
        (c.gsu as f64 * hw.compute_units as f64).min(tiles * iters)
    } else {
        tiles * c.gsu as f64
    };
    // K splits per tile (on average, for stream-K).
    let splits = if stream_k {
        (wgs / tiles).max(1.0)
    } else {
        c.gsu as f64
    };
    let threads = c.threads(hw.wave_size) as f64;

    // Occupancy: workgroups resident per CU.
    let lds = constraints::lds_bytes(c, p).max(1) as f64;
    let occ = constraints::workgroups_per_cu(c, p, hw) as f64;
    let slots = hw.compute_units as f64 * occ;
    let rounds = (wgs / slots).ceil();
    let quant_eff = if stream_k {
        1.0
    } else {
        wgs / (rounds * slots)
    };
    // With few workgroups, a CU is under-used regardless of slots: latency is not hidden.
    let cu_fill = (wgs / hw.compute_units as f64).min(1.0);

    // Compute.
    let padded_flops =
        2.0 * tiles_m * c.mt0 as f64 * tiles_n * c.mt1 as f64 * p.k as f64 * p.batch as f64;
    let [wt0, wt1] = c.wave_tile();
    // Operand reuse in registers: per wave tile on the matrix cores; per lane on the FMA
    // path, whose 16x8 sub-tile (128 accumulators) is what the vendor's f32 kernels hold.
    let reuse = if c.uses_matrix_cores() {
        (wt0 as f64 * wt1 as f64 / (wt0 + wt1) as f64 / 32.0).min(1.0)
    } else {
        let (lm, ln) = constraints::fma_lane_grid(wt0, wt1, hw.wave_size).unwrap_or((1, 1));
        let (fm, fn_) = ((wt0 / lm) as f64, (wt1 / ln) as f64);
        (fm * fn_ / (fm + fn_) / (128.0 / 24.0)).min(1.0)
    };
    let base = if c.uses_matrix_cores() { 0.82 } else { 0.65 };
    let pipe = [0.0, 0.72, 0.9, 1.0, 0.98][c.pgr.min(4) as usize];
    let plr = if c.plr == 1 { 1.0 } else { 0.96 };
    let banks = if c.swizzle == 1 || c.lpa > 0 && c.lpb > 0 {
        1.0
    } else {
        0.88
    };
    let occ_eff = (occ * threads / 256.0).clamp(0.5, 1.0);
    // The MFMA atoms gather an M- or N-contiguous operand tile one element per LDS read unless
    // TransposeLDS stored it K-major (for a few instructions more per load); NVIDIA's
    // ldmatrix.trans reads either orientation whole.
    let lds_reads = if c.uses_matrix_cores() && !constraints::is_wgmma(c) {
        let [ta, tb] = constraints::transposed_operands(c, p);
        let gathered = if hw.wave_size == 64 {
            u8::from(!p.k_contiguous(true) && !ta) + u8::from(!p.k_contiguous(false) && !tb)
        } else {
            0
        };
        let transposed = u8::from(ta) + u8::from(tb);
        1.0 / (1.0 + 0.3 * f64::from(gathered) + 0.02 * f64::from(transposed))
    } else {
        1.0
    };
    // The FMA path writes a K-contiguous operand into its MN-major LDS tile through
    // registers unless PackMNMajor copied it MN-major first: measured on an H200 at 4096^3,
    // TN ran 9% and NN and TT 6-10% longer than NT.
    let fma_through = if c.on_fma_path() {
        let [ma, mb] = constraints::mn_packed_operands(c, p);
        u8::from(p.k_contiguous(true) && !ma) + u8::from(p.k_contiguous(false) && !mb)
    } else {
        0
    };
    let fma_reads = 1.0 / (1.0 + 0.045 * f64::from(fma_through));
    let comp_eff =
        base * (0.35 + 0.65 * reuse) * pipe * plr * banks * occ_eff * lds_reads * fma_reads;
    // The matrix cores at the problem's compute type (tf32 for c_xf32_r); FMAs at f32's.
    let peak = if c.uses_matrix_cores() {
        hw.peak_tflops_of(p)
    } else {
        hw.peak_tflops_for(p.a_type)
    } * 1e12;
    let compute_us =
        padded_flops / (peak * comp_eff * quant_eff.max(0.05) * cu_fill.max(0.02)) * 1e6;

    // Memory.
    let ea = p.a_type.bytes() as f64;
    let eb = p.b_type.bytes() as f64;
    let a_bytes = p.m as f64 * p.k as f64 * ea * p.batch as f64;
    let b_bytes = p.k as f64 * p.n as f64 * eb * p.batch as f64;
    let group_panel = c.wgm as f64 * c.mt0 as f64 * p.k as f64 * ea / splits;
    let l2_hit_a = if group_panel < hw.l2_bytes as f64 * 0.5 {
        0.9
    } else {
        0.5
    };
    let l2_hit_b = if b_bytes / splits <= hw.l2_bytes as f64 * 0.5 {
        0.95
    } else {
        0.6
    };
    let mut dram = a_bytes * (1.0 + (tiles_n - 1.0) * (1.0 - l2_hit_a))
        + b_bytes * (1.0 + (tiles_m - 1.0) * (1.0 - l2_hit_b));
    let mn = (p.m * p.n * p.batch) as f64;
    if p.beta != 0.0 {
        dram += mn * p.c_type.bytes() as f64;
    }
    dram += mn * p.d_type.bytes() as f64;
    if stream_k {
        // Each workgroup writes at most two partial tiles, read back once by the finisher.
        dram += wgs.min(tiles * (splits - 1.0).max(0.0) * 2.0) * (c.mt0 * c.mt1) as f64 * 4.0 * 2.0;
    } else if c.gsu > 1 {
        dram += match c.gsu_algo {
            GsuAlgo::Atomic => mn * 4.0 * (c.gsu as f64 + 2.0),
            _ => mn * 4.0 * 2.0 * c.gsu as f64,
        };
    }
    let vec_eff = (c.grvw as f64 * ea / 16.0).powf(0.25);
    let in_flight = occ * hw.compute_units as f64 * c.pgr as f64 * lds;
    let flight_eff = (in_flight / (hw.compute_units as f64 * 48.0 * 1024.0))
        .min(1.0)
        .powf(0.3);
    let stagger = if c.su > 0 { 1.0 } else { 0.97 };
    let bw_eff = 0.93 * vec_eff * flight_eff * stagger * cu_fill.powf(0.5);
    let memory_us = dram / (hw.memory_bandwidth_gbps * 1e9 * bw_eff) * 1e6;

    let launches = if c.has_reduction_kernel() { 2.0 } else { 1.0 };
    // The split that sums a tile in the main kernel reads the others' partials one after the
    // other at about one compute unit's share of L2 bandwidth (~100 GB/s) at the very end.
    let sum_tail_us = if c.sums_splits_in_kernel() {
        (c.gsu - 1) as f64 * (c.mt0 * c.mt1) as f64 * 4.0 / 1e5
    } else {
        0.0
    };
    // Operands packed before the main kernel are read and written once more, in a launch of
    // their own.
    let [pack_a, pack_b] = constraints::packed_operands(c, p);
    let [mn_a, mn_b] = constraints::mn_packed_operands(c, p);
    let packed_bytes = f64::from(u8::from(pack_a || mn_a)) * a_bytes
        + f64::from(u8::from(pack_b || mn_b)) * b_bytes;
    let pack_us = if pack_a || pack_b || mn_a || mn_b {
        2.0 * packed_bytes / (hw.memory_bandwidth_gbps * 1e9 * 0.8) * 1e6 + 2.5
    } else {
        0.0
    };
    // Tensor-map boxes whose rows start on 16-byte but not 32-byte boundaries cost the L2
    // more requests per row. Read with 128-byte L2 promotion (device/cuda/tma.rs), on an
    // H200 (docs/performance.md): 1.1-1.4x slower for tiles alone (3000^3 TN on the
    // persistent 128x192 109.7 us against 76.6 for 3072^3), 2-3% for pairs sharing an
    // operand (192x192 pairs along M 78.3 against 77.2). A rough 1.2x per operand alone,
    // 1.03x in a cluster.
    let per_unaligned = if c.cm > 1 || c.cn > 1 { 0.03 } else { 0.2 };
    let unaligned_left = if constraints::is_wgmma(c) {
        let bits = constraints::unaligned_operands(p);
        u32::from(bits & constraints::PACK_A != 0 && !pack_a)
            + u32::from(bits & constraints::PACK_B != 0 && !pack_b)
    } else {
        0
    };
    let unaligned = 1.0 + per_unaligned * f64::from(unaligned_left);
    (compute_us.max(memory_us) + 0.15 * compute_us.min(memory_us)) * unaligned
        + 2.5 * launches
        + sum_tail_us
        + pack_us
}

/// The modelled vendor-library time in microseconds, without noise.
pub fn model_vendor_us(p: &GemmProblem, hw: &HwSpec) -> f64 {
    let compute_us = p.flops() / (hw.peak_tflops_of(p) * 1e12 * 0.8) * 1e6;
    let memory_us = p.min_bytes() / (hw.memory_bandwidth_gbps * 1e9 * 0.85) * 1e6;
    compute_us.max(memory_us) + 4.0
}

/// Multiplies `base` by seeded log-normal noise, one value per sample.
fn noisy_samples(base: f64, key: &str, n: u32, seed: u64) -> Vec<f64> {
    let mut h = Sha256::new();
    h.update(key.as_bytes());
    h.update(seed.to_le_bytes());
    let digest = h.finalize();
    let mut rng =
        rand_chacha::ChaCha8Rng::seed_from_u64(u64::from_le_bytes(digest[..8].try_into().unwrap()));
    (0..n.max(1))
        .map(|_| {
            // Box-Muller normal from two uniforms.
            let u1: f64 = rng.gen_range(1e-12..1.0);
            let u2: f64 = rng.gen_range(0.0..1.0);
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            base * (0.015 * z).exp()
        })
        .collect()
}

fn model_verification(passed: bool, p: &GemmProblem) -> Verification {
    let tolerance = crate::measure::verify::tolerance(p);
    let err = if passed { tolerance * 0.05 } else { 0.5 };
    Verification {
        max_abs_err: err,
        max_rel_err: err,
        rel_l2_err: err,
        tolerance,
        passed,
        method: "model".into(),
    }
}

impl Device for SimDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn hw_spec(&self) -> &HwSpec {
        &self.hw
    }

    fn set_problem(&mut self, p: &GemmProblem, t: &TimingOptions) -> Result<(), DeviceError> {
        p.validate()?;
        p.check_fits(self.hw.memory_bytes, t.rotating_copies(p))?;
        self.problem = Some(p.clone());
        Ok(())
    }

    fn run_kernel(&mut self, k: &CompiledKernel, t: &TimingOptions) -> Outcome {
        let Some(p) = self.problem.clone() else {
            return Outcome::LaunchFailed {
                message: "no problem set on the device".into(),
            };
        };
        if self.poisoned {
            return Outcome::LaunchFailed {
                message: "device context is poisoned by an earlier fault".into(),
            };
        }
        match self.plant_for(&k.name) {
            Some(PlantKind::Crash) => {
                eprintln!("sim: planted crash in {}", k.name);
                std::process::abort();
            }
            Some(PlantKind::Hang) => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
            Some(PlantKind::OutOfBounds) => {
                self.poisoned = true;
                return Outcome::LaunchFailed {
                    message: format!(
                        "an illegal memory access was encountered in {} (planted)",
                        k.name
                    ),
                };
            }
            Some(PlantKind::Wrong) => {
                return Outcome::WrongResult {
                    verification: model_verification(false, &p),
                }
            }
            Some(PlantKind::CompileError) | None => {}
        }
        if let Err(v) = constraints::check(&k.config, &p, &self.hw) {
            return Outcome::LaunchFailed {
                message: format!("launch rejected: {v}"),
            };
        }
        let base = model_time_us(&k.config, &p, &self.hw);
        Outcome::Timed {
            samples_us: noisy_samples(base, &format!("{}|{}", k.name, p.key()), t.iters, t.seed),
            verification: model_verification(true, &p),
        }
    }

    fn run_vendor(&mut self, t: &TimingOptions) -> Outcome {
        let Some(p) = self.problem.clone() else {
            return Outcome::LaunchFailed {
                message: "no problem set on the device".into(),
            };
        };
        let base = model_vendor_us(&p, &self.hw);
        Outcome::Timed {
            samples_us: noisy_samples(base, &format!("vendor|{}", p.key()), t.iters, t.seed),
            verification: model_verification(true, &p),
        }
    }

    fn is_poisoned(&self) -> bool {
        self.poisoned
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::space::Space;

    #[test]
    fn model_is_deterministic_and_prefers_sensible_configs() {
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem::new(16032, 109, 16384);
        let s = Space::for_problem(&p, &hw);
        let good = s.default_config().unwrap();
        let t1 = model_time_us(&good, &p, &hw);
        assert_eq!(t1, model_time_us(&good, &p, &hw));
        // A single-stage pipeline with narrow loads is slower.
        let mut bad = good;
        bad.pgr = 1;
        bad.grvw = 1;
        assert!(model_time_us(&bad, &p, &hw) > t1);
        // The model never beats the roofline.
        let floor = hw.roofline_us(p.flops(), p.min_bytes(), p.a_type);
        assert!(t1 > floor, "{t1} vs floor {floor}");
    }

    #[test]
    fn stream_k_removes_the_partial_wave() {
        // 80 tiles of 128x128 on 132 CUs: a plain grid leaves 52 idle, stream-K shares the K
        // iterations over all of them in one launch.
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem::new(10240, 128, 8192);
        let plain = KernelConfig::parse(
            "MT128x128x64_MI64x8x16_WG8x1_PGR6_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0",
        )
        .unwrap();
        let sk = KernelConfig {
            gsu_algo: GsuAlgo::StreamK,
            ..plain
        };
        assert!(model_time_us(&sk, &p, &hw) < model_time_us(&plain, &p, &hw));
    }

    #[test]
    fn noise_is_seeded() {
        let a = noisy_samples(100.0, "k", 10, 1);
        assert_eq!(a, noisy_samples(100.0, "k", 10, 1));
        assert_ne!(a, noisy_samples(100.0, "k", 10, 2));
        assert!(a.iter().all(|x| (*x - 100.0).abs() < 10.0));
    }
}
