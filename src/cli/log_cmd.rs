//! `gemmtune log LOG...`: the merged list of GEMMs a workload runs, before tuning it.

use anyhow::Result;

use super::args::{GlobalOpts, LogArgs};
use super::csv_out::{num, write_table};
use super::output::{note, print};
use crate::problem::log::{parse_files, Severity};
use crate::report::render_log_table;

pub fn run(g: &GlobalOpts, a: &LogArgs) -> Result<()> {
    let parsed = parse_files(&a.logs)?;
    for issue in &parsed.issues {
        let level = match issue.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        note(
            g,
            &format!(
                "gemmtune: {level}: {}:{}: {}",
                issue.source, issue.line, issue.message
            ),
        );
    }
    let total: f64 = parsed
        .entries
        .iter()
        .map(|e| e.problem.flops() * e.call_count as f64)
        .sum();
    if let Some(path) = &g.csv {
        let rows: Vec<Vec<String>> = parsed
            .entries
            .iter()
            .map(|e| {
                let f = e.problem.flops() * e.call_count as f64;
                vec![
                    e.problem.label(),
                    e.problem.hipblaslt_bench_args(),
                    e.call_count.to_string(),
                    e.problem.flops().to_string(),
                    e.problem.min_bytes().to_string(),
                    num(Some(if total > 0.0 { f / total } else { 0.0 })),
                    e.source.to_string(),
                    e.first_line.to_string(),
                ]
            })
            .collect();
        write_table(
            path,
            &[
                "gemm",
                "hipblaslt_bench_args",
                "call_count",
                "flops_per_call",
                "min_bytes_per_call",
                "flops_share",
                "source",
                "first_line",
            ],
            &rows,
        )?;
    }
    if g.json {
        let rows: Vec<serde_json::Value> = parsed
            .entries
            .iter()
            .map(|e| {
                let f = e.problem.flops() * e.call_count as f64;
                serde_json::json!({
                    "problem": e.problem,
                    "label": e.problem.label(),
                    "call_count": e.call_count,
                    "flops_per_call": e.problem.flops(),
                    "min_bytes_per_call": e.problem.min_bytes(),
                    "arithmetic_intensity": e.problem.arithmetic_intensity(),
                    "flops_share": if total > 0.0 { f / total } else { 0.0 },
                    "source": e.source,
                    "first_line": e.first_line,
                })
            })
            .collect();
        return print(&format!("{}\n", serde_json::to_string_pretty(&rows)?));
    }
    if parsed.entries.is_empty() {
        note(g, "gemmtune: no matmul lines found in the given logs");
        return Ok(());
    }
    print(&render_log_table(&parsed.entries))
}
