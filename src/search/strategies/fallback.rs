//! The fallback wrapper around an LLM-driven strategy (`--fallback random|pattern|error`).
//!
//! When the wrapped strategy fails because of the LLM — a timeout, a transport or API error,
//! or a reply with no new valid config — the round is handed to the fallback strategy with
//! one warning, and the suggestions the model got wrong still count as invalid. With
//! `error` the failure ends the search. Other errors (bad configuration) always pass through.

use std::str::FromStr;
use std::time::Instant;

use super::pattern::PatternSearch;
use super::random::RandomSearch;
use crate::search::strategy::{LlmRound, Proposal, ProposeCtx, Strategy, StrategyError};

/// What to do when the LLM fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FallbackMode {
    Random,
    Pattern,
    Error,
}

impl FallbackMode {
    pub fn name(self) -> &'static str {
        match self {
            FallbackMode::Random => "random",
            FallbackMode::Pattern => "pattern",
            FallbackMode::Error => "error",
        }
    }
}

impl FromStr for FallbackMode {
    type Err = StrategyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "random" => Ok(FallbackMode::Random),
            "pattern" => Ok(FallbackMode::Pattern),
            "error" => Ok(FallbackMode::Error),
            other => Err(StrategyError::Config(format!(
                "unknown fallback `{other}` (expected random, pattern or error)"
            ))),
        }
    }
}

pub struct Fallback {
    inner: Box<dyn Strategy>,
    pub mode: FallbackMode,
    random: RandomSearch,
    pattern: PatternSearch,
    /// Rounds the fallback took over.
    pub fallback_rounds: usize,
}

impl Fallback {
    pub fn new(inner: Box<dyn Strategy>, mode: FallbackMode) -> Self {
        Fallback {
            inner,
            mode,
            random: RandomSearch,
            pattern: PatternSearch::default(),
            fallback_rounds: 0,
        }
    }
}

impl Strategy for Fallback {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        let start = Instant::now();
        let err = match self.inner.propose(ctx) {
            Ok(p) => return Ok(p),
            Err(e) if e.is_llm_failure() && self.mode != FallbackMode::Error => e,
            Err(e) => return Err(e),
        };
        // The time the failed attempt took was spent waiting on the model.
        let waited = start.elapsed();
        let mut p = match self.mode {
            FallbackMode::Random => self.random.propose(ctx)?,
            _ => self.pattern.propose(ctx)?,
        };
        self.fallback_rounds += 1;
        if let StrategyError::NoValidSuggestion { rejected, .. } = &err {
            p.rejected.extend(rejected.iter().cloned());
        }
        p.llm_time += waited;
        p.llm = Some(LlmRound::fell_back(
            waited,
            p.rejected.len(),
            p.configs.len(),
        ));
        p.warnings.push(format!(
            "round {}: {err}; the {} fallback proposes this round",
            ctx.round + 1,
            self.mode.name()
        ));
        Ok(p)
    }
}
