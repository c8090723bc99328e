//! `tune-log` from start to end: parse, open devices, baselines, selection, tuning, report.
//!
//! The phases run on one [`DevicePool`]: the baseline pass and the tuning pass are each one
//! `map` over the shared queue, so every device stays busy in both. What was already done is
//! not done again: finished GEMMs come back from their checkpoints, and inside an
//! interrupted GEMM every stored measurement is reused by the bench session.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use super::checkpoint;
use super::context::OpenSpec;
use super::manifest::{workload_fingerprint, Manifest};
use super::outputs::{ensure_writable, write, Report};
use super::pipeline::{self, TuneJob, TuneSettings, TunedGemm};
use super::pool::DevicePool;
use super::record::GemmRecord;
use super::selection::{select, Criteria, WorkloadGemm};
use super::shard::Shard;
use super::summary::{Heading, Summary};
use super::unread;
use super::WorkloadError;
use crate::problem::log::{parse_files, LogIssue};
use crate::search::llm_port::SharedLlm;

/// Everything `tune-log` needs.
#[derive(Clone)]
pub struct TuneLogOptions {
    pub logs: Vec<PathBuf>,
    pub out: PathBuf,
    pub devices: Vec<u32>,
    pub open: OpenSpec,
    pub criteria: Criteria,
    pub shard: Shard,
    pub min_uplift: f64,
    pub settings: TuneSettings,
    pub llm: Option<SharedLlm>,
    /// Told how far the run is (from the device threads), for progress displays.
    pub progress: Option<Arc<dyn Fn(Step) + Send + Sync>>,
}

/// How far a `tune-log` run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The vendor library is timed on this many GEMMs.
    Baselines(usize),
    /// This many GEMMs are tuned.
    Tuning(usize),
    /// One baseline or one GEMM of the current phase is done.
    Done,
}

/// What a `tune-log` run produced.
#[derive(Debug, Clone, Serialize)]
pub struct TuneLogOutcome {
    pub workload: Vec<WorkloadGemm>,
    pub records: Vec<GemmRecord>,
    pub summary: Summary,
    /// The log lines that could not be read (their GEMMs are not in the report), with why.
    pub unread_lines: Vec<LogIssue>,
    /// GEMMs taken from the checkpoints of an earlier run.
    pub resumed: usize,
    /// Over the GEMMs tuned in this run: results measured now and reused from the database.
    pub measured: usize,
    pub reused: usize,
    /// GEMMs tuned in this run, per device index.
    pub per_device: BTreeMap<u32, usize>,
    pub baseline_seconds: f64,
    pub tuning_seconds: f64,
    pub device_name: String,
    pub files: Vec<PathBuf>,
}

/// Messages for the user while the run goes (stderr in the CLI).
pub trait Notes {
    fn note(&self, text: &str);
    /// The selection, once the baselines are known.
    fn selection(&self, workload: &[WorkloadGemm], shard: Shard);
}

/// Runs the whole workflow.
pub fn run(o: &TuneLogOptions, notes: &dyn Notes) -> Result<TuneLogOutcome, WorkloadError> {
    ensure_writable(&o.out)?;
    let _lock = super::lock::lock(&o.out)?;
    let parsed = parse_files(&o.logs)?;
    for issue in &parsed.issues {
        notes.note(&issue.to_string());
    }
    // The run goes on without them, but the report says which GEMMs it lost and why.
    let unread_lines = unread::of(&parsed);
    let names = o
        .logs
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>();
    if parsed.entries.is_empty() {
        return Err(WorkloadError::Usage(format!(
            "no matmul entries in {} ({} lines read{}): nothing to tune. hipBLASLt writes them with HIPBLASLT_LOG_MASK=32 (bench command lines) or 64/128 (`- {{function: matmul, ...}}`)",
            names.join(", "),
            parsed.lines_read,
            if parsed.gemm_lines > 0 {
                format!(", {} matmul lines could not be read", parsed.gemm_lines)
            } else {
                String::new()
            }
        )));
    }
    let mut workload: Vec<WorkloadGemm> = parsed
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| WorkloadGemm::from_entry(i, e))
        .collect();
    let mut devices = o.devices.clone();
    devices.sort_unstable();
    devices.dedup();
    if devices.len() != o.devices.len() {
        return Err(WorkloadError::Usage(
            "--devices lists a device more than once".into(),
        ));
    }

    let spec = Arc::new(o.open.clone());
    let pool = DevicePool::open(&o.devices, move |i| spec.open(i))?;
    let (info, hw) = pool
        .map(vec![()], |ctx, _, ()| {
            (ctx.device.info().clone(), ctx.device.hw_spec().clone())
        })?
        .remove(0)
        .value;
    notes.note(&format!(
        "gemmtune: {} distinct GEMMs ({} calls) on {} x {} ({}), shard {}",
        workload.len(),
        parsed.total_calls(),
        o.devices.len(),
        info.name,
        info.arch,
        o.shard
    ));
    let manifest = Manifest {
        logs: names.clone(),
        workload_fingerprint: workload_fingerprint(&workload),
        gemms: workload.len(),
        shard: o.shard,
        devices: o.devices.clone(),
        device_name: info.name.clone(),
        arch: info.arch.clone(),
        backend: info.backend.clone(),
        db: relative_to(&o.open.db_path, &o.out),
        strategy: o.settings.strategy.clone(),
        criteria: o.criteria,
        min_uplift: o.min_uplift,
        merged_from: Vec::new(),
        command_line: o.open.command_line.clone(),
    };
    manifest.save(&o.out)?;

    // What cannot be tuned, before measuring anything.
    let mut timeable = Vec::new();
    for g in &mut workload {
        let copies = o.settings.timing.rotating_copies(&g.problem);
        match g.problem.check_fits(info.memory_bytes, copies) {
            Err(e) => g.skip = Some(format!("too large for {}: {e}", info.name)),
            Ok(()) => {
                g.skip = pipeline::unsupported_reason(&g.problem, &hw);
                timeable.push((g.id, g.problem.clone()));
            }
        }
    }

    // Baselines: the vendor library on every GEMM that fits, spread over the devices.
    notes.note(&format!(
        "gemmtune: timing the vendor library on {} GEMMs",
        timeable.len()
    ));
    let t0 = Instant::now();
    let mut settings = o.settings.clone();
    // The model-based search weighs what this device measured most.
    settings.strategy_options.device = info.name.clone();
    let settings = Arc::new(settings);
    let s = Arc::clone(&settings);
    let step = o.progress.clone().unwrap_or_else(|| Arc::new(|_| {}));
    step(Step::Baselines(timeable.len()));
    let done = Arc::clone(&step);
    // The first measurement the database refused: the run then fails at its end, and the
    // GEMM it belonged to is not checkpointed, so a rerun measures it again.
    let unstored: Arc<Mutex<Option<String>>> = Arc::default();
    let lost = Arc::clone(&unstored);
    let baselines = pool.map(timeable, move |ctx, _, (id, problem)| {
        let result = pipeline::baseline(ctx, &s, &problem);
        let result = match ctx.db.check_stored() {
            Err(e) => Err(note_unstored(&lost, e)),
            Ok(()) => result,
        };
        done(Step::Done);
        (id, result)
    })?;
    let baseline_seconds = t0.elapsed().as_secs_f64();
    for done in baselines {
        let (id, result) = done.value;
        let g = &mut workload[id];
        match result {
            Ok(us) => g.baseline_us = Some(us),
            Err(e) => g.skip = Some(e),
        }
    }
    select(&mut workload, &o.criteria);
    notes.selection(&workload, o.shard);

    // Tuning: the selected GEMMs this shard owns, minus the ones already finished.
    let mut finished: HashMap<usize, TunedGemm> = HashMap::new();
    let mut jobs = Vec::new();
    for g in workload
        .iter()
        .filter(|g| g.selected && g.skip.is_none() && o.shard.owns(g.id))
    {
        let fp = checkpoint::fingerprint(&o.settings, &info.name, &g.problem.key());
        // --force measures everything again, finished GEMMs included.
        let done = (!o.settings.force)
            .then(|| checkpoint::load(&o.out, g.id, &fp))
            .flatten();
        match done {
            Some(t) => {
                finished.insert(g.id, t);
            }
            None => jobs.push((g.baseline_us.unwrap_or(0.0), g.id, g.problem.clone())),
        }
    }
    let resumed = finished.len();
    if resumed > 0 {
        notes.note(&format!(
            "gemmtune: resuming: {resumed} GEMMs already tuned in {}",
            o.out.display()
        ));
    }
    // Slowest first: long jobs started last would leave the other devices idle at the end.
    jobs.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let total = jobs.len();
    let jobs: Vec<TuneJob> = jobs
        .into_iter()
        .map(|(_, id, problem)| TuneJob {
            id,
            problem,
            position: String::new(),
        })
        .collect();
    let started = Arc::new(AtomicUsize::new(0));
    let llm = o.llm.clone();
    let out_dir = o.out.clone();
    let s = Arc::clone(&settings);
    let t0 = Instant::now();
    let lost = Arc::clone(&unstored);
    step(Step::Tuning(total));
    let done = Arc::clone(&step);
    let tuned = pool.map(jobs, move |ctx, _, mut job: TuneJob| {
        let n = started.fetch_add(1, Ordering::SeqCst) + 1;
        job.position = format!("({n}/{total})");
        let mut t = pipeline::tune(ctx, &s, llm.clone(), &job);
        if let Err(e) = ctx.db.check_stored() {
            t.error = Some(note_unstored(&lost, e));
        }
        done(Step::Done);
        let fp = checkpoint::fingerprint(&s, &t.device_name, &t.problem_key);
        if let Err(e) = checkpoint::save(&out_dir, &fp, &t) {
            eprintln!("gemmtune: warning: {e}");
        }
        t
    })?;
    let tuning_seconds = t0.elapsed().as_secs_f64();
    drop(pool);

    let mut per_device = BTreeMap::new();
    let (mut measured, mut reused) = (0, 0);
    for d in tuned {
        *per_device.entry(d.device).or_insert(0) += 1;
        measured += d.value.measured;
        reused += d.value.reused;
        finished.insert(d.value.id, d.value);
    }
    let records: Vec<GemmRecord> = workload
        .iter()
        .filter(|g| o.shard.owns(g.id) && (g.selected || g.baseline_us.is_none()))
        .map(|g| GemmRecord::new(g, finished.get(&g.id)))
        .collect();
    let heading = Heading {
        title: "gemmtune tune-log".into(),
        lines: vec![
            format!("logs: {}", names.join(", ")),
            format!(
                "device: {} ({}, {} backend), devices {}",
                info.name,
                info.arch,
                info.backend,
                join(&o.devices)
            ),
            format!(
                "strategy `{}`, at most {} evaluations per GEMM; shard {}",
                o.settings.strategy, o.settings.search.max_evals, o.shard
            ),
        ],
    };
    let (summary, files) = write(
        &o.out,
        &Report {
            heading,
            workload: &workload,
            records: &records,
            unread: &unread_lines,
            shards: o.shard.count,
            min_uplift: o.min_uplift,
        },
    )?;
    if let Some(message) = unstored.lock().ok().and_then(|m| m.clone()) {
        return Err(WorkloadError::file(&o.open.db_path, message));
    }
    Ok(TuneLogOutcome {
        workload,
        records,
        summary,
        unread_lines,
        resumed,
        measured,
        reused,
        per_device,
        baseline_seconds,
        tuning_seconds,
        device_name: info.name,
        files,
    })
}

/// Keeps the first storage failure of the run; returns the message for the GEMM's error.
fn note_unstored(first: &Mutex<Option<String>>, e: crate::store::StoreError) -> String {
    let message = e.to_string();
    if let Ok(mut f) = first.lock() {
        f.get_or_insert_with(|| message.clone());
    }
    message
}

fn join(xs: &[u32]) -> String {
    xs.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// `path` relative to `dir` when it lies inside it (output directories can then be moved).
fn relative_to(path: &Path, dir: &Path) -> PathBuf {
    path.strip_prefix(dir)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}
