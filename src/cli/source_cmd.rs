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
    note(
        g,
        &format!("gemmtune: launch: {}", describe_launch(&src.launch)),
    );
    print(&src.text)
}

/// The launch plan in words, for a reader compiling the source by hand.
fn describe_launch(l: &crate::compile::LaunchPlan) -> String {
    let dims = |d: [u32; 3]| format!("{}x{}x{}", d[0], d[1], d[2]);
    let mut parts = vec![format!(
        "{} on a grid of {}, blocks of {}, {} bytes of dynamic shared memory",
        l.symbol,
        dims(l.grid),
        dims(l.block),
        l.shared_bytes
    )];
    if l.workspace_bytes > 0 {
        parts.push(format!(
            "a {} workspace of {} bytes",
            if l.zero_workspace {
                "zeroed split-K"
            } else {
                "split-K"
            },
            l.workspace_bytes
        ));
    }
    if l.flags_bytes > 0 {
        parts.push(format!("{} bytes of stream-K flags", l.flags_bytes));
    }
    let boxes = |b: &crate::compile::TmaBox, k: &str, mn: &str| {
        if b.k_major {
            format!("{} {k} by {} {mn}", b.inner, b.outer)
        } else {
            format!("{} {mn} by {} {k}", b.inner, b.outer)
        }
    };
    if let Some([a, b]) = &l.tma {
        parts.push(format!(
            "tensor maps of A in boxes of {} and of B in boxes of {}",
            boxes(a, "K", "M"),
            boxes(b, "K", "N")
        ));
    }
    if let Some(d) = &l.tma_d {
        parts.push(format!(
            "D stored through a tensor map in boxes of {} M by {} N",
            d.inner, d.outer
        ));
    }
    if let Some(c) = &l.tma_c {
        parts.push(format!(
            "C loaded through a tensor map in boxes of {} M by {} N",
            c.inner, c.outer
        ));
    }
    for p in &l.packs {
        parts.push(format!(
            "first {} packs {} {} into the workspace at byte {}",
            p.symbol,
            if p.is_a { "A" } else { "B" },
            match (p.mn_major, p.is_a) {
                (false, _) => "K-major",
                (true, true) => "M-major",
                (true, false) => "N-major",
            },
            p.workspace_offset
        ));
    }
    if let Some(e) = &l.epilogue {
        parts.push(format!(
            "then {} on a grid of {}, blocks of {}",
            e.symbol,
            dims(e.grid),
            dims(e.block)
        ));
    }
    parts.join("; ")
}
