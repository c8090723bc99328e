//! Reports: what a run measured, as a human table, JSON, CSV, or an SVG chart.
//!
//! A [`BenchReport`] is assembled by the CLI from a bench session's rows; each writer here only
//! formats it. Columns are the same everywhere: kernel name, status, median time, TFLOP/s, GB/s
//! (compulsory bytes over time), percent of the hw-spec roofline, speed relative to the vendor
//! library, and the verification error.

pub mod advice;
mod csv;
mod hipblaslt_csv;
pub mod plot;
pub mod roofline;
pub mod search_eval;
mod table;
pub mod tensile;

pub use csv::{csv_escape, write_csv};
pub use hipblaslt_csv::render_hipblaslt_csv;
pub use table::{render_log_table, render_table};

use serde::Serialize;

use crate::bench::session::{BenchRow, PhaseTimes};
use crate::device::DeviceInfo;
use crate::problem::GemmProblem;

/// Everything one `bench` invocation produced.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub problem: GemmProblem,
    pub problem_label: String,
    pub device: DeviceInfo,
    pub hw_spec: String,
    /// Roofline bound of the problem on this GPU (datasheet), microseconds.
    pub roofline_us: f64,
    pub rows: Vec<BenchRow>,
    pub vendor: Option<BenchRow>,
    /// Name of the fastest verified kernel (after re-timing).
    pub winner: Option<String>,
    pub times: PhaseTimes,
    pub worker_restarts: u32,
}

impl BenchReport {
    pub fn winner_row(&self) -> Option<&BenchRow> {
        let name = self.winner.as_ref()?;
        self.rows.iter().find(|r| &r.name == name)
    }

    /// The JSON document `--json` prints: one object per config plus a summary.
    pub fn to_json(&self) -> serde_json::Value {
        let winner = self.winner_row();
        let ok = self.rows.iter().filter(|r| r.is_ok()).count();
        serde_json::json!({
            "problem": self.problem,
            "problem_label": self.problem_label,
            "device": self.device,
            "hw_spec": self.hw_spec,
            "configs": self.rows,
            "vendor": self.vendor,
            "summary": {
                "configs": self.rows.len(),
                "verified": ok,
                "failed": self.rows.len() - ok,
                "winner": self.winner,
                "winner_median_us": winner.and_then(|w| w.median_us()),
                "vendor_median_us": self.vendor.as_ref().and_then(|v| v.median_us()),
                "speedup_vs_vendor": winner.and_then(|w| w.speedup_vs_vendor),
                "roofline_us": self.roofline_us,
                "compile_s": self.times.compile_s,
                "bench_s": self.times.bench_s,
                "worker_restarts": self.worker_restarts,
            }
        })
    }
}
