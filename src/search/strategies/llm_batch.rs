//! `llm`: the LLM proposes whole batches (the default strategy when an LLM is configured).
//!
//! Round 1 asks for ~25 diverse configs (conservative, aggressive, exploratory) with
//! reasoning; later rounds send the ranked history, the failures with reasons, the
//! suggestions that broke the rules, observed patterns and the best so far, and ask for ~15
//! new ones. Every request carries the reply's JSON schema ([`ConfigSchema`]: the untried
//! valid kernel names where the space can list them, each parameter's domain otherwise),
//! a reply length that fits the batch, a prompt sized to what the context leaves
//! ([`PromptBudget`]) and a seed drawn from the search's RNG. When the context leaves too
//! little room for the whole batch, fewer configs are asked for. Replies are parsed
//! tolerantly and validated strictly ([`crate::search::reply`]); the round reports what the
//! model contributed ([`LlmRound`]).
//!
//! Alone (`--fallback error`) a reply with no new valid config is an error that ends the
//! search; as the registry builds it otherwise, it sits inside [`super::filled::Filled`],
//! which fills the batch from the pattern search (or the model-based one), so an empty reply
//! costs nothing but the wait.

use rand::Rng;

use crate::search::llm_port::{timed_complete, SharedLlm};
use crate::search::prompt::{PromptBudget, PromptBuilder};
use crate::search::reply::parse_configs;
use crate::search::reply_schema::ConfigSchema;
use crate::search::strategy::{LlmRound, Proposal, ProposeCtx, Rejected, Strategy, StrategyError};

/// Reply tokens one suggested config takes, written as a kernel name (~65 tokens with a small
/// model's tokenizer) or as an object of every parameter, with its reasoning; and the rest of
/// a reply (analysis, strategy, brackets). Measured with SmolLM2's tokenizer, the least
/// efficient of those tried on these replies.
pub const NAME_ITEM_TOKENS: u32 = 120;
pub const PARAM_ITEM_TOKENS: u32 = 230;
pub const REPLY_OVERHEAD_TOKENS: u32 = 260;

pub struct LlmBatch {
    llm: SharedLlm,
    pub initial_batch: usize,
    pub refinement_batch: usize,
    pub temperature: f32,
    /// A reply with no new valid config is an error (nothing fills in for the model).
    pub require_valid: bool,
    /// Every suggestion rejected so far, fed back to the model.
    rejected: Vec<Rejected>,
    /// How configs are written in replies; built from the space on the first round.
    schema: Option<ConfigSchema>,
}

impl LlmBatch {
    pub fn new(llm: SharedLlm) -> Self {
        LlmBatch {
            llm,
            initial_batch: 25,
            refinement_batch: 15,
            temperature: 0.7,
            require_valid: true,
            rejected: Vec::new(),
            schema: None,
        }
    }
}

/// The reply tokens for `n` configs of `per_item` tokens each, and how many configs fit in
/// `max_reply` tokens (at least one).
pub fn reply_size(n: usize, per_item: u32, max_reply: u32) -> (usize, u32) {
    let fit = (max_reply.saturating_sub(REPLY_OVERHEAD_TOKENS) / per_item).max(1) as usize;
    let n = n.min(fit).max(1);
    let tokens = (REPLY_OVERHEAD_TOKENS + n as u32 * per_item).min(max_reply);
    (n, tokens)
}

impl Strategy for LlmBatch {
    fn name(&self) -> &str {
        "llm"
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        let schema = self
            .schema
            .get_or_insert_with(|| ConfigSchema::for_space(ctx.space));
        let first = ctx.history.ranked().is_empty();
        let wanted = ctx.want(if first {
            self.initial_batch
        } else {
            self.refinement_batch
        });
        let limits = self.llm.limits();
        let per_item = if schema.lists_names() {
            NAME_ITEM_TOKENS
        } else {
            PARAM_ITEM_TOKENS
        };
        // The reply may take at most half the context: the prompt needs the rest.
        let max_reply = limits
            .max_reply_tokens
            .min(limits.context_tokens / 2)
            .max(1);
        let (n, reply_tokens) = reply_size(wanted, per_item, max_reply);
        let mut pb = PromptBuilder::new(ctx.space);
        pb.temperature = self.temperature;
        pb.budget = Some(PromptBudget::for_reply(&limits, reply_tokens));
        let mut request = if first {
            pb.initial_batch(n, schema.lists_names())
        } else {
            pb.refinement_batch(ctx.history, &self.rejected, n, schema.lists_names())
        };
        request.schema = Some(schema.batch(ctx.history, n, !first));
        request.max_tokens = Some(reply_tokens);
        request.seed = Some(ctx.rng.gen());
        let (reply, llm_time) = timed_complete(self.llm.as_ref(), &request);
        let reply = reply?;
        let base = ctx.incumbent()?;
        let parsed = parse_configs(&reply.text, ctx.space, &base);
        self.rejected.extend(parsed.rejected.iter().cloned());
        let total = parsed.suggestions.len() + parsed.rejected.len();
        let (fresh, known): (Vec<_>, Vec<_>) = parsed
            .suggestions
            .iter()
            .partition(|s| !ctx.history.contains(&s.config));
        if fresh.is_empty() && self.require_valid {
            return Err(StrategyError::NoValidSuggestion {
                rejected: parsed.rejected,
                duplicates: known.len(),
            });
        }
        let mut p = Proposal {
            configs: fresh.iter().map(|s| s.config).collect(),
            llm_time,
            warnings: reply.notices,
            llm: Some(LlmRound {
                requests: 1,
                suggested: total,
                valid: parsed.suggestions.len(),
                from_llm: fresh.len(),
                input_tokens: reply.input_tokens,
                output_tokens: reply.output_tokens,
                wall_s: llm_time.as_secs_f64(),
                ..Default::default()
            }),
            ..Default::default()
        };
        if n < wanted {
            p.notes.push(format!(
                "asked the LLM for {n} configs, not {wanted}: a longer reply would not fit in {max_reply} tokens (--llm-max-tokens, --llm-context)"
            ));
        }
        // A round with nothing valid gets its warning from whatever fills in for the model.
        if !p.configs.is_empty() && parsed.rejected.len() * 2 > total {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_size_asks_for_fewer_when_the_reply_would_not_fit() {
        assert_eq!(reply_size(4, 100, 2048), (4, 660));
        let (n, tokens) = reply_size(25, NAME_ITEM_TOKENS, 2048);
        assert!(n < 25 && tokens <= 2048, "{n} {tokens}");
        assert_eq!(reply_size(25, 10_000, 2048), (1, 2048));
    }
}
