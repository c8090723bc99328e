//! `advice.md`: what made a tuned kernel fast, in plain words, derived from the measurements.
//!
//! Flow: [`analyse`] takes the winner and every timed config of the same problem on the same
//! device (from the results database) and finds: whether the GEMM is bound by memory or by
//! the matrix units and how close the winner gets to that roof; how it spreads over the GPU
//! (workgroups per compute unit); each measured single-parameter change of the winner and
//! what it cost; the parameters whose value changed the best reachable time the most; and
//! how the winner differs from the space's default config. [`render_markdown`] writes
//! those facts as sentences; [`llm_prompt`] asks a model to rewrite them for a reader,
//! with the facts kept underneath so every number stays checkable.

use std::collections::BTreeMap;

use crate::hw::HwSpec;
use crate::problem::GemmProblem;
use crate::space::{KernelConfig, ParamId};

/// The measured data about one tuned GEMM.
pub struct AdviceInput<'a> {
    pub problem: &'a GemmProblem,
    pub hw: Option<&'a HwSpec>,
    pub device_name: &'a str,
    pub winner: KernelConfig,
    pub winner_us: f64,
    pub vendor_us: Option<f64>,
    /// Every timed, verified config of this problem on this device, median microseconds.
    pub measured: &'a [(KernelConfig, f64)],
    /// Configs that were tried and failed (compile, launch, verification).
    pub failed: usize,
    pub default_config: Option<KernelConfig>,
}

/// One measured single-parameter change of the winner.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbour {
    pub param: ParamId,
    pub winner_value: String,
    pub other_value: String,
    /// Other time / winner time.
    pub ratio: f64,
}

/// How much the choice of one parameter mattered across all measured configs.
#[derive(Debug, Clone, PartialEq)]
pub struct Sensitivity {
    pub param: ParamId,
    /// The value with the fastest measured config, and that time.
    pub best_value: String,
    /// Slowest over fastest of the per-value best times (1.0 = no effect seen).
    pub spread: f64,
    pub values_seen: usize,
}

/// What limits the GEMM, from the datasheet roofline.
#[derive(Debug, Clone, PartialEq)]
pub struct Roof {
    pub memory_bound: bool,
    /// The winner's fraction of the roofline bound (1.0 = at the roof).
    pub fraction: f64,
    pub achieved_tbps: f64,
    pub peak_tbps: f64,
    pub achieved_tflops: f64,
    pub peak_tflops: f64,
}

/// The facts of one advice file.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub label: String,
    pub device_name: String,
    pub winner: KernelConfig,
    pub winner_us: f64,
    pub vendor_us: Option<f64>,
    pub roof: Option<Roof>,
    /// Workgroups launched, and compute units on the device.
    pub workgroups: u64,
    pub compute_units: Option<u32>,
    pub neighbours: Vec<Neighbour>,
    pub sensitivity: Vec<Sensitivity>,
    /// `(parameter, default value, winner value)` where they differ.
    pub versus_default: Vec<(ParamId, String, String)>,
    pub default_us: Option<f64>,
    pub measured: usize,
    pub failed: usize,
}

fn value(p: ParamId, c: &KernelConfig) -> String {
    p.format_value(p.get(c))
}

/// Parameters that differ between two configs (the split algorithm only when both split).
fn differences(a: &KernelConfig, b: &KernelConfig) -> Vec<ParamId> {
    ParamId::ALL
        .into_iter()
        .filter(|p| p.get(a) != p.get(b))
        .filter(|p| *p != ParamId::GlobalSplitUAlgorithm || (a.gsu > 1 && b.gsu > 1))
        .collect()
}

pub fn analyse(input: &AdviceInput<'_>) -> Advice {
    let w = input.winner.canonical();
    let p = input.problem;
    let roof = input.hw.map(|hw| {
        let compute_us = p.flops() / (hw.peak_tflops_of(p) * 1e12) * 1e6;
        let memory_us = p.min_bytes() / (hw.memory_bandwidth_gbps * 1e9) * 1e6;
        Roof {
            memory_bound: memory_us >= compute_us,
            fraction: compute_us.max(memory_us) / input.winner_us,
            achieved_tbps: p.min_bytes() / (input.winner_us * 1e-6) / 1e12,
            peak_tbps: hw.memory_bandwidth_gbps / 1e3,
            achieved_tflops: p.flops() / (input.winner_us * 1e-6) / 1e12,
            peak_tflops: hw.peak_tflops_of(p),
        }
    });
    let tiles = |dim: i64, t: u32| (dim.max(1) as u64).div_ceil(t.max(1) as u64);
    let workgroups = tiles(p.m, w.mt0) * tiles(p.n, w.mt1) * p.batch.max(1) as u64 * w.gsu as u64;

    let mut neighbours: Vec<Neighbour> = input
        .measured
        .iter()
        .filter_map(|(c, us)| {
            let c = c.canonical();
            match differences(&w, &c).as_slice() {
                [one] => Some(Neighbour {
                    param: *one,
                    winner_value: value(*one, &w),
                    other_value: value(*one, &c),
                    ratio: us / input.winner_us,
                }),
                _ => None,
            }
        })
        .collect();
    neighbours.sort_by(|a, b| b.ratio.total_cmp(&a.ratio));

    let mut sensitivity: Vec<Sensitivity> = ParamId::ALL
        .into_iter()
        .filter_map(|param| {
            let mut best: BTreeMap<i64, f64> = BTreeMap::new();
            for (c, us) in input.measured {
                let v = param.get(c);
                let e = best.entry(v).or_insert(f64::INFINITY);
                *e = e.min(*us);
            }
            if best.len() < 2 {
                return None;
            }
            let (bv, bt) = best
                .iter()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .map(|(v, t)| (*v, *t))?;
            let worst = best.values().copied().fold(0.0, f64::max);
            Some(Sensitivity {
                param,
                best_value: param.format_value(bv),
                spread: worst / bt,
                values_seen: best.len(),
            })
        })
        .collect();
    sensitivity.sort_by(|a, b| b.spread.total_cmp(&a.spread));
    sensitivity.truncate(5);

    let (versus_default, default_us) = match input.default_config {
        Some(d) => {
            let d = d.canonical();
            let diffs = differences(&d, &w)
                .into_iter()
                .map(|p| (p, value(p, &d), value(p, &w)))
                .collect();
            let t = input
                .measured
                .iter()
                .find(|(c, _)| c.canonical() == d)
                .map(|(_, t)| *t);
            (diffs, t)
        }
        None => (Vec::new(), None),
    };
    Advice {
        label: p.label(),
        device_name: input.device_name.to_string(),
        winner: w,
        winner_us: input.winner_us,
        vendor_us: input.vendor_us,
        roof,
        workgroups,
        compute_units: input.hw.map(|h| h.compute_units),
        neighbours,
        sensitivity,
        versus_default,
        default_us,
        measured: input.measured.len(),
        failed: input.failed,
    }
}

fn pct_slower(ratio: f64) -> String {
    if ratio >= 1.0 {
        format!("{:.1}% slower", (ratio - 1.0) * 100.0)
    } else {
        format!(
            "{:.1}% faster (within the noise of the final re-timing)",
            (1.0 - ratio) * 100.0
        )
    }
}

/// The facts as markdown sentences.
pub fn render_markdown(a: &Advice) -> String {
    let mut s = format!(
        "# Why `{}` is fast for {} on {}\n\n",
        a.winner.name(),
        a.label,
        a.device_name
    );
    s.push_str(&format!("**Result:** {:.2} us per call", a.winner_us));
    if let Some(v) = a.vendor_us {
        s.push_str(&format!(
            ", {:.3}x the vendor library ({v:.2} us)",
            v / a.winner_us
        ));
    }
    s.push_str(&format!(
        ". Chosen from {} measured configs ({} more failed to compile, run or verify).\n\n",
        a.measured, a.failed
    ));
    s.push_str("## What limits this GEMM\n\n");
    if let Some(r) = &a.roof {
        if r.memory_bound {
            s.push_str(&format!(
                "It is **memory-bound**: even at the datasheet peak, reading the operands once takes longer than the math. The winner streams the compulsory bytes at {:.2} TB/s, {:.0}% of the {:.2} TB/s peak, so what matters most is keeping enough loads in flight and reading each byte of the large operand only once.\n\n",
                r.achieved_tbps, r.fraction * 100.0, r.peak_tbps
            ));
        } else {
            s.push_str(&format!(
                "It is **compute-bound**: the math takes longer than moving the operands. The winner reaches {:.1} TFLOP/s, {:.0}% of the {:.0} TFLOP/s peak, so what matters most is keeping the matrix units fed from registers and LDS.\n\n",
                r.achieved_tflops, r.fraction * 100.0, r.peak_tflops
            ));
        }
    }
    let w = &a.winner;
    s.push_str(&format!(
        "The winner computes {}x{} output tiles with {} waves, {} K elements per iteration{}: {} workgroups",
        w.mt0,
        w.mt1,
        w.wg[0] * w.wg[1],
        w.depth_u,
        if w.gsu > 1 {
            format!(", with K split {} ways (GlobalSplitU)", w.gsu)
        } else {
            String::new()
        },
        a.workgroups
    ));
    match a.compute_units {
        Some(cu) => s.push_str(&format!(
            " for {cu} compute units ({:.1} per unit).\n\n",
            a.workgroups as f64 / cu as f64
        )),
        None => s.push_str(".\n\n"),
    }
    if !a.neighbours.is_empty() {
        s.push_str("## What the measurements show\n\n");
        s.push_str("Each line is a config that differs from the winner in one parameter only:\n\n");
        for n in a.neighbours.iter().take(10) {
            s.push_str(&format!(
                "- {} {} instead of {}: {} ({}).\n",
                n.param.name(),
                n.other_value,
                n.winner_value,
                pct_slower(n.ratio),
                n.param.description()
            ));
        }
        s.push('\n');
    }
    if !a.sensitivity.is_empty() {
        s.push_str("## The parameters that mattered most\n\n");
        s.push_str("Across every measured config, the best time reached with each value of a parameter; the spread is slowest over fastest of those:\n\n");
        for x in &a.sensitivity {
            s.push_str(&format!(
                "- {}: best at {} ({} values tried, spread {:.2}x).\n",
                x.param.name(),
                x.best_value,
                x.values_seen,
                x.spread
            ));
        }
        s.push('\n');
    }
    if !a.versus_default.is_empty() {
        s.push_str("## Compared with the default config\n\n");
        if let Some(t) = a.default_us {
            s.push_str(&format!(
                "The default config took {t:.2} us ({:.3}x the winner's time). ",
                t / a.winner_us
            ));
        }
        s.push_str("The winner changed:\n\n| parameter | default | winner | what it controls |\n|---|---|---|---|\n");
        for (p, d, v) in &a.versus_default {
            s.push_str(&format!(
                "| {} | {d} | {v} | {} |\n",
                p.name(),
                p.description()
            ));
        }
        s.push('\n');
    }
    s.push_str("## Next step in Tensile\n\n");
    s.push_str("`tensile_config.yaml` beside this file forks only the winning values. To explore around them, add the neighbouring values of the parameters listed above to their `ForkParameters` entries.\n");
    s
}

/// The system and user prompts asking a model to explain the facts in plain words.
pub fn llm_prompt(a: &Advice) -> (String, String) {
    let system = "You are a GPU performance engineer who explains GEMM kernel tuning results to \
                  engineers who know linear algebra but not GPU kernels. Use only the facts you \
                  are given; never invent a number. Write concise markdown: a short paragraph on \
                  what limits this GEMM, then a bulleted list of the parameter choices that made \
                  the winner fast and why, then one suggestion for further tuning."
        .to_string();
    let user = format!(
        "Explain in plain words what made this tuned kernel fast. The measured facts:\n\n{}",
        render_markdown(a)
    );
    (system, user)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(name: &str) -> KernelConfig {
        KernelConfig::parse(name).unwrap()
    }

    const W: &str = "MT64x16x64_MI16x8x16_WG2x1_PGR3_PLR1_LPA8_LPB8_SW0_GSU4R_WGM8_GRVW8_SVW4_SU0";

    #[test]
    fn finds_single_changes_sensitivity_and_the_default() {
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem::new(16032, 109, 16384);
        let winner = cfg(W);
        let gsu1 =
            cfg("MT64x16x64_MI16x8x16_WG2x1_PGR3_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0");
        let du32 =
            cfg("MT64x16x32_MI16x8x16_WG2x1_PGR3_PLR1_LPA8_LPB8_SW0_GSU4R_WGM8_GRVW8_SVW4_SU0");
        let far =
            cfg("MT128x16x32_MI16x8x16_WG2x1_PGR2_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0");
        let measured = vec![(winner, 100.0), (gsu1, 180.0), (du32, 110.0), (far, 200.0)];
        let a = analyse(&AdviceInput {
            problem: &p,
            hw: Some(&hw),
            device_name: "sim:H200",
            winner,
            winner_us: 100.0,
            vendor_us: Some(125.0),
            measured: &measured,
            failed: 2,
            default_config: Some(far),
        });
        assert_eq!(a.neighbours.len(), 2);
        assert_eq!(a.neighbours[0].param, ParamId::GlobalSplitU);
        assert!((a.neighbours[0].ratio - 1.8).abs() < 1e-12);
        // MacroTile0 128 only appears in the slowest config: the widest spread (2.0x).
        assert_eq!(a.sensitivity[0].param, ParamId::MacroTile0);
        assert!((a.sensitivity[0].spread - 2.0).abs() < 1e-12);
        let gsu = a
            .sensitivity
            .iter()
            .find(|x| x.param == ParamId::GlobalSplitU)
            .unwrap();
        assert_eq!(gsu.best_value, "4");
        assert!((gsu.spread - 1.8).abs() < 1e-12);
        assert_eq!(a.default_us, Some(200.0));
        assert!(a
            .versus_default
            .iter()
            .any(|(p, d, w)| *p == ParamId::MacroTile0 && d == "128" && w == "64"));
        // 251 x 7 tiles x 4 splits.
        assert_eq!(a.workgroups, 251 * 7 * 4);
        assert!(a.roof.as_ref().unwrap().memory_bound);
        let md = render_markdown(&a);
        assert!(md.contains("memory-bound"), "{md}");
        assert!(
            md.contains("GlobalSplitU 1 instead of 4: 80.0% slower"),
            "{md}"
        );
        assert!(md.contains("1.250x the vendor library"));
        let (_, user) = llm_prompt(&a);
        assert!(user.contains("80.0% slower"));
    }
}
