//! Patterns computed from the measured data, for the LLM prompt and for reports: the median
//! time per value of each parameter, the values all top configs share, and failure counts.
//! They are facts from this history, never guesses, so the model reasons from evidence.

use std::collections::BTreeMap;

use super::history::History;
use crate::space::ParamId;

/// How the configs with one value of one parameter performed.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueStat {
    pub value: i64,
    pub count: usize,
    pub median_us: f64,
    pub best_us: f64,
}

/// One parameter's values, fastest median first.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamStat {
    pub param: ParamId,
    pub values: Vec<ValueStat>,
}

impl ParamStat {
    /// Median of the slowest value over the fastest: how much this parameter matters.
    pub fn spread(&self) -> f64 {
        match (self.values.first(), self.values.last()) {
            (Some(f), Some(l)) if f.median_us > 0.0 => l.median_us / f.median_us,
            _ => 1.0,
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Per-parameter statistics over timed configs; parameters seen with one value only are
/// left out (they say nothing). Sorted by spread, most influential first.
pub fn per_param(history: &History) -> Vec<ParamStat> {
    let timed: Vec<_> = history.iter().filter(|e| e.is_timed()).collect();
    let mut out = Vec::new();
    for p in ParamId::ALL {
        let mut groups: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
        for e in &timed {
            groups
                .entry(p.get(&e.config))
                .or_default()
                .push(e.median_us.unwrap_or(f64::INFINITY));
        }
        if groups.len() < 2 {
            continue;
        }
        let mut values: Vec<ValueStat> = groups
            .into_iter()
            .map(|(value, mut times)| ValueStat {
                value,
                count: times.len(),
                best_us: times.iter().copied().fold(f64::INFINITY, f64::min),
                median_us: median(&mut times),
            })
            .collect();
        values.sort_by(|a, b| a.median_us.total_cmp(&b.median_us));
        out.push(ParamStat { param: p, values });
    }
    out.sort_by(|a, b| b.spread().total_cmp(&a.spread()));
    out
}

/// Parameter values shared by every one of the `k` fastest configs (needs at least 2).
pub fn shared_by_top(history: &History, k: usize) -> Vec<(ParamId, i64)> {
    let top = history.ranked();
    let top = &top[..top.len().min(k)];
    if top.len() < 2 {
        return Vec::new();
    }
    ParamId::ALL
        .into_iter()
        .filter_map(|p| {
            let v = p.get(&top[0].config);
            top.iter().all(|e| p.get(&e.config) == v).then_some((p, v))
        })
        .collect()
}

/// Failed evaluations per outcome status.
pub fn failure_counts(history: &History) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for e in history.failures() {
        *m.entry(e.outcome.status()).or_insert(0) += 1;
    }
    m
}

/// The observations as prompt lines.
pub fn summarize(history: &History, max_params: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let shared = shared_by_top(history, 5);
    if !shared.is_empty() {
        lines.push(format!(
            "Shared by all of the top {} configs: {}",
            history.ranked().len().min(5),
            shared
                .iter()
                .map(|(p, v)| format!("{}={}", p.name(), p.format_value(*v)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for s in per_param(history).into_iter().take(max_params) {
        let vals = s
            .values
            .iter()
            .map(|v| {
                format!(
                    "{}: median {:.1} us, best {:.1} us (n={})",
                    s.param.format_value(v.value),
                    v.median_us,
                    v.best_us,
                    v.count
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        lines.push(format!(
            "{} (slowest/fastest median x{:.2}): {vals}",
            s.param.name(),
            s.spread()
        ));
    }
    let fails = failure_counts(history);
    if !fails.is_empty() {
        lines.push(format!(
            "Failures: {}",
            fails
                .iter()
                .map(|(k, v)| format!("{v} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    lines
}
