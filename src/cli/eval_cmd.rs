//! `gemmtune eval-strategies DATASET...`: runs each strategy many times (seeds) on recorded
//! sweeps through the replay backend and reports how fast each gets within 2% of a sweep's
//! best, the best each reaches at fixed budgets, and what an LLM contributed. Strategies that
//! learn across shapes are judged leave-one-shape-out: on each sweep they learn from the
//! other sweeps only. `--markdown` writes the summary table with the command that made it.

use anyhow::{Context, Result};
use std::sync::Arc;

use super::args::{EvalArgs, GlobalOpts};
use super::csv_out::{num, write_table};
use super::output::{note, print};
use super::UsageError;
use crate::device::replay::Dataset;
use crate::llm::port::{cli_client, ClientPort};
use crate::report::plot::{line_plot_svg, Series};
use crate::report::search_eval::{render_markdown, render_summary, render_text};
use crate::search::eval::{eval_datasets, EvalSettings};
use crate::search::llm_port::SharedLlm;
use crate::search::strategies::{self, StrategyOptions};

const LLM_STRATEGIES: [&str; 3] = ["llm", "llm-iterative", "autonomous"];

pub fn run(g: &GlobalOpts, a: &EvalArgs) -> Result<()> {
    let mut datasets = Vec::new();
    for path in &a.datasets {
        let data = Dataset::load(path)
            .with_context(|| format!("cannot load dataset {}", path.display()))?;
        let label = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        datasets.push((label, data));
    }
    // Replies are cached, and each request carries a seed drawn from the search's seed, so
    // every seed gets (and caches) replies of its own.
    let llm: Option<SharedLlm> = if a.llm.is_set() {
        let config = super::search_args::llm_config(&a.llm)?;
        let cache = dirs::cache_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("gemmtune")
            .join("llm");
        Some(Arc::new(ClientPort::new(cli_client(
            &config, &cache, None,
        )?)))
    } else {
        None
    };
    let names: Vec<String> = if a.strategies.is_empty() {
        strategies::names()
            .into_iter()
            .filter(|n| llm.is_some() || !LLM_STRATEGIES.contains(n))
            .map(String::from)
            .collect()
    } else {
        a.strategies.clone()
    };
    let known = strategies::names();
    for n in &names {
        if !known.contains(&n.as_str()) {
            return Err(UsageError(format!(
                "unknown strategy `{n}` (known: {})",
                known.join(", ")
            ))
            .into());
        }
        if LLM_STRATEGIES.contains(&n.as_str()) && llm.is_none() {
            return Err(UsageError(format!("strategy `{n}` needs --llm-url/--llm-model")).into());
        }
    }
    let seeds: Vec<u64> = (1..=a.seeds.max(1)).collect();
    note(
        g,
        &format!(
            "gemmtune: {} strategies x {} seeds on {} dataset(s) ({} recorded configs)",
            names.len(),
            seeds.len(),
            datasets.len(),
            datasets.iter().map(|(_, d)| d.len()).sum::<usize>()
        ),
    );
    let settings = EvalSettings {
        batch_size: a.batch_size.max(1),
        ..EvalSettings::default()
    };
    let evals = eval_datasets(
        &datasets,
        &names,
        &StrategyOptions::default(),
        llm,
        &seeds,
        &a.budgets,
        &settings,
    )?;

    if let (Some(path), Some(first)) = (&a.plot, evals.first()) {
        let series: Vec<Series> = first
            .report
            .results
            .iter()
            .map(|r| Series {
                label: r.strategy.clone(),
                points: r
                    .best_at_budget
                    .iter()
                    .filter_map(|(b, us)| us.map(|u| (*b as f64, u)))
                    .collect(),
            })
            .collect();
        let svg = line_plot_svg(
            &format!("{}: median best vs budget", first.label),
            "evaluations",
            "best median (us)",
            &series,
            Some(("sweep best", first.report.best_us)),
        );
        std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &a.markdown {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let command = format!("gemmtune {}", args.join(" "));
        let page = render_markdown(&evals, &command, seeds.len(), settings.tolerance);
        std::fs::write(path, page).with_context(|| format!("cannot write {}", path.display()))?;
    }

    if let Some(path) = &g.csv {
        // One row per dataset, strategy and budget: the median best reached there.
        let mut rows = Vec::new();
        for (d, r) in evals
            .iter()
            .flat_map(|d| d.report.results.iter().map(move |r| (d, r)))
        {
            for (budget, us) in &r.best_at_budget {
                rows.push(vec![
                    d.label.clone(),
                    r.strategy.clone(),
                    budget.to_string(),
                    num(*us),
                    num(r.median_evals_to_target),
                    r.evals_to_target
                        .iter()
                        .filter(|e| e.is_some())
                        .count()
                        .to_string(),
                    r.evals_to_target.len().to_string(),
                    r.invalid_suggestions.to_string(),
                ]);
            }
        }
        write_table(
            path,
            &[
                "dataset",
                "strategy",
                "budget",
                "median_best_us",
                "median_evals_to_2pct",
                "seeds_reaching_2pct",
                "seeds",
                "invalid_suggestions",
            ],
            &rows,
        )?;
    }
    if g.json {
        let docs: Vec<serde_json::Value> = evals
            .iter()
            .map(|d| {
                let rows: Vec<serde_json::Value> = d
                    .report
                    .results
                    .iter()
                    .map(|r| {
                        serde_json::json!({
                            "strategy": r.strategy,
                            "median_evals_to_2pct": r.median_evals_to_target,
                            "evals_to_2pct": r.evals_to_target,
                            "best_at_budget": r.best_at_budget,
                            "invalid_suggestions": r.invalid_suggestions,
                            "llm": r.llm.as_ref().map(|l| serde_json::json!({
                                "valid_rate": l.valid_rate(),
                                "fallback_rounds": l.fallback_rounds,
                                "rounds": l.rounds,
                                "input_tokens": l.input_tokens,
                                "output_tokens": l.output_tokens,
                                "wall_per_round_s": l.wall_per_round_s(),
                            })),
                        })
                    })
                    .collect();
                serde_json::json!({
                    "dataset": d.label,
                    "device": d.device,
                    "recorded": d.recorded,
                    "configs": d.dataset_configs,
                    "best_config": d.report.best_config.name(),
                    "best_us": d.report.best_us,
                    "default_config": d.default_config.map(|c| c.name()),
                    "default_us": d.default_us,
                    "learned_from_shapes": d.corpus_shapes,
                    "strategies": rows,
                })
            })
            .collect();
        return print(&format!("{}\n", serde_json::to_string_pretty(&docs)?));
    }
    let mut out = String::new();
    for d in &evals {
        out.push_str(&render_text(d, &a.budgets));
        out.push('\n');
    }
    if evals.len() > 1 {
        out.push_str(&render_summary(&evals));
    }
    print(&out)
}
