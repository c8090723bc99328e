//! Search: strategies propose kernel configs, the driver disposes.
//!
//! Flow of one search: a [`Strategy`] (one file per strategy under [`strategies`], picked by
//! name from the registry) looks at the [`Space`](crate::space::Space) and the [`History`]
//! and proposes a batch; the [`driver`] validates every proposal (`Space::check`), drops
//! duplicates and configs whose results are already known, hands the rest to an
//! [`Evaluator`] (compile + verify + time), appends the results to the history, checks the
//! budget and convergence, and finally re-times the best few so the winner is never one lucky
//! sample. LLM-driven strategies talk to a model only through the small [`llm_port`] trait;
//! their prompts are built in [`prompt`] (sized to the model's context), their replies
//! constrained by a schema from [`reply_schema`] and parsed in [`reply`], and what the model
//! contributed is totalled in [`llm_account`].
//! The model-based strategy learns across shapes: [`corpus`] holds what other shapes' measurements
//! teach, [`features`] describes a (problem, GPU, config) as numbers and [`forest`] is the
//! regressor that learns from them. [`eval`] replays recorded sweeps to compare strategies
//! offline (leaving each sweep's shape out of what a learner is given).

pub mod corpus;
pub mod driver;
pub mod eval;
pub mod evaluator;
pub mod features;
pub mod forest;
pub mod history;
pub mod llm_account;
pub mod llm_port;
pub mod observations;
pub mod progress;
pub mod prompt;
pub mod reply;
pub mod reply_schema;
pub mod retiming;
pub mod strategies;
pub mod strategy;

pub use driver::{
    run_search, KnownResults, NoKnownResults, SearchOptions, SearchResult, StopReason,
};
pub use evaluator::{DeviceEvaluator, EvalResult, Evaluator};
pub use history::{Evaluation, History};
pub use llm_account::LlmAccount;
pub use llm_port::{LlmError, LlmLimits, LlmPort, LlmReply, LlmRequest, ScriptedLlm};
pub use progress::{Event, Progress};
pub use strategy::{LlmRound, Proposal, ProposeCtx, Rejected, Strategy, StrategyError};

use thiserror::Error;

/// Errors of the search layer itself (a failing config is an outcome, not an error).
#[derive(Debug, Error)]
pub enum SearchError {
    #[error("strategy `{strategy}` failed: {source}")]
    Strategy {
        strategy: String,
        #[source]
        source: StrategyError,
    },
    #[error("{0}")]
    Space(#[from] crate::space::SpaceError),
    #[error("evaluator returned {got} results for {sent} configs")]
    EvaluatorMismatch { sent: usize, got: usize },
    #[error("dataset: {0}")]
    Dataset(#[from] crate::device::replay::ReplayError),
    #[error("device: {0}")]
    Device(#[from] crate::device::DeviceError),
    #[error("{0}")]
    Invalid(String),
}
