//! The history of one search: every evaluated config with its outcome, in evaluation order.
//!
//! The driver appends to it after each batch; strategies read it (ranked results, failures,
//! whether a config was already tried); prompts render it; the result keeps it for reports.
//! Configs are stored in canonical form so two spellings of one kernel are one entry.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::device::Outcome;
use crate::measure::stats::Stats;
use crate::space::KernelConfig;

/// One evaluated config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// Position in the history (0-based, evaluation order).
    pub index: usize,
    /// Search round that proposed it (0-based).
    pub round: usize,
    pub config: KernelConfig,
    pub outcome: Outcome,
    /// Median of the timing samples; `None` unless the outcome is `Timed`.
    pub median_us: Option<f64>,
    pub compile_ms: f64,
    pub bench_ms: f64,
    /// Taken from results already stored, not measured in this search.
    pub reused: bool,
}

impl Evaluation {
    pub fn new(index: usize, round: usize, config: KernelConfig, outcome: Outcome) -> Self {
        let median_us = outcome.samples().and_then(Stats::of).map(|s| s.median_us);
        Evaluation {
            index,
            round,
            config: config.canonical(),
            outcome,
            median_us,
            compile_ms: 0.0,
            bench_ms: 0.0,
            reused: false,
        }
    }

    pub fn is_timed(&self) -> bool {
        self.median_us.is_some()
    }
}

/// All evaluations of a search, with an index by config.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct History {
    entries: Vec<Evaluation>,
    #[serde(skip)]
    by_config: HashMap<KernelConfig, usize>,
}

impl History {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an outcome and returns its evaluation index. A config already present is
    /// replaced in the index (its latest result counts) but both entries stay in order.
    pub fn push(&mut self, round: usize, config: KernelConfig, outcome: Outcome) -> usize {
        let index = self.entries.len();
        let e = Evaluation::new(index, round, config, outcome);
        self.by_config.insert(e.config, index);
        self.entries.push(e);
        index
    }

    /// Appends a fully built evaluation (its index is reassigned).
    pub fn push_evaluation(&mut self, mut e: Evaluation) -> usize {
        let index = self.entries.len();
        e.index = index;
        e.config = e.config.canonical();
        self.by_config.insert(e.config, index);
        self.entries.push(e);
        index
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> &[Evaluation] {
        &self.entries
    }

    pub fn iter(&self) -> impl Iterator<Item = &Evaluation> {
        self.entries.iter()
    }

    pub fn contains(&self, c: &KernelConfig) -> bool {
        self.by_config.contains_key(&c.canonical())
    }

    pub fn get(&self, c: &KernelConfig) -> Option<&Evaluation> {
        self.by_config
            .get(&c.canonical())
            .map(|&i| &self.entries[i])
    }

    /// The fastest timed evaluation (ties: the earliest).
    pub fn best(&self) -> Option<&Evaluation> {
        best_of(self.entries.iter())
    }

    /// The fastest timed evaluation among those with index >= `from`.
    pub fn best_since(&self, from: usize) -> Option<&Evaluation> {
        best_of(self.entries.iter().skip(from))
    }

    /// Timed evaluations, fastest first (ties broken by evaluation order, so it is stable).
    pub fn ranked(&self) -> Vec<&Evaluation> {
        let mut v: Vec<&Evaluation> = self.entries.iter().filter(|e| e.is_timed()).collect();
        v.sort_by(|a, b| {
            a.median_us
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.median_us.unwrap_or(f64::INFINITY))
                .then(a.index.cmp(&b.index))
        });
        v
    }

    /// Evaluations that did not produce a time, in order.
    pub fn failures(&self) -> Vec<&Evaluation> {
        self.entries.iter().filter(|e| !e.is_timed()).collect()
    }
}

fn best_of<'a>(it: impl Iterator<Item = &'a Evaluation>) -> Option<&'a Evaluation> {
    it.filter(|e| e.is_timed())
        .fold(None, |best: Option<&Evaluation>, e| match best {
            Some(b) if b.median_us <= e.median_us => Some(b),
            _ => Some(e),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(us: &[f64]) -> Outcome {
        Outcome::modelled(us.to_vec())
    }

    fn cfg(mt0: u32) -> KernelConfig {
        KernelConfig::parse(&format!(
            "MT{mt0}x64x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0"
        ))
        .unwrap()
    }

    #[test]
    fn ranks_by_median_and_tracks_failures() {
        let mut h = History::new();
        h.push(0, cfg(64), timed(&[10.0, 12.0, 11.0]));
        h.push(0, cfg(128), timed(&[9.0, 30.0, 8.0]));
        h.push(0, cfg(32), Outcome::Timeout { after_s: 1.0 });
        assert_eq!(h.best().unwrap().config, cfg(128));
        let ranked: Vec<_> = h.ranked().iter().map(|e| e.median_us.unwrap()).collect();
        assert_eq!(ranked, vec![9.0, 11.0]);
        assert_eq!(h.failures().len(), 1);
        assert!(h.contains(&cfg(32)));
        assert!(!h.contains(&cfg(16)));
        assert_eq!(h.best_since(2).map(|e| e.index), None);
    }
}
