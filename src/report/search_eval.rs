//! The offline comparison of search strategies (`eval-strategies`) as text and markdown.
//!
//! Per sweep: its best config, how far the space's default config is from it, and per
//! strategy the median evaluations to come within 2% of the best (with how many seeds got
//! there), the best reached at fixed budgets, invalid suggestions, and for LLM-driven
//! strategies what the model contributed (valid rate, fallback rounds, tokens, seconds per
//! round). With several sweeps, one summary table puts every sweep beside every strategy;
//! the markdown form of it is docs/search.md.

use crate::search::eval::{DatasetEval, StrategyEval};
use crate::search::llm_account::LlmAccount;

/// `median (reached/runs)`, or `never (reached/runs)`.
pub fn evals_to_target(r: &StrategyEval) -> String {
    let reached = r.evals_to_target.iter().filter(|e| e.is_some()).count();
    let med = r
        .median_evals_to_target
        .map(|m| format!("{m:.0}"))
        .unwrap_or_else(|| "never".into());
    format!("{med} ({reached}/{})", r.evals_to_target.len())
}

/// How far the default config is from the sweep's best, e.g. `+12.3%`.
pub fn default_gap(d: &DatasetEval) -> String {
    d.default_us
        .map(|u| format!("{:+.1}%", (u / d.report.best_us - 1.0) * 100.0))
        .unwrap_or_else(|| "not swept".into())
}

fn llm_cells(a: Option<&LlmAccount>) -> [String; 4] {
    match a {
        Some(a) => [
            a.valid_rate()
                .map(|r| format!("{:.0}%", r * 100.0))
                .unwrap_or_else(|| "-".into()),
            format!("{}/{}", a.fallback_rounds, a.rounds),
            format!("{}", a.input_tokens + a.output_tokens),
            format!("{:.1}", a.wall_per_round_s()),
        ],
        None => ["-".into(), "-".into(), "-".into(), "-".into()],
    }
}

/// One sweep's table, as `eval-strategies` prints it.
pub fn render_text(d: &DatasetEval, budgets: &[usize]) -> String {
    let r = &d.report;
    let with_llm = r.results.iter().any(|s| s.llm.is_some());
    let mut out = format!(
        "{}: sweep best {} {:.1} us ({} configs); the default config is {}\n{:<15} {:>16}",
        d.label,
        r.best_config,
        r.best_us,
        d.dataset_configs,
        default_gap(d),
        "strategy",
        "evals to 2%"
    );
    for b in budgets {
        out.push_str(&format!(" {:>10}", format!("best@{b}")));
    }
    out.push_str(&format!(" {:>8}", "invalid"));
    if with_llm {
        out.push_str(&format!(
            " {:>9} {:>9} {:>9} {:>9}",
            "llm valid", "fallback", "tokens", "s/round"
        ));
    }
    out.push('\n');
    for s in &r.results {
        out.push_str(&format!("{:<15} {:>16}", s.strategy, evals_to_target(s)));
        for (_, us) in &s.best_at_budget {
            out.push_str(&format!(
                " {:>10}",
                us.map(|u| format!("{u:.1}")).unwrap_or_else(|| "-".into())
            ));
        }
        out.push_str(&format!(" {:>8}", s.invalid_suggestions));
        if with_llm {
            let [v, f, t, w] = llm_cells(s.llm.as_ref());
            out.push_str(&format!(" {v:>9} {f:>9} {t:>9} {w:>9}"));
        }
        out.push('\n');
    }
    out
}

/// The strategies evaluated, in the order of the first sweep.
fn strategies(evals: &[DatasetEval]) -> Vec<String> {
    evals
        .first()
        .map(|d| {
            d.report
                .results
                .iter()
                .map(|s| s.strategy.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// Every sweep beside every strategy: median evaluations to within 2% of the best.
pub fn render_summary(evals: &[DatasetEval]) -> String {
    let names = strategies(evals);
    let mut out = format!(
        "{:<44} {:>10}",
        "dataset (median evals to 2%)", "default cfg"
    );
    for n in &names {
        out.push_str(&format!(" {n:>14}"));
    }
    out.push('\n');
    for d in evals {
        out.push_str(&format!("{:<44} {:>10}", d.label, default_gap(d)));
        for s in &d.report.results {
            out.push_str(&format!(" {:>14}", evals_to_target(s)));
        }
        out.push('\n');
    }
    out
}

/// docs/search.md: the command that made it, what the numbers mean, and the table.
pub fn render_markdown(
    evals: &[DatasetEval],
    command: &str,
    seeds: usize,
    tolerance: f64,
) -> String {
    let names = strategies(evals);
    let mut out = String::from("# Search strategies on the replay datasets\n\n");
    out.push_str(
        "Generated from the recorded sweeps in `datasets/` by `scripts/search-report.sh`, which \
         runs:\n\n",
    );
    out.push_str(&format!("```sh\n{command}\n```\n\n"));
    out.push_str(&format!(
        "Each cell: the median, over {seeds} seeds, of the evaluations a strategy needed to \
         measure a config within {:.0}% of the dataset's best (judged on the recorded medians), \
         and in brackets how many seeds got there within the budget. `never`: the median run \
         did not. `default vs best`: how much slower the space's default config is than the \
         best. Strategies that learn across shapes (`default` is the model-based search when \
         there are measurements of other shapes) are evaluated leave-one-shape-out: on each \
         dataset they learn from every other dataset, never from the one they are judged on. \
         Devices named `sim:` are the analytic model of that GPU, not measurements. \
         `scripts/record-datasets.sh` records the GPU datasets (each with its provenance \
         beside it in `NAME.provenance.json`).\n\n",
        tolerance * 100.0
    ));
    out.push_str("| dataset | device | recorded | configs | default vs best |");
    for n in &names {
        out.push_str(&format!(" {n} |"));
    }
    out.push_str("\n|---|---|---|---:|---:|");
    for _ in &names {
        out.push_str("---:|");
    }
    out.push('\n');
    for d in evals {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |",
            d.label,
            d.device,
            d.recorded.as_deref().unwrap_or("-"),
            d.dataset_configs,
            default_gap(d)
        ));
        for s in &d.report.results {
            out.push_str(&format!(" {} |", evals_to_target(s)));
        }
        out.push('\n');
    }
    let llm: Vec<(&str, &StrategyEval)> = evals
        .iter()
        .flat_map(|d| {
            d.report
                .results
                .iter()
                .filter(|s| s.llm.is_some())
                .map(move |s| (d.label.as_str(), s))
        })
        .collect();
    if !llm.is_empty() {
        out.push_str("\n## What the LLM contributed\n\n| dataset | strategy | valid suggestions | fallback rounds | tokens | s per round |\n|---|---|---:|---:|---:|---:|\n");
        for (label, s) in llm {
            let [v, f, t, w] = llm_cells(s.llm.as_ref());
            out.push_str(&format!(
                "| {label} | {} | {v} | {f} | {t} | {w} |\n",
                s.strategy
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::eval::EvalReport;
    use crate::space::KernelConfig;

    fn eval(strategy: &str, evals: Vec<Option<usize>>, llm: Option<LlmAccount>) -> StrategyEval {
        StrategyEval {
            strategy: strategy.into(),
            median_evals_to_target: Some(4.0),
            evals_to_target: evals,
            best_at_budget: vec![(25, Some(101.0))],
            invalid_suggestions: 2,
            llm,
        }
    }

    #[test]
    fn tables_carry_the_llm_columns_and_the_default_gap() {
        let best = KernelConfig::parse(
            "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0",
        )
        .unwrap();
        let account = LlmAccount {
            rounds: 4,
            requests: 4,
            suggested: 40,
            valid: 38,
            from_llm: 30,
            filled: 2,
            fallback_rounds: 1,
            input_tokens: 9000,
            output_tokens: 1000,
            wall_s: 10.0,
        };
        let d = DatasetEval {
            label: "gemv_4096x1x4096_bf16".into(),
            device: "NVIDIA H100 80GB HBM3".into(),
            recorded: Some("2026-12-01".into()),
            dataset_configs: 78,
            default_config: Some(best),
            default_us: Some(110.0),
            corpus_shapes: 9,
            report: EvalReport {
                best_config: best,
                best_us: 100.0,
                results: vec![
                    eval("llm", vec![Some(3), Some(5), None], Some(account)),
                    eval("pattern", vec![Some(4); 3], None),
                ],
            },
        };
        let text = render_text(&d, &[25]);
        assert!(text.contains("the default config is +10.0%"), "{text}");
        assert!(text.contains("llm valid"), "{text}");
        assert!(
            text.contains("95%") && text.contains("1/4") && text.contains("10000"),
            "{text}"
        );
        assert!(text.contains("4 (2/3)"), "{text}");
        let md = render_markdown(
            std::slice::from_ref(&d),
            "gemmtune eval-strategies x",
            3,
            0.02,
        );
        assert!(md.contains("| gemv_4096x1x4096_bf16 | NVIDIA H100 80GB HBM3 | 2026-12-01 | 78 | +10.0% | 4 (2/3) | 4 (3/3) |"), "{md}");
        assert!(md.contains("## What the LLM contributed"), "{md}");
        assert!(
            md.contains("| gemv_4096x1x4096_bf16 | llm | 95% | 1/4 | 10000 | 2.5 |"),
            "{md}"
        );
        assert!(render_summary(&[d]).contains("+10.0%"));
    }
}
