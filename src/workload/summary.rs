//! The workload's headline numbers and `summary.md`.
//!
//! Definitions (the same for one run and for merged shards):
//! - *workload GEMM time*: the sum over every GEMM of the log that has a baseline of
//!   `calls x vendor time per call`;
//! - *uplift* of one GEMM: `vendor time / tuned time - 1`, both re-timed side by side;
//! - *average uplift*: the mean uplift of the kept kernels (and, for context, of every tuned
//!   GEMM with dropped ones counted as 0, since the vendor library keeps running them);
//! - *weighted total uplift*: the time the kept kernels save, `sum of calls x (vendor -
//!   tuned)`, over the workload GEMM time: the fraction of the workload's GEMM time saved;
//! - *lines not read*: lines of the logs meant as GEMM entries that could not be read
//!   ([`super::unread`]); their GEMMs are in none of the numbers above.
//!
//! Rows whose log line asked for more than the plain GEMM carry a numbered note under the
//! table ([`super::log_fields`]).

use serde::{Deserialize, Serialize};

use super::log_fields::Footnotes;
use super::record::{GemmRecord, Verdict};
use super::selection::{workload_us, WorkloadGemm};
use super::unread;
use crate::problem::log::LogIssue;

/// Headline numbers of a workload report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub gemms: usize,
    pub selected: usize,
    pub tuned: usize,
    pub kept: usize,
    pub dropped: usize,
    pub skipped: usize,
    pub failed: usize,
    /// Workload GEMM time, microseconds.
    pub workload_us: f64,
    /// Time of the selected GEMMs.
    pub selected_us: f64,
    /// Time the kept kernels save.
    pub saved_us: f64,
    /// `saved_us / workload_us`.
    pub weighted_uplift: f64,
    /// Mean uplift of the kept kernels.
    pub average_uplift_kept: Option<f64>,
    /// Mean uplift over every tuned GEMM, dropped ones counted as 0.
    pub average_uplift_tuned: Option<f64>,
    /// Lines of the logs that could not be read: their GEMMs are not in the report.
    #[serde(default)]
    pub lines_not_read: usize,
}

impl Summary {
    pub fn of(
        workload: &[WorkloadGemm],
        records: &[GemmRecord],
        unread: &[LogIssue],
        min_uplift: f64,
    ) -> Self {
        let verdicts: Vec<Verdict> = records.iter().map(|r| r.verdict(min_uplift)).collect();
        let count = |s: &str| verdicts.iter().filter(|v| v.status() == s).count();
        let kept: Vec<&GemmRecord> = records
            .iter()
            .zip(&verdicts)
            .filter(|(_, v)| **v == Verdict::Kept)
            .map(|(r, _)| r)
            .collect();
        let uplift = |r: &GemmRecord| r.speedup().map(|s| s - 1.0).unwrap_or(0.0);
        let saved_us: f64 = kept
            .iter()
            .map(|r| match (r.vendor_us, r.best_us) {
                (Some(v), Some(b)) => r.calls as f64 * (v - b),
                _ => 0.0,
            })
            .sum();
        let total = workload_us(workload);
        let tuned: Vec<f64> = records
            .iter()
            .zip(&verdicts)
            .filter(|(_, v)| v.was_tuned())
            .map(|(r, v)| if *v == Verdict::Kept { uplift(r) } else { 0.0 })
            .collect();
        let mean = |xs: &[f64]| (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
        Summary {
            gemms: workload.len(),
            selected: workload.iter().filter(|g| g.selected).count(),
            tuned: tuned.len(),
            kept: kept.len(),
            dropped: count("dropped"),
            skipped: count("skipped"),
            failed: count("failed"),
            workload_us: total,
            selected_us: workload
                .iter()
                .filter(|g| g.selected)
                .filter_map(WorkloadGemm::total_us)
                .sum(),
            saved_us,
            weighted_uplift: if total > 0.0 { saved_us / total } else { 0.0 },
            average_uplift_kept: mean(&kept.iter().map(|r| uplift(r)).collect::<Vec<_>>()),
            average_uplift_tuned: mean(&tuned),
            lines_not_read: unread::count(unread),
        }
    }
}

/// Context lines for the top of `summary.md`.
#[derive(Debug, Clone, Default)]
pub struct Heading {
    pub title: String,
    pub lines: Vec<String>,
}

fn pct(x: f64) -> String {
    format!("{:+.2}%", x * 100.0)
}

fn us(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into())
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Where a report's table and its lines not read are written, named in `summary.md`.
#[derive(Debug, Clone, Copy)]
pub struct Files<'a> {
    /// The chart next to the summary, if one was drawn.
    pub chart: Option<&'a str>,
    pub unread: &'a str,
}

/// Renders `summary.md`: the heading, the per-GEMM table with its notes, the headline
/// numbers, the chart, the lines of the logs not read and the GEMMs not selected.
pub fn render_markdown(
    heading: &Heading,
    workload: &[WorkloadGemm],
    records: &[GemmRecord],
    unread: &[LogIssue],
    min_uplift: f64,
    files: Files<'_>,
) -> String {
    let s = Summary::of(workload, records, unread, min_uplift);
    let mut out = format!("# {}\n\n", heading.title);
    for l in &heading.lines {
        out.push_str(&format!("- {l}\n"));
    }
    out.push_str(&format!(
        "- {} distinct GEMMs in the log, {} selected ({:.1}% of the GEMM time), {} tuned: {} kept, {} dropped, {} skipped, {} failed\n",
        s.gemms,
        s.selected,
        if s.workload_us > 0.0 { s.selected_us / s.workload_us * 100.0 } else { 0.0 },
        s.tuned,
        s.kept,
        s.dropped,
        s.skipped,
        s.failed
    ));
    if s.lines_not_read > 0 {
        out.push_str(&format!(
            "- {}, left out of every number here: see *Lines not read* below\n",
            unread::phrase(unread)
        ));
    }
    out.push('\n');
    let notes = Footnotes::of(records.iter().map(|r| (r.id, &r.log_fields)));
    out.push_str("| # | GEMM | calls | share | vendor us | tuned us | speedup | error / tol | status | kernel |\n");
    out.push_str("|---:|---|---:|---:|---:|---:|---:|---|---|---|\n");
    for r in records {
        let v = r.verdict(min_uplift);
        let status = if v.reason().is_empty() {
            v.status().to_string()
        } else {
            format!("{}: {}", v.status(), v.reason())
        };
        let err = match (r.error, r.tolerance) {
            (Some(e), Some(t)) => format!("{e:.1e} / {t:.1e}"),
            _ => "-".into(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.id,
            cell(&format!("{}{}", r.problem.label(), notes.marker(r.id))),
            r.calls,
            r.share
                .map(|x| format!("{:.1}%", x * 100.0))
                .unwrap_or_else(|| "-".into()),
            us(r.vendor_us.or(r.baseline_us)),
            us(r.best_us),
            r.speedup()
                .map(|x| format!("{x:.3}x"))
                .unwrap_or_else(|| "-".into()),
            err,
            cell(&status),
            r.config
                .as_deref()
                .map(|c| format!("`{c}`"))
                .unwrap_or_else(|| "-".into()),
        ));
    }
    out.push('\n');
    for l in notes.lines() {
        out.push_str(&format!("{}\n\n", cell(&l)));
    }
    out.push_str(&format!(
        "**Average uplift** of the {} kept kernels: {} ({} over all {} tuned GEMMs, dropped ones counted as 0)\n\n",
        s.kept,
        s.average_uplift_kept.map(pct).unwrap_or_else(|| "-".into()),
        s.average_uplift_tuned.map(pct).unwrap_or_else(|| "-".into()),
        s.tuned
    ));
    let after = s.workload_us - s.saved_us;
    out.push_str(&format!(
        "**Weighted total uplift**: {:.2}% of the workload's GEMM time saved ({:.3} ms -> {:.3} ms per run of the log, {:.3}x)\n\n",
        s.weighted_uplift * 100.0,
        s.workload_us / 1e3,
        after / 1e3,
        if after > 0.0 { s.workload_us / after } else { 1.0 }
    ));
    out.push_str(&format!(
        "Kept: verified against the reference and at least {:.1}% faster than the vendor library, both re-timed side by side.\n\n",
        min_uplift * 100.0
    ));
    if let Some(c) = files.chart {
        out.push_str(&format!("![per-GEMM uplift]({c})\n\n"));
    }
    out.push_str(&unread::markdown(unread, files.unread));
    let unranked: Vec<&WorkloadGemm> = workload.iter().filter(|g| !g.selected).collect();
    if !unranked.is_empty() {
        let time: f64 = unranked.iter().filter_map(|g| g.total_us()).sum();
        out.push_str(&format!(
            "## Not selected\n\n{} GEMMs ({:.1}% of the GEMM time) were below the selection threshold or had no baseline; see `workload.csv`.\n",
            unranked.len(),
            if s.workload_us > 0.0 { time / s.workload_us * 100.0 } else { 0.0 }
        ));
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::problem::GemmProblem;

    /// A tuned GEMM's record (`best` None: not tuned), for the tests of this folder.
    pub(crate) fn rec(id: usize, calls: u64, vendor: f64, best: Option<f64>) -> GemmRecord {
        GemmRecord {
            id,
            problem: GemmProblem::new(128, 128, 128),
            calls,
            share: None,
            baseline_us: Some(vendor),
            vendor_us: Some(vendor),
            best_us: best,
            search_us: best,
            error: best.map(|_| 1e-4),
            tolerance: best.map(|_| 1e-2),
            verified: best.map(|_| true),
            config: best.map(|_| "MT".to_string()),
            device: Some(0),
            device_name: None,
            arch: None,
            evaluations: 10,
            measured: 10,
            reused: 0,
            tune_s: Some(1.0),
            skip: None,
            failure: None,
            log_fields: Default::default(),
        }
    }

    fn wl(id: usize, calls: u64, baseline: f64) -> WorkloadGemm {
        WorkloadGemm {
            id,
            problem: GemmProblem::new(128, 128, 128),
            calls,
            source: String::new(),
            baseline_us: Some(baseline),
            skip: None,
            share: None,
            rank: None,
            selected: true,
            log_fields: Default::default(),
        }
    }

    #[test]
    fn weighted_uplift_is_time_saved_over_workload_time() {
        // Workload: 10 x 100 + 20 x 50 + 5 x 200 = 3000 us.
        let workload = vec![wl(0, 10, 100.0), wl(1, 20, 50.0), wl(2, 5, 200.0)];
        let records = vec![
            rec(0, 10, 100.0, Some(80.0)), // kept: saves 200, uplift 25%
            rec(1, 20, 50.0, Some(49.9)),  // dropped: under the 1% margin
            rec(2, 5, 200.0, Some(100.0)), // kept: saves 500, uplift 100%
        ];
        let s = Summary::of(&workload, &records, &[], 0.01);
        assert_eq!((s.kept, s.dropped, s.tuned), (2, 1, 3));
        assert!((s.workload_us - 3000.0).abs() < 1e-9);
        assert!((s.saved_us - 700.0).abs() < 1e-9);
        assert!((s.weighted_uplift - 700.0 / 3000.0).abs() < 1e-12);
        assert!((s.average_uplift_kept.unwrap() - 0.625).abs() < 1e-12);
        assert!((s.average_uplift_tuned.unwrap() - 1.25 / 3.0).abs() < 1e-12);
        let md = render_markdown(
            &Heading::default(),
            &workload,
            &records,
            &[],
            0.01,
            Files {
                chart: Some("u.svg"),
                unread: "unread.csv",
            },
        );
        assert!(md.contains("23.33% of the workload"), "{md}");
        assert!(md.contains("![per-GEMM uplift](u.svg)"));
    }
}
