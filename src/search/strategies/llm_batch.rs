//! `llm`: the LLM proposes whole batches (the default strategy when an LLM is configured).
//!
//! Round 1 asks for ~25 diverse configs (conservative, aggressive, exploratory) with
//! reasoning; later rounds send the ranked history, the failures with reasons, the
//! suggestions that broke the rules, observed patterns and the best so far, and ask for ~15
//! new ones. Replies are parsed tolerantly and validated strictly ([`crate::search::reply`]);
//! a reply with no new valid config is an error the fallback wrapper takes over from.

use crate::search::llm_port::{timed_complete, SharedLlm};
use crate::search::prompt::PromptBuilder;
use crate::search::reply::parse_configs;
use crate::search::strategy::{Proposal, ProposeCtx, Rejected, Strategy, StrategyError};

pub struct LlmBatch {
    llm: SharedLlm,
    pub initial_batch: usize,
    pub refinement_batch: usize,
    pub temperature: f32,
    /// Every suggestion rejected so far, fed back to the model.
    rejected: Vec<Rejected>,
}

impl LlmBatch {
    pub fn new(llm: SharedLlm) -> Self {
        LlmBatch {
            llm,
            initial_batch: 25,
            refinement_batch: 15,
            temperature: 0.7,
            rejected: Vec::new(),
        }
    }
}

impl Strategy for LlmBatch {
    fn name(&self) -> &str {
        "llm"
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        let mut pb = PromptBuilder::new(ctx.space);
        pb.temperature = self.temperature;
        let first = ctx.history.ranked().is_empty();
        let n = ctx.want(if first {
            self.initial_batch
        } else {
            self.refinement_batch
        });
        let request = if first {
            pb.initial_batch(n)
        } else {
            pb.refinement_batch(ctx.history, &self.rejected, n)
        };
        let (reply, llm_time) = timed_complete(self.llm.as_ref(), &request);
        let text = reply?;
        let base = ctx.incumbent()?;
        let parsed = parse_configs(&text, ctx.space, &base);
        self.rejected.extend(parsed.rejected.iter().cloned());
        let total = parsed.suggestions.len() + parsed.rejected.len();
        let (fresh, known): (Vec<_>, Vec<_>) = parsed
            .suggestions
            .iter()
            .partition(|s| !ctx.history.contains(&s.config));
        if fresh.is_empty() {
            return Err(StrategyError::NoValidSuggestion {
                rejected: parsed.rejected,
                duplicates: known.len(),
            });
        }
        let mut p = Proposal {
            configs: fresh.iter().map(|s| s.config).collect(),
            llm_time,
            ..Default::default()
        };
        if parsed.rejected.len() * 2 > total {
            p.warnings.push(format!(
                "the LLM suggested {} invalid config(s) out of {total}",
                parsed.rejected.len()
            ));
        }
        p.notes
            .extend(parsed.analysis.map(|a| format!("LLM analysis: {a}")));
        p.notes
            .extend(parsed.strategy.map(|s| format!("LLM strategy: {s}")));
        p.rejected = parsed.rejected;
        Ok(p)
    }
}
