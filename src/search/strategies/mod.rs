//! The strategies and their registry (`--strategy NAME`).
//!
//! Adding a strategy is one file here plus one line in [`REGISTRY`]. LLM-driven strategies
//! are wrapped in the explicit [`fallback::Fallback`] so an unreachable or confused model
//! hands its round to `random` or `pattern` (or ends the search with `--fallback error`);
//! `llm` and `llm-iterative` sit inside [`filled::Filled`] as well, which starts them from
//! the pattern search's first proposals and fills what the model leaves out of a batch, so
//! the model can only add to a search (with `--fallback error` the model runs alone).

pub mod autonomous;
pub mod exhaustive;
pub mod explicit;
pub mod fallback;
pub mod filled;
pub mod genetic;
pub mod llm_batch;
pub mod llm_iterative;
pub mod model;
pub mod pattern;
pub mod random;

use std::path::PathBuf;
use std::sync::Arc;

use rand::seq::SliceRandom;

use super::corpus::Corpus;
use super::llm_port::SharedLlm;
use super::strategy::{ProposeCtx, Strategy, StrategyError};
use crate::space::{KernelConfig, ParamId};

pub use autonomous::{Autonomous, AutonomousOptions};
pub use exhaustive::Exhaustive;
pub use explicit::{Explicit, TuningStep};
pub use fallback::{Fallback, FallbackMode};
pub use filled::{Filled, Lead};
pub use genetic::Genetic;
pub use llm_batch::LlmBatch;
pub use llm_iterative::LlmIterative;
pub use model::{ModelOptions, ModelSearch};
pub use pattern::PatternSearch;
pub use random::RandomSearch;

/// Options of every strategy, as the command line sets them.
#[derive(Debug, Clone)]
pub struct StrategyOptions {
    pub fallback: FallbackMode,
    pub initial_batch: usize,
    pub refinement_batch: usize,
    pub temperature: f32,
    /// Explicit strategy: steps file (default chain when `None`).
    pub steps_file: Option<PathBuf>,
    /// Explicit strategy: ask the LLM whether each step is worth running.
    pub evaluate_steps: bool,
    pub autonomous: AutonomousOptions,
    pub population: usize,
    pub mutation_rate: f64,
    pub exhaustive_limit: u128,
    /// Measurements of other shapes (the results database, or other recorded sweeps): the
    /// model-based search learns from them, and the default strategy uses it when there are
    /// any.
    pub corpus: Option<Arc<Corpus>>,
    /// The device the search runs on, as the corpus names devices.
    pub device: String,
}

impl StrategyOptions {
    /// Whether there are measurements to learn from.
    pub fn has_corpus(&self) -> bool {
        self.corpus.as_ref().is_some_and(|c| !c.is_empty())
    }
}

impl Default for StrategyOptions {
    fn default() -> Self {
        StrategyOptions {
            fallback: FallbackMode::Pattern,
            initial_batch: 25,
            refinement_batch: 15,
            temperature: 0.7,
            steps_file: None,
            evaluate_steps: true,
            autonomous: AutonomousOptions::default(),
            population: 16,
            mutation_rate: 0.15,
            exhaustive_limit: 2_000_000,
            corpus: None,
            device: String::new(),
        }
    }
}

type Builder = fn(&StrategyOptions, Option<SharedLlm>) -> Result<Box<dyn Strategy>, StrategyError>;

/// Name, one-line description, constructor.
pub const REGISTRY: &[(&str, &str, Builder)] = &[
    ("random", "uniformly random valid configs", |_, _| {
        Ok(Box::new(RandomSearch))
    }),
    (
        "pattern",
        "neighbourhood search from the best, restarts when stuck",
        |_, _| Ok(Box::new(PatternSearch::default())),
    ),
    (
        "model",
        "a forest learned from every measurement of other shapes picks likely winners",
        |o, _| Ok(Box::new(ModelSearch::new(o.corpus.clone(), &o.device))),
    ),
    (
        "default",
        "model with measurements of other shapes, pattern without; an LLM's picks filled by it",
        build_default,
    ),
    (
        "genetic",
        "genetic algorithm: tournament, per-parameter crossover, mutation, elitism",
        build_genetic,
    ),
    (
        "exhaustive",
        "every valid config of a bounded space",
        |o, _| Ok(Box::new(Exhaustive::new(o.exhaustive_limit))),
    ),
    (
        "explicit",
        "ordered parameter-group sweeps from the best, with dependencies",
        build_explicit,
    ),
    (
        "autonomous",
        "LLM plans parameter changes, breaks them down, executes, replans",
        build_autonomous,
    ),
    (
        "llm",
        "LLM proposes batches from the history (default with an LLM)",
        build_llm,
    ),
    (
        "llm-iterative",
        "LLM edits the best config, one per round",
        build_llm_iterative,
    ),
];

fn build_genetic(
    o: &StrategyOptions,
    _: Option<SharedLlm>,
) -> Result<Box<dyn Strategy>, StrategyError> {
    Ok(Box::new(Genetic {
        population: o.population.max(2),
        mutation_rate: o.mutation_rate.clamp(0.0, 1.0),
        ..Genetic::default()
    }))
}

fn build_explicit(
    o: &StrategyOptions,
    llm: Option<SharedLlm>,
) -> Result<Box<dyn Strategy>, StrategyError> {
    let steps = match &o.steps_file {
        Some(p) => explicit::load_steps(p)?,
        None => explicit::default_steps(),
    };
    Ok(Box::new(Explicit::new(
        steps,
        llm.filter(|_| o.evaluate_steps),
    )))
}

fn build_autonomous(
    o: &StrategyOptions,
    llm: Option<SharedLlm>,
) -> Result<Box<dyn Strategy>, StrategyError> {
    let llm = llm.ok_or(StrategyError::NeedsLlm("autonomous"))?;
    Ok(Box::new(Fallback::new(
        Box::new(Autonomous::new(llm, o.autonomous.clone())),
        o.fallback,
    )))
}

/// What fills in for the model, and how many of its first proposals lead the first batch:
/// the model-based search's best guesses (half the batch) when there are measurements to
/// learn from, else the pattern search's default config and split start, or (`--fallback
/// random`) random configs with no lead.
fn filler(o: &StrategyOptions) -> (Box<dyn Strategy>, Lead) {
    match filler_name(o) {
        "random" => (Box::new(RandomSearch), Lead::First(0)),
        "model" => (
            Box::new(ModelSearch::new(o.corpus.clone(), &o.device)),
            Lead::Half,
        ),
        _ => (Box::new(PatternSearch::default()), Lead::Starts),
    }
}

/// The strategy that proposes for an LLM-driven one when the model contributes nothing.
pub fn filler_name(o: &StrategyOptions) -> &'static str {
    match o.fallback {
        FallbackMode::Random => "random",
        _ if o.has_corpus() => "model",
        _ => "pattern",
    }
}

/// `inner` inside [`Filled`] (unless the model runs alone) inside [`Fallback`].
fn guarded(
    o: &StrategyOptions,
    inner: Box<dyn Strategy>,
    batch: Option<usize>,
) -> Box<dyn Strategy> {
    if o.fallback == FallbackMode::Error {
        return Box::new(Fallback::new(inner, o.fallback));
    }
    let (fill, lead) = filler(o);
    let mut filled = Filled::new(inner, fill, lead);
    filled.batch = batch;
    Box::new(Fallback::new(Box::new(filled), o.fallback))
}

fn build_llm(
    o: &StrategyOptions,
    llm: Option<SharedLlm>,
) -> Result<Box<dyn Strategy>, StrategyError> {
    let llm = llm.ok_or(StrategyError::NeedsLlm("llm"))?;
    let mut s = LlmBatch::new(llm);
    s.initial_batch = o.initial_batch.max(1);
    s.refinement_batch = o.refinement_batch.max(1);
    s.temperature = o.temperature;
    s.require_valid = o.fallback == FallbackMode::Error;
    Ok(guarded(o, Box::new(s), None))
}

fn build_llm_iterative(
    o: &StrategyOptions,
    llm: Option<SharedLlm>,
) -> Result<Box<dyn Strategy>, StrategyError> {
    let llm = llm.ok_or(StrategyError::NeedsLlm("llm-iterative"))?;
    let mut s = LlmIterative::new(llm);
    s.temperature = o.temperature;
    s.require_valid = o.fallback == FallbackMode::Error;
    Ok(guarded(o, Box::new(s), Some(1)))
}

/// Every registered name.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, _, _)| *n).collect()
}

/// The strategy used when none is named: `llm` with an endpoint (filled by the model-based
/// search when there are measurements to learn from), else `model` with measurements and
/// `pattern` without.
pub fn default_name(llm_configured: bool, has_corpus: bool) -> &'static str {
    match (llm_configured, has_corpus) {
        (true, _) => "llm",
        (false, true) => "model",
        (false, false) => "pattern",
    }
}

fn build_default(
    o: &StrategyOptions,
    llm: Option<SharedLlm>,
) -> Result<Box<dyn Strategy>, StrategyError> {
    build(default_name(llm.is_some(), o.has_corpus()), o, llm)
}

/// Builds a strategy by registry name.
pub fn build(
    name: &str,
    options: &StrategyOptions,
    llm: Option<SharedLlm>,
) -> Result<Box<dyn Strategy>, StrategyError> {
    let want = name.trim().to_ascii_lowercase();
    let (_, _, make) = REGISTRY
        .iter()
        .find(|(n, _, _)| *n == want)
        .ok_or_else(|| StrategyError::Unknown {
            name: name.to_string(),
            known: names().join(", "),
        })?;
    make(options, llm)
}

/// Untried valid configs obtained by setting the given parameters of `base` to every
/// combination of the given values; a random subset of `cap` when there are more.
pub(crate) fn sweep(
    ctx: &mut ProposeCtx<'_>,
    base: &KernelConfig,
    changes: &[(ParamId, Vec<i64>)],
    cap: usize,
) -> Vec<KernelConfig> {
    let mut out = vec![*base];
    for (id, vals) in changes {
        let mut next = Vec::with_capacity(out.len() * vals.len().max(1));
        for c in &out {
            for v in vals {
                let mut d = *c;
                id.set(&mut d, *v);
                next.push(d);
            }
        }
        out = next;
    }
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<KernelConfig> = out
        .into_iter()
        .map(KernelConfig::canonical)
        .filter(|c| seen.insert(*c) && !ctx.history.contains(c) && ctx.space.is_valid(c))
        .collect();
    if out.len() > cap {
        out.shuffle(ctx.rng);
        out.truncate(cap);
    }
    out
}
