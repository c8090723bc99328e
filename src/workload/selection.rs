//! Which GEMMs of a workload are worth tuning.
//!
//! Every distinct GEMM of the log becomes a [`WorkloadGemm`]. The baseline pass fills its
//! vendor-library time (or the reason it cannot be tuned); [`select`] then weights each GEMM
//! by `calls x baseline time` (the share of the workload's GEMM time it accounts for), ranks
//! them and keeps those whose share is at least `--thr` and whose rank is within `--top K`
//! (both filters apply when both are given). GEMMs without a baseline cannot be weighted:
//! they are never selected and are reported with their reason.

use serde::{Deserialize, Serialize};

use super::log_fields::LogFields;
use crate::problem::log::LogEntry;
use crate::problem::GemmProblem;

/// One distinct GEMM of the workload and what the baseline pass found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadGemm {
    /// First-seen position in the merged log: stable for the same log files.
    pub id: usize,
    pub problem: GemmProblem,
    pub calls: u64,
    /// `file:line` of the first occurrence.
    pub source: String,
    /// Median time of one call in the vendor library, microseconds.
    pub baseline_us: Option<f64>,
    /// Why this GEMM cannot be tuned (too large for the device, unsupported types, the
    /// vendor library failed on it).
    pub skip: Option<String>,
    /// Fraction of the workload's GEMM time (calls x baseline over the sum of all).
    pub share: Option<f64>,
    /// 1-based rank by time, largest first.
    pub rank: Option<usize>,
    pub selected: bool,
    /// What the log line asked for beyond the plain GEMM (fused epilogue, scaling) and
    /// fields the parser does not know: not timed, said so in the report.
    #[serde(default)]
    pub log_fields: LogFields,
}

impl WorkloadGemm {
    pub fn from_entry(id: usize, e: &LogEntry) -> Self {
        WorkloadGemm {
            id,
            problem: e.problem.clone(),
            calls: e.call_count,
            source: format!("{}:{}", e.source, e.first_line),
            baseline_us: None,
            skip: None,
            share: None,
            rank: None,
            selected: false,
            log_fields: e.extra.clone(),
        }
    }

    /// Time of all calls in the vendor library, microseconds.
    pub fn total_us(&self) -> Option<f64> {
        self.baseline_us.map(|b| b * self.calls as f64)
    }
}

/// The selection filters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Criteria {
    /// Smallest share of the workload's GEMM time a GEMM must have (0 = any).
    pub threshold: f64,
    /// At most this many GEMMs, largest first.
    pub top: Option<usize>,
}

impl Default for Criteria {
    fn default() -> Self {
        Criteria {
            threshold: 0.0,
            top: None,
        }
    }
}

/// The workload's GEMM time: the sum of `calls x baseline` over GEMMs with a baseline.
pub fn workload_us(gemms: &[WorkloadGemm]) -> f64 {
    gemms.iter().filter_map(WorkloadGemm::total_us).sum()
}

/// Fills `share`, `rank` and `selected` of every GEMM.
pub fn select(gemms: &mut [WorkloadGemm], criteria: &Criteria) {
    let total = workload_us(gemms);
    let mut order: Vec<usize> = (0..gemms.len())
        .filter(|&i| gemms[i].baseline_us.is_some())
        .collect();
    // Largest first; ties broken by id so the ranking never depends on sort stability.
    order.sort_by(|&a, &b| {
        let (ta, tb) = (gemms[a].total_us(), gemms[b].total_us());
        tb.unwrap_or(0.0)
            .total_cmp(&ta.unwrap_or(0.0))
            .then(gemms[a].id.cmp(&gemms[b].id))
    });
    for g in gemms.iter_mut() {
        g.share = None;
        g.rank = None;
        g.selected = false;
    }
    for (r, &i) in order.iter().enumerate() {
        let g = &mut gemms[i];
        let share = if total > 0.0 {
            g.total_us().unwrap_or(0.0) / total
        } else {
            0.0
        };
        g.share = Some(share);
        g.rank = Some(r + 1);
        g.selected = share >= criteria.threshold && criteria.top.is_none_or(|k| r < k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gemm(id: usize, calls: u64, baseline: Option<f64>) -> WorkloadGemm {
        let mut g = WorkloadGemm::from_entry(
            id,
            &LogEntry {
                problem: GemmProblem::new(64 * (id as i64 + 1), 64, 64),
                call_count: calls,
                first_line: id + 1,
                source: "t.log".into(),
                extra: Default::default(),
            },
        );
        g.baseline_us = baseline;
        g
    }

    #[test]
    fn weights_by_calls_times_baseline() {
        // Totals: 100, 600, 300 (and one without a baseline).
        let mut g = vec![
            gemm(0, 10, Some(10.0)),
            gemm(1, 2, Some(300.0)),
            gemm(2, 30, Some(10.0)),
            gemm(3, 5, None),
        ];
        select(&mut g, &Criteria::default());
        assert_eq!(g[1].rank, Some(1));
        assert_eq!(g[2].rank, Some(2));
        assert_eq!(g[0].rank, Some(3));
        assert!((g[1].share.unwrap() - 0.6).abs() < 1e-12);
        assert!(g[..3].iter().all(|x| x.selected));
        assert!(!g[3].selected && g[3].share.is_none());
    }

    #[test]
    fn threshold_and_top_both_apply() {
        let mut g = vec![
            gemm(0, 10, Some(10.0)),
            gemm(1, 2, Some(300.0)),
            gemm(2, 30, Some(10.0)),
        ];
        select(
            &mut g,
            &Criteria {
                threshold: 0.2,
                top: None,
            },
        );
        assert_eq!(
            g.iter().map(|x| x.selected).collect::<Vec<_>>(),
            [false, true, true]
        );
        select(
            &mut g,
            &Criteria {
                threshold: 0.0,
                top: Some(1),
            },
        );
        assert_eq!(
            g.iter().map(|x| x.selected).collect::<Vec<_>>(),
            [false, true, false]
        );
        select(
            &mut g,
            &Criteria {
                threshold: 0.7,
                top: Some(2),
            },
        );
        assert!(g.iter().all(|x| !x.selected));
    }

    #[test]
    fn equal_times_rank_by_id() {
        let mut g = vec![gemm(5, 1, Some(10.0)), gemm(2, 1, Some(10.0))];
        select(&mut g, &Criteria::default());
        assert_eq!(g[1].rank, Some(1));
        assert_eq!(g[0].rank, Some(2));
    }
}
