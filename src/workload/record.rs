//! One row per GEMM of a workload report, its verdict, and the CSV files they live in.
//!
//! A [`GemmRecord`] joins what the baseline pass knew about a GEMM ([`WorkloadGemm`]) with
//! what tuning produced ([`TunedGemm`]). The verdict is not stored but computed from the
//! numbers ([`GemmRecord::verdict`]), as the post-processing of a tuning run does: a kernel
//! whose error exceeds the tolerance, or that does not beat the vendor library by
//! `min_uplift`, is dropped. The CSVs are the interchange format between shards: every
//! field needed to rebuild a record (the whole problem, in hipBLASLt's names) is a column,
//! floats are written in their shortest exact form, and [`read_records`] /
//! [`read_workload`] read them back losslessly for `gemmtune merge`.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::log_fields::{self, LogFields};
use super::pipeline::TunedGemm;
use super::selection::WorkloadGemm;
use super::shard::Shard;
use super::WorkloadError;
use crate::problem::GemmProblem;

/// One GEMM of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GemmRecord {
    pub id: usize,
    pub problem: GemmProblem,
    pub calls: u64,
    pub share: Option<f64>,
    /// The vendor library in the baseline pass, microseconds per call.
    pub baseline_us: Option<f64>,
    /// The vendor library re-timed beside the winner.
    pub vendor_us: Option<f64>,
    /// The winner re-timed at full size.
    pub best_us: Option<f64>,
    /// The winner's median during the search.
    pub search_us: Option<f64>,
    /// Relative L2 error of the winner's output against the reference.
    pub error: Option<f64>,
    pub tolerance: Option<f64>,
    pub verified: Option<bool>,
    pub config: Option<String>,
    pub device: Option<u32>,
    pub device_name: Option<String>,
    pub arch: Option<String>,
    pub evaluations: usize,
    pub measured: usize,
    pub reused: usize,
    pub tune_s: Option<f64>,
    /// Why the GEMM was not tuned.
    pub skip: Option<String>,
    /// The harness failure that stopped its tuning.
    pub failure: Option<String>,
    /// What the log line asked for beyond the plain GEMM, untimed ([`log_fields`]).
    #[serde(default)]
    pub log_fields: LogFields,
}

/// What happens to a GEMM's tuned kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Verified and faster than the vendor library by the margin: use it.
    Kept,
    /// Tuned, but wrong or not faster enough.
    Dropped(String),
    /// Not tuned.
    Skipped(String),
    /// Tuning stopped on a harness failure.
    Failed(String),
}

impl Verdict {
    pub fn status(&self) -> &'static str {
        match self {
            Verdict::Kept => "kept",
            Verdict::Dropped(_) => "dropped",
            Verdict::Skipped(_) => "skipped",
            Verdict::Failed(_) => "failed",
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            Verdict::Kept => "",
            Verdict::Dropped(r) | Verdict::Skipped(r) | Verdict::Failed(r) => r,
        }
    }

    /// Whether tuning ran to the end (kept or dropped).
    pub fn was_tuned(&self) -> bool {
        matches!(self, Verdict::Kept | Verdict::Dropped(_))
    }
}

impl GemmRecord {
    pub fn new(w: &WorkloadGemm, t: Option<&TunedGemm>) -> Self {
        GemmRecord {
            id: w.id,
            problem: w.problem.clone(),
            calls: w.calls,
            share: w.share,
            baseline_us: w.baseline_us,
            vendor_us: t.and_then(|t| t.vendor_us),
            best_us: t.and_then(|t| t.kernel_us),
            search_us: t.and_then(|t| t.search_us),
            error: t.and_then(|t| t.verification.as_ref().map(|v| v.rel_l2_err)),
            tolerance: t.and_then(|t| t.verification.as_ref().map(|v| v.tolerance)),
            verified: t.and_then(|t| t.verification.as_ref().map(|v| v.passed)),
            config: t.and_then(|t| t.config.clone()),
            device: t.map(|t| t.device),
            device_name: t.map(|t| t.device_name.clone()),
            arch: t.map(|t| t.arch.clone()),
            evaluations: t.map(|t| t.evaluations).unwrap_or(0),
            measured: t.map(|t| t.measured).unwrap_or(0),
            reused: t.map(|t| t.reused).unwrap_or(0),
            tune_s: t.map(|t| t.seconds),
            skip: w.skip.clone(),
            failure: t.and_then(|t| t.error.clone()),
            log_fields: w.log_fields.clone(),
        }
    }

    /// Vendor time over the winner's time (> 1: the winner is faster).
    pub fn speedup(&self) -> Option<f64> {
        match (self.vendor_us, self.best_us) {
            (Some(v), Some(b)) if b > 0.0 => Some(v / b),
            _ => None,
        }
    }

    /// The post-processing rule: keep a verified kernel that beats the vendor library by at
    /// least `min_uplift` (0.01 = 1%).
    pub fn verdict(&self, min_uplift: f64) -> Verdict {
        if let Some(s) = &self.skip {
            return Verdict::Skipped(s.clone());
        }
        if let Some(f) = &self.failure {
            return Verdict::Failed(f.clone());
        }
        let Some(config) = &self.config else {
            return if self.evaluations == 0 && self.tune_s.is_none() {
                Verdict::Skipped("not tuned".into())
            } else {
                Verdict::Dropped("no config passed verification".into())
            };
        };
        if self.verified != Some(true) {
            return Verdict::Dropped(match (self.error, self.tolerance) {
                (Some(e), Some(t)) => {
                    format!("error {e:.3e} exceeds the tolerance {t:.3e} when re-run")
                }
                _ => format!("{config} failed when re-run at full size"),
            });
        }
        match self.speedup() {
            Some(s) if s >= 1.0 + min_uplift => Verdict::Kept,
            Some(s) => Verdict::Dropped(format!(
                "{s:.3}x the vendor library, below the {:.1}% margin",
                min_uplift * 100.0
            )),
            None => Verdict::Dropped("no time to compare with the vendor library".into()),
        }
    }
}

/// Problem columns, in hipBLASLt's names.
const PROBLEM_COLUMNS: [&str; 25] = [
    "M",
    "N",
    "K",
    "batch_count",
    "transA",
    "transB",
    "lda",
    "ldb",
    "ldc",
    "ldd",
    "stride_a",
    "stride_b",
    "stride_c",
    "stride_d",
    "a_type",
    "b_type",
    "c_type",
    "d_type",
    "compute_type",
    "alpha",
    "beta",
    "scaleA",
    "scaleB",
    "scaleC",
    "scaleD",
];

fn problem_fields(p: &GemmProblem) -> Vec<String> {
    vec![
        p.m.to_string(),
        p.n.to_string(),
        p.k.to_string(),
        p.batch.to_string(),
        p.trans_a.to_string(),
        p.trans_b.to_string(),
        p.lda.to_string(),
        p.ldb.to_string(),
        p.ldc.to_string(),
        p.ldd.to_string(),
        p.stride_a.to_string(),
        p.stride_b.to_string(),
        p.stride_c.to_string(),
        p.stride_d.to_string(),
        p.a_type.to_string(),
        p.b_type.to_string(),
        p.c_type.to_string(),
        p.d_type.to_string(),
        p.compute_type.to_string(),
        p.alpha.to_string(),
        p.beta.to_string(),
        p.scale_a.to_string(),
        p.scale_b.to_string(),
        p.scale_c.to_string(),
        p.scale_d.to_string(),
    ]
}

/// A CSV row by column name.
pub(super) struct Row<'a> {
    fields: HashMap<&'a str, &'a str>,
}

impl Row<'_> {
    pub(super) fn text(&self, name: &str) -> Result<&str, String> {
        self.fields
            .get(name)
            .copied()
            .ok_or_else(|| format!("missing column `{name}`"))
    }

    fn opt_text(&self, name: &str) -> Result<Option<String>, String> {
        let t = self.text(name)?;
        Ok((!t.is_empty()).then(|| t.to_string()))
    }

    pub(super) fn parse<T: std::str::FromStr>(&self, name: &str) -> Result<T, String>
    where
        T::Err: std::fmt::Display,
    {
        let t = self.text(name)?;
        t.trim()
            .parse()
            .map_err(|e| format!("column `{name}`: `{t}`: {e}"))
    }

    fn opt<T: std::str::FromStr>(&self, name: &str) -> Result<Option<T>, String>
    where
        T::Err: std::fmt::Display,
    {
        if self.text(name)?.trim().is_empty() {
            Ok(None)
        } else {
            self.parse(name).map(Some)
        }
    }

    fn problem(&self) -> Result<GemmProblem, String> {
        let mut p = GemmProblem::new(self.parse("M")?, self.parse("N")?, self.parse("K")?);
        p.batch = self.parse("batch_count")?;
        p.trans_a = self.parse("transA")?;
        p.trans_b = self.parse("transB")?;
        p.lda = self.parse("lda")?;
        p.ldb = self.parse("ldb")?;
        p.ldc = self.parse("ldc")?;
        p.ldd = self.parse("ldd")?;
        p.stride_a = self.parse("stride_a")?;
        p.stride_b = self.parse("stride_b")?;
        p.stride_c = self.parse("stride_c")?;
        p.stride_d = self.parse("stride_d")?;
        p.a_type = self.parse("a_type")?;
        p.b_type = self.parse("b_type")?;
        p.c_type = self.parse("c_type")?;
        p.d_type = self.parse("d_type")?;
        p.compute_type = self.parse("compute_type")?;
        p.alpha = self.parse("alpha")?;
        p.beta = self.parse("beta")?;
        // Tables written before per-tensor scales existed have no scale columns.
        for (name, scale) in [
            ("scaleA", &mut p.scale_a),
            ("scaleB", &mut p.scale_b),
            ("scaleC", &mut p.scale_c),
            ("scaleD", &mut p.scale_d),
        ] {
            if self.fields.contains_key(name) {
                *scale = self.opt(name)?.unwrap_or(1.0);
            }
        }
        p.validate().map_err(|e| e.to_string())?;
        Ok(p)
    }

    /// The `log_fields` column; tables written before it existed have none.
    fn log_fields(&self) -> Result<LogFields, String> {
        match self.fields.get("log_fields") {
            Some(cell) => {
                log_fields::from_cell(cell).map_err(|e| format!("column `log_fields`: {e}"))
            }
            None => Ok(LogFields::new()),
        }
    }
}

fn f(x: Option<f64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

pub(super) fn write_table(
    path: &Path,
    header: &[&str],
    rows: &[Vec<String>],
) -> Result<(), WorkloadError> {
    let err = |e: csv::Error| WorkloadError::file(path, format!("cannot write: {e}"));
    let mut w = csv::Writer::from_path(path).map_err(err)?;
    w.write_record(header).map_err(err)?;
    for r in rows {
        w.write_record(r).map_err(err)?;
    }
    w.flush()
        .map_err(|e| WorkloadError::io(format!("cannot write {}", path.display()), e))
}

pub(super) fn read_table<T>(
    path: &Path,
    mut each: impl FnMut(&Row<'_>) -> Result<T, String>,
) -> Result<Vec<T>, WorkloadError> {
    let mut r = csv::Reader::from_path(path)
        .map_err(|e| WorkloadError::file(path, format!("cannot read: {e}")))?;
    let header = r
        .headers()
        .map_err(|e| WorkloadError::file(path, format!("cannot read the header: {e}")))?
        .clone();
    let mut out = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| WorkloadError::file(path, e))?;
        let row = Row {
            fields: header.iter().zip(rec.iter()).collect(),
        };
        // Line 1 is the header.
        out.push(
            each(&row).map_err(|e| WorkloadError::file(path, format!("line {}: {e}", i + 2)))?,
        );
    }
    Ok(out)
}

const RECORD_COLUMNS: [&str; 24] = [
    "id",
    "gemm",
    "calls",
    "share",
    "baseline_us",
    "vendor_us",
    "best_us",
    "speedup",
    "uplift_pct",
    "error",
    "tolerance",
    "verified",
    "config",
    "status",
    "reason",
    "device",
    "device_name",
    "arch",
    "evaluations",
    "measured",
    "reused",
    "search_us",
    "tune_s",
    "log_fields",
];

/// Writes records as CSV (`raw_results.csv`, `final_results.csv`), with their verdicts.
pub fn write_records(
    path: &Path,
    records: &[GemmRecord],
    min_uplift: f64,
) -> Result<(), WorkloadError> {
    let header: Vec<&str> = RECORD_COLUMNS
        .iter()
        .chain(PROBLEM_COLUMNS.iter())
        .copied()
        .collect();
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            let v = r.verdict(min_uplift);
            let mut row = vec![
                r.id.to_string(),
                r.problem.label(),
                r.calls.to_string(),
                f(r.share),
                f(r.baseline_us),
                f(r.vendor_us),
                f(r.best_us),
                f(r.speedup()),
                f(r.speedup().map(|s| (s - 1.0) * 100.0)),
                f(r.error),
                f(r.tolerance),
                r.verified.map(|b| b.to_string()).unwrap_or_default(),
                r.config.clone().unwrap_or_default(),
                v.status().to_string(),
                v.reason().to_string(),
                r.device.map(|d| d.to_string()).unwrap_or_default(),
                r.device_name.clone().unwrap_or_default(),
                r.arch.clone().unwrap_or_default(),
                r.evaluations.to_string(),
                r.measured.to_string(),
                r.reused.to_string(),
                f(r.search_us),
                f(r.tune_s),
                log_fields::to_cell(&r.log_fields),
            ];
            row.extend(problem_fields(&r.problem));
            row
        })
        .collect();
    write_table(path, &header, &rows)
}

/// Reads records written by [`write_records`] (verdict columns are recomputed, not read).
pub fn read_records(path: &Path) -> Result<Vec<GemmRecord>, WorkloadError> {
    read_table(path, |row| {
        let status = row.text("status")?;
        let reason = row.opt_text("reason")?;
        Ok(GemmRecord {
            id: row.parse("id")?,
            problem: row.problem()?,
            calls: row.parse("calls")?,
            share: row.opt("share")?,
            baseline_us: row.opt("baseline_us")?,
            vendor_us: row.opt("vendor_us")?,
            best_us: row.opt("best_us")?,
            search_us: row.opt("search_us")?,
            error: row.opt("error")?,
            tolerance: row.opt("tolerance")?,
            verified: row.opt("verified")?,
            config: row.opt_text("config")?,
            device: row.opt("device")?,
            device_name: row.opt_text("device_name")?,
            arch: row.opt_text("arch")?,
            evaluations: row.parse("evaluations")?,
            measured: row.parse("measured")?,
            reused: row.parse("reused")?,
            tune_s: row.opt("tune_s")?,
            skip: if status == "skipped" {
                reason.clone()
            } else {
                None
            },
            failure: if status == "failed" { reason } else { None },
            log_fields: row.log_fields()?,
        })
    })
}

const WORKLOAD_COLUMNS: [&str; 12] = [
    "id",
    "gemm",
    "calls",
    "baseline_us",
    "total_us",
    "share",
    "rank",
    "selected",
    "shard",
    "note",
    "source",
    "log_fields",
];

/// Writes every GEMM of the workload with its weight (`workload.csv`); `shards` is the shard
/// count, to name each GEMM's owner.
pub fn write_workload(
    path: &Path,
    gemms: &[WorkloadGemm],
    shards: usize,
) -> Result<(), WorkloadError> {
    let header: Vec<&str> = WORKLOAD_COLUMNS
        .iter()
        .chain(PROBLEM_COLUMNS.iter())
        .copied()
        .collect();
    let rows: Vec<Vec<String>> = gemms
        .iter()
        .map(|g| {
            let mut row = vec![
                g.id.to_string(),
                g.problem.label(),
                g.calls.to_string(),
                f(g.baseline_us),
                f(g.total_us()),
                f(g.share),
                g.rank.map(|r| r.to_string()).unwrap_or_default(),
                g.selected.to_string(),
                Shard::owner(shards, g.id).to_string(),
                g.skip.clone().unwrap_or_default(),
                g.source.clone(),
                log_fields::to_cell(&g.log_fields),
            ];
            row.extend(problem_fields(&g.problem));
            row
        })
        .collect();
    write_table(path, &header, &rows)
}

/// Reads `workload.csv` back, with each GEMM's owner shard.
pub fn read_workload(path: &Path) -> Result<Vec<(WorkloadGemm, usize)>, WorkloadError> {
    read_table(path, |row| {
        Ok((
            WorkloadGemm {
                id: row.parse("id")?,
                problem: row.problem()?,
                calls: row.parse("calls")?,
                source: row.text("source")?.to_string(),
                baseline_us: row.opt("baseline_us")?,
                skip: row.opt_text("note")?,
                share: row.opt("share")?,
                rank: row.opt("rank")?,
                selected: row.parse("selected")?,
                log_fields: row.log_fields()?,
            },
            row.parse("shard")?,
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Verification;

    fn tuned(vendor: f64, kernel: f64, passed: bool) -> TunedGemm {
        TunedGemm {
            id: 3,
            problem_key: String::new(),
            device: 1,
            device_name: "sim:H200".into(),
            arch: "sm_90".into(),
            baseline_us: Some(vendor),
            vendor_us: Some(vendor),
            kernel_us: Some(kernel),
            search_us: Some(kernel * 1.01),
            config: Some(
                "MT64x16x64_MI16x8x16_WG2x1_PGR3_PLR1_LPA8_LPB8_SW0_GSU4R_WGM8_GRVW8_SVW4_SU0"
                    .into(),
            ),
            verification: Some(Verification {
                max_abs_err: 0.01,
                max_rel_err: 0.01,
                rel_l2_err: if passed { 1e-3 } else { 0.5 },
                tolerance: 1e-2,
                passed,
                method: "model".into(),
            }),
            evaluations: 20,
            measured: 18,
            reused: 2,
            seconds: 1.25,
            error: None,
        }
    }

    fn workload(id: usize) -> WorkloadGemm {
        WorkloadGemm {
            id,
            problem: GemmProblem::new(16032, 109, 16384),
            calls: 7,
            source: "a, \"quoted\".log:3".into(),
            baseline_us: Some(100.0),
            skip: None,
            share: Some(0.25),
            rank: Some(2),
            selected: true,
            log_fields: [("bias_vector", "true"), ("activation_type", "gelu")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
        }
    }

    #[test]
    fn verdicts_follow_the_post_processing_rules() {
        let w = workload(3);
        assert_eq!(
            GemmRecord::new(&w, Some(&tuned(100.0, 80.0, true))).verdict(0.01),
            Verdict::Kept
        );
        let slow = GemmRecord::new(&w, Some(&tuned(100.0, 99.5, true))).verdict(0.01);
        assert_eq!(slow.status(), "dropped");
        assert!(slow.reason().contains("margin"), "{slow:?}");
        let wrong = GemmRecord::new(&w, Some(&tuned(100.0, 50.0, false))).verdict(0.01);
        assert!(wrong.reason().contains("tolerance"), "{wrong:?}");
        let mut skipped = w.clone();
        skipped.skip = Some("unsupported types: fp8".into());
        assert_eq!(
            GemmRecord::new(&skipped, None).verdict(0.01).status(),
            "skipped"
        );
        let mut failed = tuned(100.0, 80.0, true);
        failed.error = Some("worker died".into());
        assert_eq!(
            GemmRecord::new(&w, Some(&failed)).verdict(0.01).status(),
            "failed"
        );
    }

    #[test]
    fn records_and_workload_round_trip_through_csv() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = workload(3);
        w.problem.beta = 0.5;
        w.problem.ldc = 16040;
        w.problem.ldd = 16040;
        let mut skipped = workload(4);
        skipped.skip = Some("too large, \"really\"".into());
        skipped.baseline_us = None;
        let records = vec![
            GemmRecord::new(&w, Some(&tuned(100.0, 1.0 / 3.0, true))),
            GemmRecord::new(&skipped, None),
        ];
        let path = dir.path().join("raw.csv");
        write_records(&path, &records, 0.01).unwrap();
        assert_eq!(read_records(&path).unwrap(), records);

        let path = dir.path().join("workload.csv");
        write_workload(&path, &[w.clone(), skipped.clone()], 3).unwrap();
        let back = read_workload(&path).unwrap();
        assert_eq!(back, vec![(w, 0), (skipped, 1)]);
    }

    #[test]
    fn a_broken_csv_names_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raw.csv");
        let records = vec![GemmRecord::new(&workload(1), Some(&tuned(10.0, 5.0, true)))];
        write_records(&path, &records, 0.01).unwrap();
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("16032", "x16032");
        std::fs::write(&path, text).unwrap();
        let err = read_records(&path).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("raw.csv"), "{err}");
    }
}
