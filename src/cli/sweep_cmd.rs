//! `gemmtune sweep`: measure every config of a bounded space on the device and write the
//! dataset the `replay` backend serves, so strategies can be evaluated without a GPU.

use anyhow::{Context, Result};

use super::args::{GlobalOpts, SweepArgs};
use super::bench_cmd::{problem_from_args, sweep_selection, timing_from_args};
use super::csv_out::{num, write_table};
use super::output::{note, open_device, print, selection};
use super::progress::Bars;
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
    let bar = Bars::new(g).bar(configs.len() as u64, "sweeping");
    let data = record_sweep(
        device.as_mut(),
        compiler.as_ref(),
        &space,
        &configs,
        &timing,
        Some(&a.out),
        &mut |done| bar.set_position(done as u64),
    )
    .with_context(|| format!("sweep into {}", a.out.display()))?;
    bar.finish_and_clear();
    if let Some(path) = &g.csv {
        let rows: Vec<Vec<String>> = data
            .records()
            .map(|(c, o)| {
                let median = o
                    .samples()
                    .and_then(crate::bench::stats::Stats::of)
                    .map(|s| s.median_us);
                vec![c.name(), o.status().to_string(), num(median), o.reason()]
            })
            .collect();
        write_table(path, &["kernel", "status", "median_us", "reason"], &rows)?;
    }
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
