//! The contract between the driver and a strategy.
//!
//! Each round the driver builds a [`ProposeCtx`] (space, history, batch size, remaining
//! budget, a seeded RNG) and calls [`Strategy::propose`]; the strategy answers with a
//! [`Proposal`]: configs to evaluate, suggestions it could not turn into valid configs
//! ([`Rejected`], counted as invalid by the driver), warnings, the time spent waiting on an
//! LLM, and for LLM-driven strategies what the model contributed ([`LlmRound`]). The driver
//! still validates and deduplicates everything it receives.

use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::history::History;
use super::llm_port::LlmError;
use crate::space::{KernelConfig, Space, SpaceError};

/// What a strategy sees when asked for the next batch.
pub struct ProposeCtx<'a> {
    pub space: &'a Space,
    pub history: &'a History,
    /// How many configs the driver would like this round.
    pub batch: usize,
    /// Evaluations left in the budget (the driver evaluates at most this many).
    pub remaining: usize,
    /// 0-based round number.
    pub round: usize,
    /// Seeded by the driver: the same seed gives the same search.
    pub rng: &'a mut ChaCha8Rng,
}

impl ProposeCtx<'_> {
    /// The best config so far, or the space's default when nothing has been timed yet.
    pub fn incumbent(&self) -> Result<KernelConfig, SpaceError> {
        match self.history.best() {
            Some(e) => Ok(e.config),
            None => self.space.default_config(),
        }
    }

    /// How many configs to propose this round: the strategy's wish, capped by the budget.
    pub fn want(&self, wish: usize) -> usize {
        wish.min(self.remaining).max(1)
    }
}

/// A suggestion that did not become a valid config, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// What was suggested, as text (a name, a JSON fragment, a step description).
    pub suggestion: String,
    pub reason: String,
}

/// What an LLM contributed to one round: the numbers behind the run's honest accounting
/// ([`super::llm_account`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LlmRound {
    /// The search round (set by the driver).
    pub round: usize,
    /// Requests sent to the model this round.
    pub requests: usize,
    /// Configs the model suggested; of them, valid configs of the space.
    pub suggested: usize,
    pub valid: usize,
    /// Configs of the batch that came from the model, and from the strategy filling in.
    pub from_llm: usize,
    pub filled: usize,
    /// The model contributed no config: another strategy proposed the round.
    pub fell_back: bool,
    /// Tokens the endpoint counted (0 for cached replies).
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Wall time waiting on the model, in seconds.
    pub wall_s: f64,
}

impl LlmRound {
    /// A round the fallback strategy proposed after the model failed (`waited`: the time the
    /// failed attempt took; `rejected`: its invalid suggestions; `configs`: the batch).
    pub fn fell_back(waited: Duration, rejected: usize, configs: usize) -> Self {
        LlmRound {
            requests: 1,
            suggested: rejected,
            filled: configs,
            fell_back: true,
            wall_s: waited.as_secs_f64(),
            ..Default::default()
        }
    }
}

/// One round's answer.
#[derive(Debug, Clone, Default)]
pub struct Proposal {
    pub configs: Vec<KernelConfig>,
    /// Suggestions dropped before reaching the driver (invalid, unparseable).
    pub rejected: Vec<Rejected>,
    /// Reasoning or notes worth showing (the LLM's analysis, the step being run).
    pub notes: Vec<String>,
    /// Things the user should know (a fallback took over, many invalid suggestions).
    pub warnings: Vec<String>,
    /// Time spent waiting on an LLM for this proposal.
    pub llm_time: Duration,
    /// The strategy has nothing more to propose (exhaustive done, all steps run).
    pub exhausted: bool,
    /// What an LLM contributed (LLM-driven strategies only).
    pub llm: Option<LlmRound>,
}

impl Proposal {
    pub fn of(configs: Vec<KernelConfig>) -> Self {
        Proposal {
            configs,
            ..Default::default()
        }
    }

    pub fn exhausted() -> Self {
        Proposal {
            exhausted: true,
            ..Default::default()
        }
    }
}

/// Why a strategy could not propose anything.
#[derive(Debug, Error)]
pub enum StrategyError {
    #[error("{0}")]
    Llm(#[from] LlmError),
    #[error("the LLM reply contained no new valid config ({} suggestion(s) rejected, {duplicates} already measured{})", rejected.len(), first_reason(rejected))]
    NoValidSuggestion {
        rejected: Vec<Rejected>,
        duplicates: usize,
    },
    #[error("strategy `{0}` needs an LLM endpoint; configure one or pick another strategy")]
    NeedsLlm(&'static str),
    #[error("unknown strategy `{name}` (known: {known})")]
    Unknown { name: String, known: String },
    #[error("{0}")]
    Space(#[from] SpaceError),
    #[error("tuning steps file {path}: {message}")]
    Steps { path: String, message: String },
    #[error("{0}")]
    Config(String),
}

fn first_reason(rejected: &[Rejected]) -> String {
    rejected
        .first()
        .map(|r| format!("; first: {}", r.reason))
        .unwrap_or_default()
}

impl StrategyError {
    /// Errors a fallback strategy may take over from: the model was unreachable, slow, or
    /// said nothing usable. Configuration mistakes are not among them.
    pub fn is_llm_failure(&self) -> bool {
        matches!(
            self,
            StrategyError::Llm(_) | StrategyError::NoValidSuggestion { .. }
        )
    }
}

/// A search strategy. Implementations are one file each under `strategies/`.
pub trait Strategy {
    /// The registry name (`random`, `pattern`, `llm`, ...).
    fn name(&self) -> &str;

    /// Proposes the next batch.
    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError>;
}
