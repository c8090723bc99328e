//! `gemmtune source`: the generated source of one kernel, with its launch plan and whether
//! the config is valid for the problem, for kernel research outside the tuner.

use anyhow::Result;

use super::args::{GlobalOpts, SourceArgs};
use super::bench_cmd::problem_from_args;
use super::output::{note, print};
use super::UsageError;
use crate::compile::{codegen, Target};
use crate::hw::HwSpec;
use crate::space::{KernelConfig, Space};

pub fn run(g: &GlobalOpts, a: &SourceArgs) -> Result<()> {
    let problem = problem_from_args(&a.problem)?;
    // Parses --plant, so that a planted failure shows in the printed source.
    super::output::selection(g)?;
    let cfg = KernelConfig::parse(&a.config).map_err(|e| UsageError(e.to_string()))?;
    let hw = match &g.hw_spec {
        Some(p) => super::output::hw_spec(p)?,
        None => HwSpec::by_name("H200")?,
    };
    let target = Target {
        vendor: hw.vendor,
        arch: a.arch.clone().unwrap_or_else(|| {
            if hw.arch == "sm_90" {
                "sm_90a".into()
            } else {
                hw.arch.clone()
            }
        }),
        compute_units: hw.compute_units,
    };
    if let Err(v) = Space::for_problem(&problem, &hw).check(&cfg) {
        note(
            g,
            &format!(
                "gemmtune: warning: not valid for {} on {}: {v}",
                problem.label(),
                hw.name
            ),
        );
    }
    let src = codegen::generate(&cfg, &problem, &target);
    note(g, &format!("gemmtune: launch {:?}", src.launch));
    print(&src.text)
}
