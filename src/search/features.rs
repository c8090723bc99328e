//! What the model-based search sees of a (problem, GPU, kernel config) triple: a fixed-length
//! vector of numbers, the same for every shape, so what one shape teaches applies to another.
//!
//! Three groups:
//! - the problem: log2 of M, N, K and the batch, the layout, element sizes, arithmetic
//!   intensity and where it sits against the GPU's ridge point;
//! - the GPU: compute units, wave size, LDS per workgroup;
//! - the config: every parameter (sizes as log2; a parameter added to the space needs its
//!   entry here), and what they mean for this problem on this
//!   GPU: workgroups launched, waves of them over the compute units and how full the last
//!   wave is, how much of the edge tiles is padding (N just past a tile multiple), K
//!   iterations per split, workgroups that fit per compute unit by LDS and by registers,
//!   threads, the tile's own arithmetic intensity and the wave tile.
//!
//! The derived group carries the physics (wave quantisation, occupancy, padding) the
//! parameters alone would leave the model to rediscover from each shape's data. The analytic
//! model of the sim backend is deliberately not a feature: the sim datasets the strategy is
//! tested on would then be answered by the feature, not learned.

use crate::hw::HwSpec;
use crate::problem::GemmProblem;
use crate::space::{constraints, GsuAlgo, KernelConfig};

/// The feature names, in vector order (for documentation and debugging).
pub const NAMES: [&str; 47] = [
    "log2_m",
    "log2_n",
    "log2_k",
    "log2_batch",
    "trans_a",
    "trans_b",
    "a_bytes",
    "d_bytes",
    "log2_intensity",
    "log2_intensity_over_ridge",
    "log2_compute_units",
    "wave_size",
    "log2_lds_per_workgroup",
    "log2_mt0",
    "log2_mt1",
    "log2_depth_u",
    "log2_mi_m",
    "log2_mi_n",
    "log2_mi_k",
    "waves_m",
    "waves_n",
    "pgr",
    "plr",
    "lds_pad_a",
    "lds_pad_b",
    "swizzle",
    "log2_gsu",
    "gsu_algo",
    "log2_wgm",
    "log2_grvw",
    "log2_svw",
    "stagger_u",
    "producer_warp",
    "swap_ab",
    "persistent",
    "log2_workgroups",
    "log2_waves",
    "last_wave_fill",
    "m_tile_fill",
    "n_tile_fill",
    "log2_k_iters_per_split",
    "log2_resident_by_lds",
    "register_use",
    "log2_threads",
    "log2_tile_intensity",
    "log2_wave_tile_m",
    "log2_wave_tile_n",
];

/// How many numbers describe one triple.
pub const COUNT: usize = NAMES.len();

fn log2(x: f64) -> f32 {
    x.max(1e-9).log2() as f32
}

/// The problem's and the GPU's part of the vector (the same for every config of a search).
pub fn problem_features(p: &GemmProblem, hw: &HwSpec) -> [f32; 13] {
    let ai = p.arithmetic_intensity();
    let ridge = hw.peak_tflops_of(p) * 1e12 / (hw.memory_bandwidth_gbps * 1e9).max(1.0);
    [
        log2(p.m as f64),
        log2(p.n as f64),
        log2(p.k as f64),
        log2(p.batch.max(1) as f64),
        p.trans_a.is_t() as u8 as f32,
        p.trans_b.is_t() as u8 as f32,
        p.a_type.bytes() as f32,
        p.d_type.bytes() as f32,
        log2(ai),
        log2(ai / ridge.max(1e-9)),
        log2(hw.compute_units as f64),
        hw.wave_size as f32,
        log2(hw.lds_bytes_per_workgroup as f64),
    ]
}

/// The whole vector of one config, given its problem's part.
pub fn features(
    problem_part: &[f32; 13],
    p: &GemmProblem,
    hw: &HwSpec,
    c: &KernelConfig,
) -> [f32; COUNT] {
    let mut f = [0f32; COUNT];
    f[..13].copy_from_slice(problem_part);
    let (m, n, k) = (p.m.max(1) as f64, p.n.max(1) as f64, p.k.max(1) as f64);
    let (mt0, mt1) = (c.mt0.max(1) as f64, c.mt1.max(1) as f64);
    let cus = hw.compute_units.max(1) as f64;
    let tiles_m = (m / mt0).ceil();
    let tiles_n = (n / mt1).ceil();
    let tiles = tiles_m * tiles_n * p.batch.max(1) as f64;
    let stream_k = c.gsu_algo == GsuAlgo::StreamK;
    let workgroups = if stream_k {
        c.gsu.max(1) as f64 * cus
    } else if c.pk > 0 {
        // One workgroup per compute unit walks the tiles.
        (tiles * c.gsu.max(1) as f64).min(cus)
    } else {
        tiles * c.gsu.max(1) as f64
    };
    // Persistent workgroups walk the tiles: the tail is in the tiles per compute unit.
    let waves = if c.pk > 0 {
        tiles * c.gsu.max(1) as f64 / cus
    } else {
        workgroups / cus
    };
    let splits = if stream_k {
        (workgroups / tiles).max(1.0)
    } else {
        c.gsu.max(1) as f64
    };
    let threads = c.launch_threads(hw.wave_size).max(1) as f64;
    let lds = constraints::lds_bytes(c, p).max(1) as f64;
    let regs = constraints::registers_estimate(c, p, hw) as f64;
    let [wt0, wt1] = c.wave_tile();
    let algo = GsuAlgo::ALL
        .iter()
        .position(|&a| a == c.gsu_algo)
        .unwrap_or(1) as f32;
    let config = [
        log2(mt0),
        log2(mt1),
        log2(c.depth_u as f64),
        log2(c.mi[0] as f64),
        log2(c.mi[1] as f64),
        log2(c.mi[2] as f64),
        c.wg[0] as f32,
        c.wg[1] as f32,
        c.pgr as f32,
        c.plr as f32,
        c.lpa as f32,
        c.lpb as f32,
        c.swizzle as f32,
        log2(c.gsu.max(1) as f64),
        if c.gsu <= 1 && !stream_k { -1.0 } else { algo },
        log2(c.wgm.max(1) as f64),
        log2(c.grvw.max(1) as f64),
        log2(c.svw.max(1) as f64),
        c.su as f32,
        c.pw as f32,
        c.sab as f32,
        c.pk as f32,
        log2(workgroups),
        log2(waves),
        (waves / waves.ceil().max(1.0)) as f32,
        (m / (tiles_m * mt0)) as f32,
        (n / (tiles_n * mt1)) as f32,
        log2((k / (c.depth_u.max(1) as f64 * splits)).ceil()),
        log2((hw.lds_bytes_per_cu as f64 / lds).floor().max(0.5)),
        (regs / hw.max_registers_per_thread.max(1) as f64) as f32,
        log2(threads),
        log2(mt0 * mt1 / (mt0 + mt1)),
        log2(wt0.max(1) as f64),
        log2(wt1.max(1) as f64),
    ];
    f[13..].copy_from_slice(&config);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_describe_padding_and_waves() {
        let hw = HwSpec::by_name("H200").unwrap();
        let c = KernelConfig::parse(
            "MT128x128x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0",
        )
        .unwrap();
        let at = |name: &str, f: &[f32; COUNT]| f[NAMES.iter().position(|n| *n == name).unwrap()];
        // N just past a tile multiple: the second column of tiles is almost all padding.
        let p = GemmProblem::new(16032, 130, 16384);
        let f = features(&problem_features(&p, &hw), &p, &hw, &c);
        assert!((at("n_tile_fill", &f) - 130.0 / 256.0).abs() < 1e-6);
        assert_eq!(at("log2_mt0", &f), 7.0);
        // 126 x 2 tiles on 132 compute units: two waves, the second nearly full.
        assert!((at("log2_workgroups", &f) - (252f32).log2()).abs() < 1e-5);
        assert!(at("last_wave_fill", &f) > 0.9);
        assert!(f.iter().all(|x| x.is_finite()), "{f:?}");
    }

    #[test]
    fn every_parameter_is_seen() {
        use crate::space::{ParamId, Space};
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem::new(4096, 512, 4096);
        let space = Space::for_problem(&p, &hw);
        let base = space.raw_default();
        let part = problem_features(&p, &hw);
        let f0 = features(&part, &p, &hw, &base);
        for id in ParamId::ALL {
            let d = space.domain(id);
            let Some(&other) = d.values.iter().find(|v| **v != id.get(&base)) else {
                continue;
            };
            let mut c = base;
            id.set(&mut c, other);
            // The split algorithm only shows with a split.
            if id == ParamId::GlobalSplitUAlgorithm {
                c.gsu = 2;
            }
            assert_ne!(features(&part, &p, &hw, &c), f0, "{id:?} leaves no trace");
        }
    }
}
