//! The fallback wrapper around an LLM-driven strategy (`--fallback random|pattern|error`).
//!
//! When the wrapped strategy fails because of the LLM — a timeout, a transport or API error,
//! or a reply with no new valid config — the round is handed to the fallback strategy with
//! one warning, and the suggestions the model got wrong still count as invalid. With
//! `error` the failure ends the search. Other errors (bad configuration) always pass through.
//!
//! A model that failed [`GIVE_UP_AFTER`] rounds in a row (dead endpoint, garbage replies) is
//! not asked again in the run: the fallback proposes every remaining round, and one warning
//! says so. Warnings quote the failure as a short one-line excerpt, never the raw reply.

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

/// Consecutive failed rounds after which the model is no longer asked.
pub const GIVE_UP_AFTER: usize = 3;

/// Longest excerpt of a failure a warning quotes.
const EXCERPT_CHARS: usize = 160;

pub struct Fallback {
    inner: Box<dyn Strategy>,
    pub mode: FallbackMode,
    random: RandomSearch,
    pattern: PatternSearch,
    /// Rounds the fallback took over.
    pub fallback_rounds: usize,
    /// Failed rounds in a row; at [`GIVE_UP_AFTER`] the model is left alone.
    failures_in_a_row: usize,
}

impl Fallback {
    pub fn new(inner: Box<dyn Strategy>, mode: FallbackMode) -> Self {
        Fallback {
            inner,
            mode,
            random: RandomSearch,
            pattern: PatternSearch::default(),
            fallback_rounds: 0,
            failures_in_a_row: 0,
        }
    }

    /// Whether the model has been given up on for the rest of the run.
    pub fn gave_up(&self) -> bool {
        self.failures_in_a_row >= GIVE_UP_AFTER
    }

    fn fallback_proposal(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        self.fallback_rounds += 1;
        match self.mode {
            FallbackMode::Random => self.random.propose(ctx),
            _ => self.pattern.propose(ctx),
        }
    }
}

/// A failure as a warning may quote it: one line, printable characters only, at most
/// [`EXCERPT_CHARS`] characters (a garbage reply can be megabytes of anything).
fn excerpt(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text
        .split_whitespace()
        .flat_map(|w| w.chars().chain([' ']))
        .enumerate()
    {
        if i == EXCERPT_CHARS {
            out.push('…');
            break;
        }
        out.push(if c.is_control() || c == '\u{fffd}' {
            '?'
        } else {
            c
        });
    }
    out.trim_end().to_string()
}

impl Strategy for Fallback {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        if self.gave_up() {
            return self.fallback_proposal(ctx);
        }
        let start = Instant::now();
        let err = match self.inner.propose(ctx) {
            Ok(p) => {
                self.failures_in_a_row = 0;
                return Ok(p);
            }
            Err(e) if e.is_llm_failure() && self.mode != FallbackMode::Error => e,
            Err(e) => return Err(e),
        };
        // The time the failed attempt took was spent waiting on the model.
        let waited = start.elapsed();
        let mut p = self.fallback_proposal(ctx)?;
        self.failures_in_a_row += 1;
        if let StrategyError::NoValidSuggestion { rejected, .. } = &err {
            p.rejected.extend(rejected.iter().cloned());
        }
        p.llm_time += waited;
        p.llm = Some(LlmRound::fell_back(
            waited,
            p.rejected.len(),
            p.configs.len(),
        ));
        let what = excerpt(&err.to_string());
        p.warnings.push(if self.gave_up() {
            format!(
                "round {}: {what}; the LLM failed {GIVE_UP_AFTER} rounds in a row and is not asked again in this run: the {} fallback proposes every remaining round",
                ctx.round + 1,
                self.mode.name()
            )
        } else {
            format!(
                "round {}: {what}; the {} fallback proposes this round",
                ctx.round + 1,
                self.mode.name()
            )
        });
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::GemmProblem;
    use crate::search::history::History;
    use crate::search::llm_port::LlmError;
    use crate::space::Space;
    use rand::SeedableRng;

    /// A model behind a dead endpoint that answers garbage bytes: every round fails.
    struct Dead {
        asked: std::rc::Rc<std::cell::Cell<usize>>,
    }

    impl Strategy for Dead {
        fn name(&self) -> &str {
            "llm"
        }
        fn propose(&mut self, _ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
            self.asked.set(self.asked.get() + 1);
            Err(StrategyError::Llm(LlmError::Transport(format!(
                "garbage \u{1b}[31m{}\n\0{}",
                "x".repeat(5000),
                "\u{fffd}"
            ))))
        }
    }

    #[test]
    fn a_dead_model_is_asked_three_times_then_left_alone_with_short_warnings() {
        let asked = std::rc::Rc::new(std::cell::Cell::new(0));
        let mut f = Fallback::new(
            Box::new(Dead {
                asked: asked.clone(),
            }),
            FallbackMode::Random,
        );
        let space = Space::for_problem(
            &GemmProblem::new(1024, 64, 1024),
            &HwSpec::by_name("H200").unwrap(),
        );
        let history = History::new();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut warnings = Vec::new();
        for round in 0..6 {
            let mut ctx = ProposeCtx {
                space: &space,
                history: &history,
                batch: 4,
                remaining: 100,
                round,
                rng: &mut rng,
            };
            let p = f.propose(&mut ctx).unwrap();
            assert!(!p.configs.is_empty(), "the fallback proposes round {round}");
            warnings.extend(p.warnings);
        }
        assert_eq!(asked.get(), GIVE_UP_AFTER, "asked after giving up");
        assert_eq!(f.fallback_rounds, 6);
        assert_eq!(warnings.len(), GIVE_UP_AFTER, "{warnings:?}");
        assert!(warnings[GIVE_UP_AFTER - 1].contains("not asked again"));
        for w in &warnings {
            assert!(w.len() < 600, "{w}");
            assert!(!w.chars().any(|c| c.is_control()), "{w:?}");
            assert!(!w.contains('\u{fffd}'), "{w:?}");
        }
    }
}
