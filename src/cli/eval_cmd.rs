//! `gemmtune eval-strategies DATASET`: runs each strategy many times (seeds) on a recorded
//! sweep through the replay backend and reports how fast each gets within 2% of the sweep's
//! best, and the best each reaches at fixed budgets.

use anyhow::{Context, Result};
use std::sync::Arc;

use super::args::{EvalArgs, GlobalOpts};
use super::csv_out::{num, write_table};
use super::output::{note, print};
use super::UsageError;
use crate::device::replay::Dataset;
use crate::llm::port::{cli_client, ClientPort};
use crate::report::plot::{line_plot_svg, Series};
use crate::search::eval::{eval_strategies, Contender, EvalSettings};
use crate::search::llm_port::SharedLlm;
use crate::search::strategies::{self, StrategyOptions};

const LLM_STRATEGIES: [&str; 3] = ["llm", "llm-iterative", "autonomous"];

pub fn run(g: &GlobalOpts, a: &EvalArgs) -> Result<()> {
    let data = Dataset::load(&a.dataset)
        .with_context(|| format!("cannot load dataset {}", a.dataset.display()))?;
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
    let mut contenders = Vec::new();
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
        let name = n.clone();
        let llm = llm.clone();
        contenders.push(Contender::new(n, move || {
            strategies::build(&name, &StrategyOptions::default(), llm.clone())
        }));
    }
    let seeds: Vec<u64> = (1..=a.seeds.max(1)).collect();
    note(
        g,
        &format!(
            "gemmtune: {} strategies x {} seeds on {} recorded configs of {}",
            contenders.len(),
            seeds.len(),
            data.len(),
            data.header.problem.label()
        ),
    );
    let settings = EvalSettings {
        batch_size: a.batch_size.max(1),
        ..EvalSettings::default()
    };
    let report = eval_strategies(&data, &contenders, &seeds, &a.budgets, &settings)?;

    if let Some(path) = &a.plot {
        let series: Vec<Series> = report
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
            &format!("{}: median best vs budget", data.header.problem.label()),
            "evaluations",
            "best median (us)",
            &series,
            Some(("sweep best", report.best_us)),
        );
        std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
    }

    if let Some(path) = &g.csv {
        // One row per strategy and budget: the median best reached there.
        let mut rows = Vec::new();
        for r in &report.results {
            for (budget, us) in &r.best_at_budget {
                rows.push(vec![
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
        let rows: Vec<serde_json::Value> = report
            .results
            .iter()
            .map(|r| {
                serde_json::json!({
                    "strategy": r.strategy,
                    "median_evals_to_2pct": r.median_evals_to_target,
                    "evals_to_2pct": r.evals_to_target,
                    "best_at_budget": r.best_at_budget,
                    "invalid_suggestions": r.invalid_suggestions,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "dataset": a.dataset,
            "best_config": report.best_config.name(),
            "best_us": report.best_us,
            "strategies": rows,
        });
        return print(&format!("{}\n", serde_json::to_string_pretty(&doc)?));
    }
    let mut out = format!(
        "sweep best: {} {:.1} us ({} configs)\n{:<15} {:>16}",
        report.best_config,
        report.best_us,
        data.len(),
        "strategy",
        "evals to 2%"
    );
    for b in &a.budgets {
        out.push_str(&format!(" {:>10}", format!("best@{b}")));
    }
    out.push_str(&format!(" {:>8}\n", "invalid"));
    for r in &report.results {
        let reached = r.evals_to_target.iter().filter(|e| e.is_some()).count();
        let med = r
            .median_evals_to_target
            .map(|m| format!("{m:.0}"))
            .unwrap_or_else(|| "never".into());
        out.push_str(&format!(
            "{:<15} {:>16}",
            r.strategy,
            format!("{med} ({reached}/{})", r.evals_to_target.len())
        ));
        for (_, us) in &r.best_at_budget {
            out.push_str(&format!(
                " {:>10}",
                us.map(|u| format!("{u:.1}")).unwrap_or_else(|| "-".into())
            ));
        }
        out.push_str(&format!(" {:>8}\n", r.invalid_suggestions));
    }
    print(&out)
}
