//! `gemmtune tune`: search the kernel space of one GEMM with a strategy, measuring every batch
//! on the device (through the same bench session as `bench`, so every measurement lands in the
//! results database as it happens), then re-time the leaders and the vendor library.

use anyhow::{Context, Result};
use serde_json::json;
use std::path::PathBuf;

use super::args::{GlobalOpts, TuneArgs};
use super::bench_cmd::{problem_from_args, timing_from_args};
use super::csv_out::{num, write_table};
use super::output::{finish_store, note, open_device, open_store, print, selection};
use super::progress::Bars;
use super::search_args::{corpus_from_db, llm_port};
use super::UsageError;
use crate::bench::session::{BenchRow, BenchSession};
use crate::compile::{cache::CompileCache, compiler_for};
use crate::measure::stats::Stats;
use crate::report::plot::{line_plot_svg, Series};
use crate::search::driver::{run_search, NoKnownResults, SearchResult};
use crate::search::llm_account::LlmAccount;
use crate::search::progress::Event;
use crate::search::strategies;
use crate::space::Space;
use crate::store::LlmRoundRow;

/// A round's record as the database stores it.
fn llm_round_row(r: &crate::search::LlmRound) -> LlmRoundRow {
    LlmRoundRow {
        round: r.round,
        requests: r.requests,
        suggested: r.suggested,
        valid: r.valid,
        from_llm: r.from_llm,
        filled: r.filled,
        fell_back: r.fell_back,
        input_tokens: r.input_tokens,
        output_tokens: r.output_tokens,
        wall_s: r.wall_s,
    }
}

fn run_dir(a: &TuneArgs) -> PathBuf {
    a.out.clone().unwrap_or_else(|| {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        dirs::cache_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("gemmtune")
            .join("runs")
            .join(format!("tune-{stamp}-{}", std::process::id()))
    })
}

pub fn run(g: &GlobalOpts, a: &TuneArgs) -> Result<()> {
    let problem = problem_from_args(&a.problem)?;
    let timing = timing_from_args(&a.timing);
    let dir = run_dir(a);
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create run directory {}", dir.display()))?;

    let llm = llm_port(&a.search.llm, &dir.join("llm"))?;
    let model = llm.as_ref().map(|l| l.model());
    // Every measurement in the database teaches the model-based search.
    let db_path = match &g.db {
        Some(p) => p.clone(),
        None => crate::store::Store::default_path()?,
    };
    let mut strategy_options = a.search.strategy_options();
    strategy_options.corpus = corpus_from_db(&db_path)?;
    let name = a
        .search
        .strategy_name(llm.is_some(), strategy_options.has_corpus());
    // Built once now so that a bad name or a missing LLM is a usage error up front; again
    // below, once the device is known.
    a.search
        .build_strategy(&name, &strategy_options, llm.clone())?;

    let sel = selection(g)?;
    // A recorded sweep serves one problem: another one is a usage error now, not a failure
    // of every config after the first rounds.
    let dataset = match &sel.dataset {
        Some(path) if g.backend == crate::device::BackendKind::Replay => {
            let d = crate::device::replay::Dataset::load(path)?;
            if d.header.problem.key() != problem.key() {
                return Err(UsageError(format!(
                    "the dataset {} was recorded for {}, not {}; tune its problem with: {}",
                    path.display(),
                    d.header.problem.label(),
                    problem.label(),
                    d.header.problem.hipblaslt_bench_args()
                ))
                .into());
            }
            Some(d)
        }
        _ => None,
    };
    let mut device = open_device(g, &sel)?;
    let info = device.info().clone();
    strategy_options.device = info.name.clone();
    let mut strategy = a.search.build_strategy(&name, &strategy_options, llm)?;
    if let Some(c) = &strategy_options.corpus {
        note(
            g,
            &format!(
                "gemmtune: the database holds {} measurements of {} shapes to learn from",
                c.measurements(),
                c.shapes().len()
            ),
        );
    }
    let hw = device.hw_spec().clone();
    // A problem no kernel of the template can run is refused with the reason (the type or
    // layout restriction that rules out every config), before any run directory or database.
    if dataset.is_none() {
        if let Some(why) = crate::workload::pipeline::unsupported_reason(&problem, &hw) {
            return Err(anyhow::anyhow!(
                "no kernel can be generated for {} on {}: {why}",
                problem.label(),
                hw.name
            ));
        }
    }
    let compiler = compiler_for(&info, &sel.sim_plants)?;
    let cache = CompileCache::new(
        std::env::var_os("GEMMTUNE_CACHE_DIR")
            .map(Into::into)
            .unwrap_or_else(CompileCache::default_dir),
    );
    let mut db = open_store(g, &name, &format!("{} {}", info.name, info.arch))?;
    note(
        g,
        &format!(
            "gemmtune: tuning {} on {} with `{name}` (run files in {})",
            problem.label(),
            info.name,
            dir.display()
        ),
    );
    // A recorded sweep covers only part of the space: search the part it measured.
    let space = match &dataset {
        Some(d) => crate::search::eval::space_for_dataset(d),
        None => Space::for_problem(&problem, &hw),
    };
    let opts = a.search.search_options(&name);
    let quiet = g.quiet;
    let verbose = g.verbose;
    let bars = Bars::new(g);
    let evaluated = bars.bar(opts.max_evals as u64, "evaluating");
    let mut progress = |e: &Event| match e {
        Event::RoundStarted {
            round,
            to_evaluate,
            invalid,
            ..
        } if !quiet => {
            evaluated.set_message(format!("round {round}"));
            bars.println(&format!(
                "gemmtune: round {round}: {to_evaluate} configs ({invalid} invalid suggestions dropped)"
            ))
        }
        Event::RoundFinished { round, best_us } if !quiet => bars.println(&format!(
            "gemmtune: round {round} done, best so far {}",
            best_us
                .map(|b| format!("{b:.1} us"))
                .unwrap_or_else(|| "-".into())
        )),
        Event::Warning(w) if !quiet => bars.println(&format!("gemmtune: warning: {w}")),
        Event::Retiming { configs, rounds } => {
            evaluated.set_message(format!("re-timing {configs} leaders x {rounds} rounds"))
        }
        Event::Evaluated {
            config,
            outcome,
            median_us,
            ..
        } => {
            evaluated.inc(1);
            if verbose {
                bars.println(&format!(
                    "gemmtune:   {config} {} {}",
                    outcome.status(),
                    median_us.map(|m| format!("{m:.1} us")).unwrap_or_default()
                ));
            }
        }
        _ => {}
    };

    let result = (|| -> Result<(SearchResult, Vec<BenchRow>)> {
        let mut session = BenchSession::new(
            problem.clone(),
            timing,
            device.as_mut(),
            compiler.as_ref(),
            Some(&cache),
            Box::new(&mut db),
        )?;
        session.force = a.timing.force;
        session.vendor_in_retime = true;
        session.on_compile = Some(bars.compiles());
        let found = run_search(
            &space,
            strategy.as_mut(),
            &mut session,
            &NoKnownResults,
            &opts,
            &mut progress,
        )?;
        // The vendor library, timed in every re-timing round right after the leaders (or, if
        // there was none or it failed there, now and as many times).
        let mut vendor_rounds = std::mem::take(&mut session.vendor_retimed);
        if vendor_rounds.len() < opts.retime_rounds.max(1) {
            vendor_rounds.clear();
            for _ in 0..opts.retime_rounds.max(1) {
                vendor_rounds.push(session.vendor(true)?);
            }
        }
        Ok((found, vendor_rounds))
    })();
    evaluated.finish_and_clear();
    // What the LLM contributed goes in the database beside the run's measurements; a run
    // that cannot store it does not end as if it had.
    let result = result.and_then(|(found, vendor)| {
        if !found.llm_rounds.is_empty() {
            let rows: Vec<LlmRoundRow> = found.llm_rounds.iter().map(llm_round_row).collect();
            db.store.record_llm_rounds(
                db.run_id,
                &problem.key(),
                model.as_deref().unwrap_or("unknown"),
                &rows,
            )?;
        }
        Ok((found, vendor))
    });
    let (found, vendor_rounds) = finish_store(&mut db, result)?;
    let account = LlmAccount::of(&found.llm_rounds);
    // Never name the LLM for a search it contributed nothing to.
    let (effective, shown) = match &account {
        Some(a) if a.contributed_nothing() => {
            let filler = strategies::filler_name(&strategy_options);
            (
                filler.to_string(),
                format!("{filler} (`{name}` asked, but no config came from the LLM: every round fell back)"),
            )
        }
        _ => (name.clone(), name.clone()),
    };
    let vendor_round_medians: Vec<f64> = vendor_rounds
        .iter()
        .filter(|v| v.is_ok())
        .filter_map(BenchRow::median_us)
        .collect();
    let vendor_us = Stats::of(&vendor_round_medians).map(|s| s.median_us);

    let trace: Vec<(f64, f64)> = found
        .trace
        .iter()
        .map(|t| (t.evaluations as f64, t.best_us))
        .collect();
    let svg = line_plot_svg(
        &format!("{} on {}: {name}", problem.label(), info.name),
        "evaluations",
        "best median (us)",
        &[Series {
            label: name.clone(),
            points: trace,
        }],
        vendor_us.map(|v| ("vendor", v)),
    );
    std::fs::write(dir.join("convergence.svg"), svg)
        .with_context(|| format!("cannot write {}", dir.join("convergence.svg").display()))?;

    let winner = found.winner.as_ref();
    let summary = json!({
        "problem": problem,
        "problem_label": problem.label(),
        "device": info,
        "strategy": effective,
        "strategy_requested": name,
        "llm": account.as_ref().map(|a| a.to_json(&found.llm_rounds)),
        "winner": winner.map(|w| w.config.name()),
        "winner_median_us": winner.map(|w| w.median_us),
        // The winner's re-timing run verified it again against the reference.
        "winner_verification": found
            .retimed
            .first()
            .and_then(|r| r.outcome.verification()),
        "vendor_median_us": vendor_us,
        "vendor_round_medians_us": vendor_round_medians,
        // Each leader's re-timing rounds; the winner's time is the median of its rounds.
        "retimed": found.retimed.iter().map(|r| json!({
            "config": r.config.name(),
            "search_median_us": r.search_median_us,
            "retimed_median_us": r.retimed_median_us,
            "round_medians_us": r.round_medians_us,
            "status": r.outcome.status(),
        })).collect::<Vec<_>>(),
        "speedup_vs_vendor": winner.and_then(|w| vendor_us.map(|v| v / w.median_us)),
        "evaluations": found.evaluations,
        "reused": found.reused,
        "rounds": found.rounds,
        "stop": found.stop.describe(),
        "invalid_suggestions": found.invalid_suggestions,
        "time_s": {
            "llm": found.time.llm.as_secs_f64(),
            "compile": found.time.compile.as_secs_f64(),
            "bench": found.time.bench.as_secs_f64(),
            "total": found.time.total.as_secs_f64(),
        },
        "trace": found.trace.iter().map(|t| json!({"evaluations": t.evaluations, "best_us": t.best_us})).collect::<Vec<_>>(),
        "warnings": found.warnings,
        "run_dir": dir,
    });
    std::fs::write(
        dir.join("result.json"),
        serde_json::to_string_pretty(&summary)?,
    )
    .with_context(|| format!("cannot write {}", dir.join("result.json").display()))?;

    if let Some(path) = &g.csv {
        // Every evaluation of the search in order, then each leader's re-timed result.
        let mut rows: Vec<Vec<String>> = found
            .history
            .entries()
            .iter()
            .map(|e| {
                vec![
                    "search".into(),
                    e.round.to_string(),
                    e.config.name(),
                    e.outcome.status().to_string(),
                    num(e.median_us),
                    e.reused.to_string(),
                    e.outcome.reason(),
                ]
            })
            .collect();
        rows.extend(found.retimed.iter().map(|r| {
            vec![
                "retimed".into(),
                String::new(),
                r.config.name(),
                r.outcome.status().to_string(),
                num(r.retimed_median_us),
                "false".into(),
                r.outcome.reason(),
            ]
        }));
        rows.extend(vendor_rounds.iter().map(|v| {
            vec![
                "vendor".into(),
                String::new(),
                v.name.clone(),
                v.outcome.status().to_string(),
                num(v.median_us()),
                v.reused.to_string(),
                v.outcome.reason(),
            ]
        }));
        write_table(
            path,
            &[
                "phase",
                "round",
                "kernel",
                "status",
                "median_us",
                "reused",
                "reason",
            ],
            &rows,
        )?;
    }
    if g.json {
        return print(&format!("{}\n", serde_json::to_string_pretty(&summary)?));
    }
    let mut out = String::new();
    match winner {
        Some(w) => {
            out.push_str(&format!("winner: {}\n", w.config.name()));
            out.push_str(&format!(
                "  {:.1} us re-timed ({:.1} us in the search)",
                w.median_us, w.search_median_us
            ));
            if let Some(v) = vendor_us {
                out.push_str(&format!(
                    ", vendor {v:.1} us: {:.3}x the vendor library",
                    v / w.median_us
                ));
            }
            out.push('\n');
        }
        None => out.push_str("winner: none (no config passed verification)\n"),
    }
    out.push_str(&format!(
        "strategy {shown}: {} evaluations ({} reused from the database), {} rounds, stopped: {}\n",
        found.evaluations,
        found.reused,
        found.rounds,
        found.stop.describe()
    ));
    if let Some(a) = &account {
        out.push_str(&format!("{}\n", a.describe()));
    }
    out.push_str(&format!(
        "time: {:.1} s total = LLM {:.1} s + compile {:.1} s + benchmark {:.1} s (+ other)\n",
        found.time.total.as_secs_f64(),
        found.time.llm.as_secs_f64(),
        found.time.compile.as_secs_f64(),
        found.time.bench.as_secs_f64()
    ));
    if found.invalid_suggestions > 0 {
        out.push_str(&format!(
            "invalid suggestions: {}\n",
            found.invalid_suggestions
        ));
    }
    out.push_str(&format!(
        "convergence plot: {}\n",
        dir.join("convergence.svg").display()
    ));
    print(&out)
}
