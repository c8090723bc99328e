//! `gemmtune sweep`: measure every config of a bounded space on the device and write the
//! dataset the `replay` backend serves, so strategies can be evaluated without a GPU.

use anyhow::{Context, Result};

use super::args::{GlobalOpts, SweepArgs};
use super::bench_cmd::{problem_from_args, sweep_selection, timing_from_args};
use super::output::{note, open_device, print, selection};
use crate::compile::compiler_for;
use crate::search::eval::record_sweep;
use crate::space::Space;

pub fn run(g: &GlobalOpts, a: &SweepArgs) -> Result<()> {
    let problem = problem_from_args(&a.problem)?;
    let timing = timing_from_args(&a.timing);
    let sel = selection(g)?;
    let mut device = open_device(g, &sel)?;
    let info = device.info().clone();
    let space = Space::for_problem(&problem, device.hw_spec());
    let configs = sweep_selection(&space, &a.fix, a.max_configs, a.timing.seed)?;
    note(
        g,
        &format!(
            "gemmtune: sweeping {} configs of {} on {}",
            configs.len(),
            problem.label(),
            info.name
        ),
    );
    let compiler = compiler_for(&info, &sel.sim_plants)?;
    let data = record_sweep(
        device.as_mut(),
        compiler.as_ref(),
        &space,
        &configs,
        &timing,
        None,
    )?;
    data.save(&a.out)
        .with_context(|| format!("cannot write dataset {}", a.out.display()))?;
    let best = data.best();
    let vendor = data
        .header
        .vendor
        .as_ref()
        .and_then(|v| v.samples())
        .and_then(crate::measure::stats::Stats::of)
        .map(|s| s.median_us);
    let mut out = format!("wrote {} configs to {}\n", data.len(), a.out.display());
    if let Some((c, us)) = best {
        out.push_str(&format!("best: {c} {us:.1} us"));
        if let Some(v) = vendor {
            out.push_str(&format!(" (vendor {v:.1} us, {:.3}x)", v / us));
        }
        out.push('\n');
    }
    print(&out)
}
