//! `gemmtune bench`: one GEMM, a set of kernels, the vendor library, a winner.

use anyhow::{Context, Result};
use std::str::FromStr;

use super::args::{BenchArgs, GlobalOpts, ProblemArgs, TimingArgs};
use super::output::{finish_store, note, open_device, open_store, print, selection};
use super::progress::Bars;
use super::UsageError;
use crate::bench::defaults::default_configs;
use crate::bench::results::DbResults;
use crate::bench::session::{
    attach_speedups, winner, BenchRow, BenchSession, CompileStep, Event, PhaseTimes,
};
use crate::bench::sweep;
use crate::compile::{cache::CompileCache, compiler_for, Compiler};
use crate::device::{Device, TimingOptions};
use crate::problem::{ComputeType, DataType, GemmProblem, Trans};
use crate::report::roofline::bench_roofline_svg;
use crate::report::{render_hipblaslt_csv, render_table, write_csv, BenchReport};
use crate::space::{KernelConfig, Space};

/// Kernels in bench's default set: the default and the space's starts first
/// (`bench::defaults`). Ten, not eight: a start placed late in the order (the swapped
/// few-tile start, the N-fit starts) otherwise fell off the set on the problems that have
/// many (H200, bench's default set: 4096x200x14336 43.6 us with the N-fit start, 45.9 without
/// it; e4m3 1536x512x7168 14.5 with the swapped few-tile start, 15.2 without). Twelve since
/// few tiles with a long K got a start of their own, which would otherwise have pushed the
/// swapped start off 1024x512x4096 and 1280x512x8192.
const DEFAULT_SET_SIZE: usize = 12;

fn parse<T: FromStr>(what: &str, s: &str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    T::from_str(s).map_err(|e| UsageError(format!("--{what}: {e}")).into())
}

/// The problem the bench flags describe, validated.
pub fn problem_from_args(a: &ProblemArgs) -> Result<GemmProblem> {
    let mut p = GemmProblem::new(a.m, a.n, a.k);
    p.batch = a.batch_count;
    p.trans_a = parse::<Trans>("transA", &a.trans_a)?;
    p.trans_b = parse::<Trans>("transB", &a.trans_b)?;
    let typ = |what: &str, given: &Option<String>| {
        parse::<DataType>(what, given.as_deref().unwrap_or(&a.precision))
    };
    p.a_type = typ("a_type", &a.a_type)?;
    p.b_type = typ("b_type", &a.b_type)?;
    p.c_type = typ("c_type", &a.c_type)?;
    p.d_type = typ("d_type", &a.d_type)?;
    p.compute_type = parse::<ComputeType>("compute_type", &a.compute_type)?;
    p.alpha = a.alpha;
    p.beta = a.beta;
    // Leading dimensions and strides: 0 means "packed", as in hipblaslt-bench.
    p.lda = a.lda.unwrap_or(0);
    p.ldb = a.ldb.unwrap_or(0);
    p.ldc = a.ldc.unwrap_or(0);
    p.ldd = a.ldd.unwrap_or(0);
    p.stride_a = a.stride_a.unwrap_or(0);
    p.stride_b = a.stride_b.unwrap_or(0);
    p.stride_c = a.stride_c.unwrap_or(0);
    p.stride_d = a.stride_d.unwrap_or(0);
    p.fill_defaults();
    p.validate().map_err(|e| UsageError(e.to_string()))?;
    Ok(p)
}

/// The timing options the flags describe.
pub fn timing_from_args(t: &TimingArgs) -> TimingOptions {
    TimingOptions {
        iters: t.iters.max(1),
        cold_iters: t.cold_iters,
        rotating_mb: t.rotating,
        flush_l2: t.flush.unwrap_or(false),
        timeout_s: t.timeout,
        seed: t.seed,
    }
}

/// The configs of a bounded sweep (`--fix NAME=VALUES` narrows it, `max` bounds it).
pub fn sweep_selection(
    space: &Space,
    fix: &[String],
    max: usize,
    seed: u64,
) -> Result<Vec<KernelConfig>> {
    let fixes = fix
        .iter()
        .map(|f| {
            sweep::parse_fix(f)
                .ok_or_else(|| UsageError(format!("--fix `{f}` must be NAME=VALUES")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let s = sweep::sweep_spaces(space, &fixes).map_err(|e| UsageError(e.to_string()))?;
    let configs = sweep::sweep_configs(&s, max, seed).map_err(|e| UsageError(e.to_string()))?;
    if configs.is_empty() {
        // Usually a pinned minor parameter whose default the problem does not admit (a wide
        // vector on an unaligned leading dimension): say which ones were pinned, and to what.
        let pinned = sweep::PINNED
            .iter()
            .filter(|p| {
                !fixes
                    .iter()
                    .any(|(n, _)| crate::space::ParamId::from_name(n) == Some(**p))
            })
            .map(|p| format!("{}={}", p.name(), p.format_value(space.domain(*p).default)))
            .collect::<Vec<_>>();
        return Err(UsageError(format!(
            "the swept space holds no valid config for this problem; pinned to their defaults: {} \
             (widen them with --fix, e.g. --fix GlobalReadVectorWidth=1,2,4,8)",
            pinned.join(", ")
        ))
        .into());
    }
    Ok(configs)
}

/// Kernel names from `--config` and `--configs FILE`.
fn requested_configs(a: &BenchArgs) -> Result<Vec<KernelConfig>> {
    let mut names: Vec<(String, String)> = a
        .configs
        .iter()
        .map(|n| ("--config".to_string(), n.clone()))
        .collect();
    if let Some(path) = &a.configs_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read configs file {}", path.display()))?;
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if !line.is_empty() {
                names.push((format!("{}:{}", path.display(), i + 1), line.to_string()));
            }
        }
    }
    names
        .into_iter()
        .map(|(origin, n)| {
            KernelConfig::parse(&n).map_err(|e| UsageError(format!("{origin}: {e}")).into())
        })
        .collect()
}

/// The kernels a solutions file lists for `problem` (`--solutions FILE`).
fn solution_configs(path: &std::path::Path, problem: &GemmProblem) -> Result<Vec<KernelConfig>> {
    let file = crate::workload::solutions::SolutionFile::load(path)
        .map_err(|e| UsageError(format!("--solutions: {e}")))?;
    let found = file.for_problem(problem);
    if found.is_empty() {
        let known: Vec<String> = file.solutions.iter().map(|s| s.label.clone()).collect();
        return Err(UsageError(format!(
            "{} has no solution for {} (it has: {}); give the problem's exact flags, e.g. {}",
            path.display(),
            problem.label(),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            },
            file.solutions
                .first()
                .map(|s| s.problem.hipblaslt_bench_args())
                .unwrap_or_default()
        ))
        .into());
    }
    // Names were checked when the file was loaded.
    Ok(found
        .iter()
        .filter_map(|s| KernelConfig::parse(&s.config).ok())
        .collect())
}

pub fn run(g: &GlobalOpts, a: &BenchArgs) -> Result<()> {
    let mut problem = problem_from_args(&a.problem)?;
    a.hipblaslt.apply_scales(&mut problem);
    if let Some(ignored) = a.hipblaslt.check(&problem).map_err(UsageError)? {
        note(g, &ignored);
    }
    let mut requested = requested_configs(a)?;
    if let Some(path) = &a.solutions {
        requested.extend(solution_configs(path, &problem)?);
    }
    let timing = timing_from_args(&a.timing);
    let sel = selection(g)?;
    let mut device = open_device(g, &sel)?;
    let info = device.info().clone();
    let hw = device.hw_spec().clone();
    note(
        g,
        &format!(
            "gemmtune: {} on {} ({} {}, spec {})",
            problem.label(),
            info.name,
            info.backend,
            info.arch,
            hw.name
        ),
    );
    let compiler = compiler_for(&info, &sel.sim_plants)?;
    let cache = CompileCache::new(
        std::env::var_os("GEMMTUNE_CACHE_DIR")
            .map(Into::into)
            .unwrap_or_else(CompileCache::default_dir),
    );
    let space = Space::for_problem(&problem, &hw);
    let mut configs = requested;
    if a.sweep {
        let swept = sweep_selection(&space, &a.fix, a.max_configs, a.timing.seed)?;
        note(g, &format!("gemmtune: sweeping {} configs", swept.len()));
        configs.extend(swept);
    } else if !a.fix.is_empty() {
        return Err(UsageError("--fix needs --sweep".into()).into());
    }
    if configs.is_empty() {
        configs = default_configs(&space, DEFAULT_SET_SIZE);
    }
    if configs.is_empty() {
        // Nothing to measure is not "no kernel passed verification": say why none exists.
        let why = crate::workload::pipeline::unsupported_reason(&problem, &hw)
            .unwrap_or_else(|| "no valid kernel config for this problem".into());
        return Err(anyhow::anyhow!(
            "no kernel can be generated for {} on {}: {why}",
            problem.label(),
            hw.name
        ));
    }
    let mut db = open_store(
        g,
        "bench",
        &format!("{} {} {}", info.name, info.arch, info.driver_version),
    )?;

    let verbose = g.verbose;
    let quiet = g.quiet;
    let bars = Bars::new(g);
    let measured = bars.bar(configs.len() as u64, "measuring");
    let mut on_event = |e: Event| match e {
        Event::Compiled {
            done,
            failed,
            seconds,
        } if !quiet && done > 0 => bars.println(&format!(
            "gemmtune: compiled {done} kernels in {seconds:.1} s ({failed} failed)"
        )),
        Event::Measured { row } => {
            // Re-timing measures the leaders again: the bar grows with it.
            if measured.position() >= measured.length().unwrap_or(0) {
                measured.inc_length(1);
            }
            measured.inc(1);
            if verbose {
                bars.println(&format!(
                    "gemmtune:   {} {} {}",
                    row.name,
                    row.outcome.status(),
                    row.median_us()
                        .map(|m| format!("{m:.1} us"))
                        .unwrap_or_else(|| row.outcome.reason())
                ));
            }
        }
        _ => {}
    };

    let result = measure(
        a,
        &problem,
        timing,
        device.as_mut(),
        compiler.as_ref(),
        &cache,
        &mut db,
        &configs,
        &mut on_event,
        bars.compiles(),
    );
    measured.finish_and_clear();
    let (rows, vendor, times) = finish_store(&mut db, result)?;
    let mut rows = rows;
    attach_speedups(&mut rows, vendor.as_ref());
    let win = winner(&rows).map(|i| rows[i].name.clone());
    let report = BenchReport {
        problem_label: problem.label(),
        roofline_us: hw.roofline_us(problem.flops(), problem.min_bytes(), problem.a_type),
        problem,
        device: info,
        hw_spec: hw.name.clone(),
        rows,
        vendor,
        winner: win,
        times,
        worker_restarts: 0,
    };
    if let Some(path) = &g.csv {
        write_csv(path, &report).with_context(|| format!("cannot write CSV {}", path.display()))?;
    }
    let roofline = match &a.roofline {
        Some(path) => {
            std::fs::write(path, bench_roofline_svg(&report, &hw))
                .with_context(|| format!("cannot write {}", path.display()))?;
            Some(format!("roofline plot: {}\n", path.display()))
        }
        None => None,
    };
    let machine_readable = g.json || a.hipblaslt.csv_columns;
    if let Some(line) = roofline.as_deref().filter(|_| machine_readable) {
        // JSON and CSV on stdout must stay parseable: the file is named on stderr instead.
        note(g, line.trim_end());
    }
    if g.json {
        print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report.to_json())?
        ))
    } else if a.hipblaslt.csv_columns {
        print(&render_hipblaslt_csv(&report))
    } else {
        print(&(render_table(&report) + roofline.as_deref().unwrap_or("")))
    }
}

type Measured = (Vec<BenchRow>, Option<BenchRow>, PhaseTimes);

/// Measures the configs and the vendor library, then re-times the leaders beside it.
#[allow(clippy::too_many_arguments)]
fn measure(
    a: &BenchArgs,
    problem: &GemmProblem,
    timing: TimingOptions,
    device: &mut dyn Device,
    compiler: &dyn Compiler,
    cache: &CompileCache,
    db: &mut DbResults,
    configs: &[KernelConfig],
    on_event: &mut dyn FnMut(Event),
    on_compile: std::sync::Arc<dyn Fn(CompileStep) + Send + Sync>,
) -> Result<Measured> {
    let mut session = BenchSession::new(
        problem.clone(),
        timing,
        device,
        compiler,
        Some(cache),
        Box::new(db),
    )?;
    session.force = a.timing.force;
    session.compile_threads = a.timing.compile_threads;
    session.on_compile = Some(on_compile);
    let mut rows = session.measure(configs, on_event)?;
    let mut vendor = if a.no_vendor {
        None
    } else {
        Some(session.vendor(false)?)
    };
    if a.retime > 0 {
        session.retime(
            &mut rows,
            vendor.as_mut(),
            a.retime,
            a.retime_rounds as usize,
            on_event,
        )?;
    }
    Ok((rows, vendor, session.times))
}
