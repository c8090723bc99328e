//! The search loop: strategies propose, the driver disposes.
//!
//! Per round: ask the strategy for a batch -> drop configs already in the history or already
//! stored ([`KnownResults`], reused without measuring) -> validate each with `Space::check`
//! (an invalid proposal is counted and reported, never evaluated) -> evaluate the rest
//! through the [`Evaluator`] -> append to the [`History`] -> check the budget
//! (`max_evals`, `time_budget`), the target and convergence (`max_rounds`, `patience` rounds
//! without a `min_improvement` gain). At the end the best few are re-timed in rounds and ranked
//! by the median of their round medians ([`super::retiming`]), so the winner is never one lucky
//! sample.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::evaluator::{EvalResult, Evaluator};
use super::history::{Evaluation, History};
pub use super::progress::StopReason;
use super::progress::{Event, Progress};
use super::retiming::retime_leaders;
pub use super::retiming::Retimed;
use super::strategy::{LlmRound, ProposeCtx, Rejected, Strategy};
use super::SearchError;
use crate::device::Outcome;
use crate::space::{KernelConfig, Space};

/// Results already measured elsewhere (the results database), looked up before evaluating.
pub trait KnownResults {
    /// The stored outcome of `config` for this problem and device, if any.
    fn lookup(&self, config: &KernelConfig) -> Option<Outcome>;
}

/// No stored results: every config is measured.
pub struct NoKnownResults;

impl KnownResults for NoKnownResults {
    fn lookup(&self, _config: &KernelConfig) -> Option<Outcome> {
        None
    }
}

impl<F: Fn(&KernelConfig) -> Option<Outcome>> KnownResults for F {
    fn lookup(&self, config: &KernelConfig) -> Option<Outcome> {
        self(config)
    }
}

/// Budget and convergence settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOptions {
    /// Configs measured at most (reused stored results do not count).
    pub max_evals: usize,
    /// Wall-clock limit for the search rounds (the final re-timing still runs).
    pub time_budget: Option<Duration>,
    /// Configs asked for per round (LLM strategies use their own round sizes).
    pub batch_size: usize,
    /// Rounds at most; `None` = until the budget or the strategy runs out.
    pub max_rounds: Option<usize>,
    /// Stop after this many consecutive rounds without a `min_improvement` gain.
    pub patience: Option<usize>,
    /// Relative gain that counts as an improvement (0.01 = 1%).
    pub min_improvement: f64,
    /// Stop once the best median is at or below this.
    pub target_us: Option<f64>,
    /// Stop once the best reaches this many TFLOP/s.
    pub target_tflops: Option<f64>,
    /// Configs re-timed at the end (K).
    pub retime_top: usize,
    /// Rounds of that re-timing; each leader's time is the median of its round medians.
    #[serde(default = "default_retime_rounds")]
    pub retime_rounds: usize,
    /// Seed of the strategy RNG.
    pub seed: u64,
    /// Stop after this many consecutive rounds that brought nothing new to evaluate.
    pub max_empty_rounds: usize,
}

/// Three rounds: the median of three survives one outlier either way.
fn default_retime_rounds() -> usize {
    3
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            max_evals: 100,
            time_budget: None,
            batch_size: 16,
            max_rounds: Some(5),
            patience: Some(2),
            min_improvement: 0.01,
            target_us: None,
            target_tflops: None,
            retime_top: 3,
            retime_rounds: default_retime_rounds(),
            seed: 0,
            max_empty_rounds: 3,
        }
    }
}

impl SearchOptions {
    /// Only the evaluation budget stops the search (offline strategy comparison).
    pub fn budget_only(max_evals: usize) -> Self {
        SearchOptions {
            max_evals,
            max_rounds: None,
            patience: None,
            ..Default::default()
        }
    }
}

/// Wall-clock time by activity.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TimeSplit {
    pub llm: Duration,
    /// Proposing, other than waiting on the LLM.
    pub strategy: Duration,
    pub compile: Duration,
    pub bench: Duration,
    pub total: Duration,
}

/// One point of the convergence trace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TracePoint {
    /// Evaluations measured so far (1-based).
    pub evaluations: usize,
    pub best_us: f64,
}

/// The winner of a search.
#[derive(Debug, Clone, PartialEq)]
pub struct Winner {
    pub config: KernelConfig,
    /// The re-timed median (the search median when re-timing is off).
    pub median_us: f64,
    pub search_median_us: f64,
}

/// Everything a search produced.
#[derive(Debug, Clone)]
pub struct SearchResult {
    pub strategy: String,
    pub winner: Option<Winner>,
    /// The re-timed top K, fastest re-timed first.
    pub retimed: Vec<Retimed>,
    pub evaluations: usize,
    pub reused: usize,
    pub retime_evaluations: usize,
    pub rounds: usize,
    pub time: TimeSplit,
    /// Suggestions that were not valid configs (rejected by the strategy or by the driver).
    pub invalid_suggestions: usize,
    /// Examples of invalid suggestions, for reports.
    pub invalid_examples: Vec<Rejected>,
    pub duplicates: usize,
    pub trace: Vec<TracePoint>,
    pub stop: StopReason,
    pub warnings: Vec<String>,
    pub history: History,
    /// What an LLM contributed, round by round (LLM-driven strategies only).
    pub llm_rounds: Vec<LlmRound>,
}

const INVALID_EXAMPLES: usize = 20;

/// Runs one search to completion.
pub fn run_search(
    space: &Space,
    strategy: &mut dyn Strategy,
    evaluator: &mut dyn Evaluator,
    known: &dyn KnownResults,
    opts: &SearchOptions,
    progress: &mut dyn Progress,
) -> Result<SearchResult, SearchError> {
    let start = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let mut history = History::new();
    let mut time = TimeSplit::default();
    let mut trace = Vec::new();
    let mut warnings = Vec::new();
    let mut invalid_examples = Vec::new();
    let mut llm_rounds = Vec::new();
    let (mut evaluations, mut reused, mut invalid, mut duplicates) =
        (0usize, 0usize, 0usize, 0usize);
    let (mut round, mut stale, mut empty_rounds) = (0usize, 0usize, 0usize);
    let target_us = target_time(space, opts);

    let stop = loop {
        if evaluations >= opts.max_evals {
            break StopReason::Budget;
        }
        if opts.time_budget.is_some_and(|b| start.elapsed() >= b) {
            break StopReason::TimeBudget;
        }
        if opts.max_rounds.is_some_and(|m| round >= m) {
            break StopReason::MaxRounds;
        }
        let remaining = opts.max_evals - evaluations;
        let t = Instant::now();
        let proposal = {
            let mut ctx = ProposeCtx {
                space,
                history: &history,
                batch: opts.batch_size.clamp(1, remaining),
                remaining,
                round,
                rng: &mut rng,
            };
            strategy
                .propose(&mut ctx)
                .map_err(|source| SearchError::Strategy {
                    strategy: strategy.name().to_string(),
                    source,
                })?
        };
        time.llm += proposal.llm_time;
        if let Some(l) = &proposal.llm {
            llm_rounds.push(LlmRound { round, ..l.clone() });
        }
        time.strategy += t.elapsed().saturating_sub(proposal.llm_time);
        for w in &proposal.warnings {
            progress.event(&Event::Warning(w.clone()));
            warnings.push(w.clone());
        }
        for n in &proposal.notes {
            progress.event(&Event::Note(n.clone()));
        }
        let round_invalid_before = invalid;
        for r in proposal.rejected {
            note_invalid(&mut invalid, &mut invalid_examples, r);
        }

        // Validate and deduplicate.
        let best_before = history.best().and_then(|e| e.median_us);
        let mut batch: Vec<KernelConfig> = Vec::new();
        let mut in_batch = HashSet::new();
        let mut round_dups = 0;
        for c in proposal.configs.into_iter().map(KernelConfig::canonical) {
            if history.contains(&c) || !in_batch.insert(c) {
                round_dups += 1;
                continue;
            }
            if let Err(v) = space.check(&c) {
                note_invalid(
                    &mut invalid,
                    &mut invalid_examples,
                    Rejected {
                        suggestion: c.name(),
                        reason: v.to_string(),
                    },
                );
                continue;
            }
            if let Some(outcome) = known.lookup(&c) {
                let mut e = Evaluation::new(0, round, c, outcome);
                e.reused = true;
                history.push_evaluation(e);
                reused += 1;
                progress.event(&Event::Reused { config: c });
                continue;
            }
            if batch.len() < remaining {
                batch.push(c);
            }
        }
        duplicates += round_dups;
        progress.event(&Event::RoundStarted {
            round,
            to_evaluate: batch.len(),
            invalid: invalid - round_invalid_before,
            duplicates: round_dups,
        });

        if !batch.is_empty() {
            empty_rounds = 0;
            let t = Instant::now();
            let results = evaluator.evaluate(&batch);
            if results.len() != batch.len() {
                return Err(SearchError::EvaluatorMismatch {
                    sent: batch.len(),
                    got: results.len(),
                });
            }
            split_time(&mut time, t.elapsed(), &results);
            for r in results {
                let mut e = Evaluation::new(0, round, r.config, r.outcome);
                e.compile_ms = r.compile_ms;
                e.bench_ms = r.bench_ms;
                let prev_best = history.best().and_then(|b| b.median_us);
                let index = history.push_evaluation(e);
                evaluations += 1;
                let e = &history.entries()[index];
                progress.event(&Event::Evaluated {
                    index,
                    config: e.config,
                    outcome: e.outcome.clone(),
                    median_us: e.median_us,
                });
                if let Some(m) = e.median_us {
                    if prev_best.is_none_or(|b| m < b) {
                        progress.event(&Event::NewBest {
                            index,
                            config: e.config,
                            median_us: m,
                        });
                    }
                }
                if let Some(b) = history.best().and_then(|b| b.median_us) {
                    trace.push(TracePoint {
                        evaluations,
                        best_us: b,
                    });
                }
            }
        } else {
            empty_rounds += 1;
        }

        let best_after = history.best().and_then(|e| e.median_us);
        progress.event(&Event::RoundFinished {
            round,
            best_us: best_after,
        });
        round += 1;
        let improved = match (best_before, best_after) {
            (None, Some(_)) => true,
            (Some(b), Some(a)) => a < b * (1.0 - opts.min_improvement),
            _ => false,
        };
        stale = if improved { 0 } else { stale + 1 };
        if let (Some(t), Some(b)) = (target_us, best_after) {
            if b <= t {
                break StopReason::TargetReached;
            }
        }
        if batch.is_empty() && (proposal.exhausted || empty_rounds >= opts.max_empty_rounds) {
            break StopReason::Exhausted;
        }
        if opts.patience.is_some_and(|p| stale >= p) {
            break StopReason::Converged;
        }
    };

    // Final re-timing of the top K, in rounds.
    let top: Vec<(KernelConfig, f64)> = history
        .ranked()
        .iter()
        .take(opts.retime_top)
        .map(|e| (e.config, e.median_us.unwrap_or(f64::INFINITY)))
        .collect();
    let mut retimed = Vec::new();
    let mut retime_evaluations = 0;
    if !top.is_empty() && opts.retime_top > 0 {
        progress.event(&Event::Retiming {
            configs: top.len(),
            rounds: opts.retime_rounds.max(1),
        });
        let t = Instant::now();
        let run = retime_leaders(evaluator, &top, opts.retime_rounds)?;
        split_time(&mut time, t.elapsed(), &run.results);
        retime_evaluations = run.results.len();
        retimed = run.retimed;
    }
    let winner = match retimed.first() {
        Some(r) if r.retimed_median_us.is_some() => Some(Winner {
            config: r.config,
            median_us: r.retimed_median_us.unwrap_or(r.search_median_us),
            search_median_us: r.search_median_us,
        }),
        Some(_) => {
            let w = "every top config failed when re-timed; the winner is the search's best, unconfirmed".to_string();
            progress.event(&Event::Warning(w.clone()));
            warnings.push(w);
            best_unconfirmed(&history)
        }
        None => best_unconfirmed(&history),
    };
    time.total = start.elapsed();
    progress.event(&Event::Finished { stop });
    Ok(SearchResult {
        strategy: strategy.name().to_string(),
        winner,
        retimed,
        evaluations,
        reused,
        retime_evaluations,
        rounds: round,
        time,
        invalid_suggestions: invalid,
        invalid_examples,
        duplicates,
        trace,
        stop,
        warnings,
        history,
        llm_rounds,
    })
}

fn note_invalid(invalid: &mut usize, examples: &mut Vec<Rejected>, r: Rejected) {
    *invalid += 1;
    if examples.len() < INVALID_EXAMPLES {
        examples.push(r);
    }
}

fn best_unconfirmed(history: &History) -> Option<Winner> {
    history.best().map(|e| Winner {
        config: e.config,
        median_us: e.median_us.unwrap_or(f64::INFINITY),
        search_median_us: e.median_us.unwrap_or(f64::INFINITY),
    })
}

/// The stricter of the two targets, as a time.
fn target_time(space: &Space, opts: &SearchOptions) -> Option<f64> {
    let from_tflops = opts
        .target_tflops
        .filter(|t| *t > 0.0)
        .map(|t| space.problem.flops() / (t * 1e12) * 1e6);
    match (opts.target_us, from_tflops) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Splits a batch's wall time between compiling and benchmarking in the proportion the
/// evaluator reported (its per-config times may overlap when compiles run in parallel).
fn split_time(time: &mut TimeSplit, wall: Duration, results: &[EvalResult]) {
    let c: f64 = results.iter().map(|r| r.compile_ms.max(0.0)).sum();
    let b: f64 = results.iter().map(|r| r.bench_ms.max(0.0)).sum();
    let frac = if c + b > 0.0 { c / (c + b) } else { 0.0 };
    let compile = wall.mul_f64(frac);
    time.compile += compile;
    time.bench += wall.saturating_sub(compile);
}
