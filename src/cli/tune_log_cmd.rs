//! `gemmtune tune-log LOG...`: tune a workload's GEMMs (see [`crate::workload`]) and print the
//! selection, the per-GEMM results and the headline uplift. This file only maps the command
//! line onto [`TuneLogOptions`] and the outcome onto text or JSON.

use anyhow::Result;

use super::args::{GlobalOpts, TuneLogArgs};
use super::bench_cmd::timing_from_args;
use super::output::{note, print, selection};
use super::progress::Bars;
use super::search_args::{corpus_from_db, llm_port};
use super::UsageError;
use crate::compile::cache::CompileCache;
use crate::store::Store;
use crate::workload::context::OpenSpec;
use crate::workload::manifest::Manifest;
use crate::workload::pipeline::TuneSettings;
use crate::workload::selection::{Criteria, WorkloadGemm};
use crate::workload::table::{render_results, render_selection};
use crate::workload::tune::{run as run_workload, Notes, TuneLogOptions};
use crate::workload::{unread, Shard, WorkloadError};

/// `, 1 log line not read` and the lines, indented, for the totals: nothing when every line
/// was read.
pub(super) fn not_read(lines: &[crate::problem::log::LogIssue]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut out = format!(", {}:", unread::phrase(lines));
    for l in unread::lines(lines) {
        out.push_str(&format!("\n  {l}"));
    }
    out
}

/// A workload-layer error as the CLI reports it (usage errors exit with 2).
pub(super) fn cli_error(e: WorkloadError) -> anyhow::Error {
    match e {
        WorkloadError::Usage(m) => UsageError(m).into(),
        other => other.into(),
    }
}

struct CliNotes {
    quiet: bool,
    json: bool,
}

impl Notes for CliNotes {
    fn note(&self, text: &str) {
        if !self.quiet {
            eprintln!("{text}");
        }
    }

    fn selection(&self, workload: &[WorkloadGemm], shard: Shard) {
        let table = render_selection(workload, shard);
        if self.json {
            if !self.quiet {
                eprint!("{table}");
            }
        } else {
            // The selection is a result in itself: stdout, before the long tuning starts.
            let _ = print(&format!("selection:\n{table}\n"));
        }
    }
}

pub fn run(g: &GlobalOpts, a: &TuneLogArgs) -> Result<()> {
    if !(0.0..=1.0).contains(&a.thr) {
        return Err(UsageError(format!(
            "--thr {} must be a fraction between 0 and 1",
            a.thr
        ))
        .into());
    }
    if a.top == Some(0) {
        return Err(UsageError("--top must be at least 1".into()).into());
    }
    if !(a.min_uplift.is_finite() && a.min_uplift > -1.0) {
        return Err(UsageError(format!(
            "--min-uplift {} is not a usable fraction",
            a.min_uplift
        ))
        .into());
    }
    let llm = llm_port(&a.search.llm, &a.out.join("llm"))?;
    let devices = if a.devices.is_empty() {
        vec![g.device]
    } else {
        a.devices.clone()
    };
    let db_path = match &g.db {
        Some(p) => p.clone(),
        None => a.out.join(crate::workload::merge::DB_FILE),
    };
    let mut strategy_options = a.search.strategy_options();
    strategy_options.corpus = corpus_from_db(&db_path)?;
    // A resumed run goes on with the strategy it started with (the database it learns from
    // has grown since, which would otherwise change the default).
    let name = match (&a.search.strategy, Manifest::load(&a.out)) {
        (None, Ok(m)) => m.strategy,
        _ => a
            .search
            .strategy_name(llm.is_some(), strategy_options.has_corpus()),
    };
    // Build it once here so that a bad name or a missing LLM is a usage error up front.
    a.search
        .build_strategy(&name, &strategy_options, llm.clone())?;
    if g.db.is_some() {
        // Surface a bad --db before the devices start.
        Store::open(&db_path)?;
    }
    let settings = TuneSettings {
        timing: timing_from_args(&a.timing),
        strategy: name.clone(),
        strategy_options,
        search: a.search.search_options(&name),
        force: a.timing.force,
        compile_threads: a.timing.compile_threads,
        cache_dir: std::env::var_os("GEMMTUNE_CACHE_DIR")
            .map(Into::into)
            .unwrap_or_else(CompileCache::default_dir),
        quiet: g.quiet,
        verbose: g.verbose,
    };
    let opts = TuneLogOptions {
        logs: a.logs.clone(),
        out: a.out.clone(),
        devices,
        open: OpenSpec {
            selection: selection(g)?,
            in_process: g.no_worker,
            db_path,
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
            strategy: name,
        },
        criteria: Criteria {
            threshold: a.thr,
            top: a.top,
        },
        shard: a.shard,
        min_uplift: a.min_uplift,
        settings,
        llm,
        progress: Some(Bars::new(g).tune_log()),
    };
    let notes = CliNotes {
        quiet: g.quiet,
        json: g.json,
    };
    let outcome = run_workload(&opts, &notes).map_err(cli_error)?;
    if let Some(path) = &g.csv {
        std::fs::copy(a.out.join(crate::workload::outputs::RAW_CSV), path)
            .map_err(|e| anyhow::anyhow!("cannot write CSV {}: {e}", path.display()))?;
    }
    if g.json {
        return print(&format!("{}\n", serde_json::to_string_pretty(&outcome)?));
    }
    let s = &outcome.summary;
    let mut out = render_results(&outcome.records, a.min_uplift);
    out.push_str(&format!(
        "\n{} tuned: {} kept, {} dropped, {} skipped, {} failed ({} resumed from an earlier run){}\n",
        s.tuned,
        s.kept,
        s.dropped,
        s.skipped,
        s.failed,
        outcome.resumed,
        not_read(&outcome.unread_lines)
    ));
    if let Some(avg) = s.average_uplift_kept {
        out.push_str(&format!(
            "average uplift of the kept kernels: {:+.2}%\n",
            avg * 100.0
        ));
    }
    out.push_str(&format!(
        "weighted total uplift: {:.2}% of the workload's GEMM time saved\n",
        s.weighted_uplift * 100.0
    ));
    out.push_str(&format!(
        "time: {:.1} s baselines + {:.1} s tuning on {} device(s); {} measured, {} reused from the database\n",
        outcome.baseline_seconds,
        outcome.tuning_seconds,
        opts.devices.len(),
        outcome.measured,
        outcome.reused
    ));
    out.push_str(&format!(
        "report: {}\n",
        a.out.join(crate::workload::outputs::SUMMARY_MD).display()
    ));
    note(g, "gemmtune: done");
    print(&out)
}
