//! Terminal tables of a workload: the selection (each GEMM's share of the GEMM time, printed
//! before tuning starts) and the results (printed at the end, with the notes on rows whose
//! log line asked for more than the plain GEMM, [`super::log_fields`]).

use super::log_fields::Footnotes;
use super::record::GemmRecord;
use super::selection::WorkloadGemm;
use super::shard::Shard;

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map(|v| format!("{v:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

/// The GEMMs of the workload, largest share first, marking the ones selected.
pub fn render_selection(workload: &[WorkloadGemm], shard: Shard) -> String {
    let mut order: Vec<&WorkloadGemm> = workload.iter().collect();
    order.sort_by_key(|g| (g.rank.unwrap_or(usize::MAX), g.id));
    let mut out = format!(
        "{:>4} {:>5} {:<34} {:>9} {:>11} {:>7}  {}\n",
        "rank", "#", "GEMM", "calls", "vendor us", "share", "selected"
    );
    for g in order {
        let sel = if g.selected {
            if !shard.owns(g.id) {
                format!(
                    "yes (shard {}/{})",
                    Shard::owner(shard.count, g.id),
                    shard.count
                )
            } else if let Some(s) = &g.skip {
                format!("yes, but skipped: {s}")
            } else {
                "yes".into()
            }
        } else if let Some(s) = &g.skip {
            format!("no: {s}")
        } else {
            "no".into()
        };
        out.push_str(&format!(
            "{:>4} {:>5} {:<34} {:>9} {:>11} {:>7}  {}\n",
            g.rank.map(|r| r.to_string()).unwrap_or_else(|| "-".into()),
            format!("#{}", g.id),
            g.problem.label(),
            g.calls,
            opt(g.baseline_us, 2),
            g.share
                .map(|s| format!("{:.1}%", s * 100.0))
                .unwrap_or_else(|| "-".into()),
            sel
        ));
    }
    out
}

/// One line per GEMM of the report with its verdict, then the notes.
pub fn render_results(records: &[GemmRecord], min_uplift: f64) -> String {
    let notes = Footnotes::of(records.iter().map(|r| (r.id, &r.log_fields)));
    let mut out = format!(
        "{:>5} {:<34} {:>11} {:>11} {:>8}  {:<8} {}\n",
        "#", "GEMM", "vendor us", "tuned us", "speedup", "status", "kernel / reason"
    );
    for r in records {
        let v = r.verdict(min_uplift);
        let detail = match (&v, &r.config) {
            (super::record::Verdict::Kept, Some(c)) => c.clone(),
            _ => v.reason().to_string(),
        };
        out.push_str(&format!(
            "{:>5} {:<34} {:>11} {:>11} {:>8}  {:<8} {}\n",
            format!("#{}", r.id),
            format!("{}{}", r.problem.label(), notes.marker(r.id)),
            opt(r.vendor_us.or(r.baseline_us), 2),
            opt(r.best_us, 2),
            r.speedup()
                .map(|s| format!("{s:.3}x"))
                .unwrap_or_else(|| "-".into()),
            v.status(),
            detail
        ));
    }
    for l in notes.lines() {
        out.push_str(&format!("{l}\n"));
    }
    out
}
