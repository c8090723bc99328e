//! The per-GEMM steps, run on one device thread.
//!
//! [`baseline`]: time the vendor library on the GEMM (reused from the database when a
//! previous run stored it). [`tune`]: the whole tuning of one GEMM through one
//! [`BenchSession`] writing to the database: the vendor time, a search with the chosen
//! strategy, then the winner run again at full size (verified against the reference and
//! timed) right beside a fresh vendor measurement, so the two numbers that decide keep or
//! drop come from the same minute on the same device. Harness failures become a
//! [`TunedGemm::error`], never a panic, so one bad GEMM does not stop a workload.

use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::context::{CountingStore, DeviceCtx};
use crate::bench::session::BenchSession;
use crate::compile::cache::CompileCache;
use crate::device::{TimingOptions, Verification};
use crate::hw::HwSpec;
use crate::problem::GemmProblem;
use crate::search::driver::{run_search, NoKnownResults, SearchOptions};
use crate::search::llm_port::SharedLlm;
use crate::search::progress::Event;
use crate::search::strategies::{self, StrategyOptions};
use crate::space::{constraints, Space};

/// How every GEMM of a workload is tuned.
#[derive(Debug, Clone)]
pub struct TuneSettings {
    pub timing: TimingOptions,
    pub strategy: String,
    pub strategy_options: StrategyOptions,
    pub search: SearchOptions,
    /// Measure again even when the database has a result.
    pub force: bool,
    pub compile_threads: usize,
    pub cache_dir: PathBuf,
    pub quiet: bool,
    pub verbose: bool,
}

/// What tuning one GEMM produced (also its checkpoint, see [`super::checkpoint`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TunedGemm {
    pub id: usize,
    pub problem_key: String,
    /// Index of the device that tuned it.
    pub device: u32,
    pub device_name: String,
    pub arch: String,
    /// The vendor library at the start of tuning, microseconds.
    pub baseline_us: Option<f64>,
    /// The vendor library re-timed beside the winner.
    pub vendor_us: Option<f64>,
    /// The winner re-timed at full size.
    pub kernel_us: Option<f64>,
    /// The winner's median during the search.
    pub search_us: Option<f64>,
    pub config: Option<String>,
    /// The winner's final verification against the reference.
    pub verification: Option<Verification>,
    /// Configs the search evaluated (reused ones included).
    pub evaluations: usize,
    /// Results measured now / taken from the database.
    pub measured: usize,
    pub reused: usize,
    pub seconds: f64,
    /// A harness failure that stopped this GEMM's tuning.
    pub error: Option<String>,
}

/// Why no kernel of the template can run this problem on this GPU, if so.
pub fn unsupported_reason(problem: &GemmProblem, hw: &HwSpec) -> Option<String> {
    let space = Space::for_problem(problem, hw);
    if space.default_config().is_ok() {
        return None;
    }
    // Explain with the rule the space's own defaults break: it names the type restriction
    // when that is what makes every config invalid.
    let c = space.raw_default();
    Some(match constraints::check(&c, problem, hw) {
        Err(v) if v.rule == "dtype" => format!("unsupported types: {}", v.message),
        Err(v) => format!("no valid kernel config for this problem ({v})"),
        Ok(()) => "no valid kernel config for this problem".to_string(),
    })
}

/// Times the vendor library on `problem`: the median in microseconds, or why it failed.
pub fn baseline(
    ctx: &mut DeviceCtx,
    settings: &TuneSettings,
    problem: &GemmProblem,
) -> Result<f64, String> {
    let cache = CompileCache::new(settings.cache_dir.clone());
    let mut session = BenchSession::new(
        problem.clone(),
        settings.timing.clone(),
        ctx.device.as_mut(),
        ctx.compiler.as_ref(),
        Some(&cache),
        Box::new(&mut ctx.db),
    )
    .map_err(|e| e.to_string())?;
    session.force = settings.force;
    let row = session.vendor(false).map_err(|e| e.to_string())?;
    match row.median_us() {
        Some(m) if row.outcome.status() == "ok" => Ok(m),
        _ => Err(format!("vendor library failed: {}", row.outcome.reason())),
    }
}

/// One GEMM to tune.
#[derive(Debug, Clone)]
pub struct TuneJob {
    pub id: usize,
    pub problem: GemmProblem,
    /// `(n/total)` for progress lines.
    pub position: String,
}

/// Tunes one GEMM on this thread's device.
pub fn tune(
    ctx: &mut DeviceCtx,
    settings: &TuneSettings,
    llm: Option<SharedLlm>,
    job: &TuneJob,
) -> TunedGemm {
    let start = Instant::now();
    let info = ctx.device.info().clone();
    let mut out = TunedGemm {
        id: job.id,
        problem_key: job.problem.key(),
        device: ctx.index,
        device_name: info.name.clone(),
        arch: info.arch.clone(),
        baseline_us: None,
        vendor_us: None,
        kernel_us: None,
        search_us: None,
        config: None,
        verification: None,
        evaluations: 0,
        measured: 0,
        reused: 0,
        seconds: 0.0,
        error: None,
    };
    let tag = format!("[device {}] {} #{}", ctx.index, job.position, job.id);
    if !settings.quiet {
        eprintln!("gemmtune: {tag} {}: tuning", job.problem.label());
    }
    let mut store = CountingStore::new(&mut ctx.db);
    let result = tune_in_session(
        &mut out,
        ctx.device.as_mut(),
        ctx.compiler.as_ref(),
        &mut store,
        settings,
        llm,
        job,
        &tag,
    );
    out.measured = store.measured;
    out.reused = store.reused;
    out.seconds = start.elapsed().as_secs_f64();
    if let Err(e) = result {
        out.error = Some(e);
    }
    if !settings.quiet {
        eprintln!("gemmtune: {tag} {}", describe(&out));
    }
    out
}

fn describe(t: &TunedGemm) -> String {
    if let Some(e) = &t.error {
        return format!("failed: {e}");
    }
    let us = |x: Option<f64>| x.map(|v| format!("{v:.1} us")).unwrap_or("-".into());
    let ratio = match (t.vendor_us, t.kernel_us) {
        (Some(v), Some(k)) if k > 0.0 => format!(" ({:.3}x)", v / k),
        _ => String::new(),
    };
    format!(
        "done in {:.1} s: vendor {}, best {}{ratio}, {} evaluations ({} reused)",
        t.seconds,
        us(t.vendor_us),
        us(t.kernel_us),
        t.evaluations,
        t.reused
    )
}

#[allow(clippy::too_many_arguments)]
fn tune_in_session(
    out: &mut TunedGemm,
    device: &mut dyn crate::device::Device,
    compiler: &dyn crate::compile::Compiler,
    store: &mut CountingStore<'_>,
    settings: &TuneSettings,
    llm: Option<SharedLlm>,
    job: &TuneJob,
    tag: &str,
) -> Result<(), String> {
    let cache = CompileCache::new(settings.cache_dir.clone());
    let mut session = BenchSession::new(
        job.problem.clone(),
        settings.timing.clone(),
        device,
        compiler,
        Some(&cache),
        Box::new(store),
    )
    .map_err(|e| e.to_string())?;
    session.force = settings.force;
    session.compile_threads = settings.compile_threads;

    let vendor = session.vendor(false).map_err(|e| e.to_string())?;
    out.baseline_us = vendor.median_us().filter(|_| vendor.is_ok());

    let mut strategy = strategies::build(&settings.strategy, &settings.strategy_options, llm)
        .map_err(|e| e.to_string())?;
    let space = session.space.clone();
    let verbose = settings.verbose && !settings.quiet;
    let mut progress = |e: &Event| match e {
        Event::RoundFinished { round, best_us } if verbose => eprintln!(
            "gemmtune: {tag} round {round}: best {}",
            best_us
                .map(|b| format!("{b:.1} us"))
                .unwrap_or_else(|| "-".into())
        ),
        Event::Warning(w) if !settings.quiet => eprintln!("gemmtune: {tag} warning: {w}"),
        _ => {}
    };
    let found = run_search(
        &space,
        strategy.as_mut(),
        &mut session,
        &NoKnownResults,
        &settings.search,
        &mut progress,
    )
    .map_err(|e| e.to_string())?;
    out.evaluations = found.evaluations;
    let Some(winner) = found.winner else {
        out.vendor_us = out.baseline_us;
        return Ok(());
    };
    out.config = Some(winner.config.name());
    out.search_us = Some(winner.search_median_us);

    // The winner once more at full size, verified, then the vendor library right after it.
    let mut rows = session
        .measure(&[winner.config], &mut |_| {})
        .map_err(|e| e.to_string())?;
    let mut vendor_now = vendor.clone();
    session
        .retime(
            &mut rows,
            Some(&mut vendor_now),
            1,
            settings.search.retime_rounds,
            &mut |_| {},
        )
        .map_err(|e| e.to_string())?;
    let row = &rows[0];
    out.verification = row.outcome.verification().cloned();
    out.kernel_us = row.median_us().filter(|_| row.is_ok());
    out.vendor_us = vendor_now
        .median_us()
        .filter(|_| vendor_now.is_ok())
        .or(out.baseline_us);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_bit_inputs_without_an_atom_are_reported_by_name() {
        let hw = HwSpec::by_name("H200").unwrap();
        let mut p = GemmProblem::new(1024, 1024, 1024);
        assert_eq!(unsupported_reason(&p, &hw), None);
        p.a_type = crate::problem::DataType::F8;
        p.b_type = crate::problem::DataType::F8;
        // TN on Hopper: the warpgroup instruction takes e4m3.
        assert_eq!(unsupported_reason(&p, &hw), None);
        // Other layouts: the instruction reads 8-bit operands K-major only, and says so.
        (p.trans_a, p.lda) = (crate::problem::Trans::N, 0);
        p.fill_defaults();
        let why = unsupported_reason(&p, &hw).unwrap();
        assert!(
            why.contains("warpgroup") && why.contains("layout TN"),
            "{why}"
        );
        // An AMD GPU with 8-bit MFMA instructions takes them in every layout; one without
        // (MI250X) says why.
        let mi300 = HwSpec::by_name("MI300X").unwrap();
        let mut nn = GemmProblem {
            a_type: crate::problem::DataType::F8,
            b_type: crate::problem::DataType::F8,
            trans_a: crate::problem::Trans::N,
            ..GemmProblem::new(1024, 1024, 1024)
        };
        nn.fill_defaults();
        assert_eq!(unsupported_reason(&nn, &mi300), None);
        let mi250 = HwSpec::by_name("MI250X").unwrap();
        let why = unsupported_reason(&nn, &mi250).unwrap();
        assert!(why.contains("unsupported types"), "{why}");
    }
}
