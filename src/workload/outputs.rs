//! Writes a workload report into an output directory, the same way for one run, a shard and
//! a merge: `workload.csv` (every GEMM with its weight), `raw_results.csv` (every GEMM this
//! report handled: baseline, best, ratio, error, config, verdict), `final_results.csv` (the
//! kept ones), `unread_lines.csv` (the log lines whose GEMMs could not be read, see
//! [`super::unread`]), `summary.md` with `uplift.svg`, and `solutions.json`.

use std::path::{Path, PathBuf};

use super::chart::uplift_svg;
use super::record::{write_records, write_workload, GemmRecord, Verdict};
use super::selection::WorkloadGemm;
use super::solutions::SolutionFile;
use super::summary::{render_markdown, Files, Heading, Summary};
use super::unread;
use super::WorkloadError;
use crate::problem::log::LogIssue;

pub const WORKLOAD_CSV: &str = "workload.csv";
pub const RAW_CSV: &str = "raw_results.csv";
pub const FINAL_CSV: &str = "final_results.csv";
pub const UNREAD_CSV: &str = "unread_lines.csv";
pub const SUMMARY_MD: &str = "summary.md";
pub const CHART_SVG: &str = "uplift.svg";
pub const SOLUTIONS: &str = "solutions.json";

/// A report to write.
pub struct Report<'a> {
    pub heading: Heading,
    pub workload: &'a [WorkloadGemm],
    /// Sorted by id.
    pub records: &'a [GemmRecord],
    /// The log lines that could not be read.
    pub unread: &'a [LogIssue],
    pub shards: usize,
    pub min_uplift: f64,
}

/// Checks that `dir` can be created and written before any measuring starts.
pub fn ensure_writable(dir: &Path) -> Result<(), WorkloadError> {
    let fail = |e: std::io::Error| {
        WorkloadError::Usage(format!(
            "cannot write to output directory {}: {e}",
            dir.display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    let probe = dir.join(format!(".write-test-{}", std::process::id()));
    std::fs::write(&probe, b"ok").map_err(fail)?;
    std::fs::remove_file(&probe).map_err(fail)
}

/// Writes every file of the report; returns its headline numbers and the files written.
pub fn write(dir: &Path, r: &Report<'_>) -> Result<(Summary, Vec<PathBuf>), WorkloadError> {
    let mut files = Vec::new();
    let path = dir.join(WORKLOAD_CSV);
    write_workload(&path, r.workload, r.shards)?;
    files.push(path);
    let path = dir.join(RAW_CSV);
    write_records(&path, r.records, r.min_uplift)?;
    files.push(path);
    let kept: Vec<GemmRecord> = r
        .records
        .iter()
        .filter(|x| x.verdict(r.min_uplift) == Verdict::Kept)
        .cloned()
        .collect();
    let path = dir.join(FINAL_CSV);
    write_records(&path, &kept, r.min_uplift)?;
    files.push(path);
    let path = dir.join(UNREAD_CSV);
    unread::write(&path, r.unread)?;
    files.push(path);
    let chart = uplift_svg(
        &format!("{}: per-GEMM uplift", r.heading.title),
        r.records,
        r.min_uplift,
    );
    if let Some(svg) = &chart {
        let path = dir.join(CHART_SVG);
        std::fs::write(&path, svg)
            .map_err(|e| WorkloadError::io(format!("cannot write {}", path.display()), e))?;
        files.push(path);
    }
    let md = render_markdown(
        &r.heading,
        r.workload,
        r.records,
        r.unread,
        r.min_uplift,
        Files {
            chart: chart.as_ref().map(|_| CHART_SVG),
            unread: UNREAD_CSV,
        },
    );
    let path = dir.join(SUMMARY_MD);
    std::fs::write(&path, md)
        .map_err(|e| WorkloadError::io(format!("cannot write {}", path.display()), e))?;
    files.push(path);
    let path = dir.join(SOLUTIONS);
    SolutionFile::from_records(r.records, r.min_uplift).save(&path)?;
    files.push(path);
    Ok((
        Summary::of(r.workload, r.records, r.unread, r.min_uplift),
        files,
    ))
}
