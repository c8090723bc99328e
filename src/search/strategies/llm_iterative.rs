//! `llm-iterative`: one edited config per iteration, from the best so far.
//!
//! The first round measures the starting config (the space's default, like the user's
//! initial kernel config); every later round sends the context, the results and the last
//! attempt, and asks for one modification of the best config, constrained by the reply
//! schema ([`ConfigSchema::edit`]) and sized to the context like the batch strategy's
//! requests. Parameters the model leaves out keep the best config's values.

use rand::Rng;

use super::llm_batch::{reply_size, NAME_ITEM_TOKENS, PARAM_ITEM_TOKENS};
use crate::search::llm_port::{timed_complete, SharedLlm};
use crate::search::prompt::{PromptBudget, PromptBuilder};
use crate::search::reply::parse_configs;
use crate::search::reply_schema::ConfigSchema;
use crate::search::strategy::{LlmRound, Proposal, ProposeCtx, Rejected, Strategy, StrategyError};

pub struct LlmIterative {
    llm: SharedLlm,
    pub temperature: f32,
    /// A reply with no new valid config is an error (nothing fills in for the model).
    pub require_valid: bool,
    rejected: Vec<Rejected>,
    schema: Option<ConfigSchema>,
}

impl LlmIterative {
    pub fn new(llm: SharedLlm) -> Self {
        LlmIterative {
            llm,
            temperature: 0.7,
            require_valid: true,
            rejected: Vec::new(),
            schema: None,
        }
    }
}

impl Strategy for LlmIterative {
    fn name(&self) -> &str {
        "llm-iterative"
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        let start = ctx.space.default_config()?;
        if !ctx.history.contains(&start) && ctx.history.ranked().is_empty() {
            return Ok(Proposal {
                configs: vec![start],
                notes: vec!["measuring the starting config".into()],
                ..Default::default()
            });
        }
        let schema = self
            .schema
            .get_or_insert_with(|| ConfigSchema::for_space(ctx.space));
        let limits = self.llm.limits();
        let per_item = if schema.lists_names() {
            NAME_ITEM_TOKENS
        } else {
            PARAM_ITEM_TOKENS
        };
        let (_, reply_tokens) = reply_size(1, per_item, limits.max_reply_tokens);
        let mut pb = PromptBuilder::new(ctx.space);
        pb.temperature = self.temperature;
        pb.budget = Some(PromptBudget::for_reply(&limits, reply_tokens));
        let mut request = pb.iterative_edit(ctx.history, &self.rejected);
        request.schema = Some(schema.edit(ctx.history));
        request.max_tokens = Some(reply_tokens);
        request.seed = Some(ctx.rng.gen());
        let (reply, llm_time) = timed_complete(self.llm.as_ref(), &request);
        let reply = reply?;
        let base = ctx.incumbent()?;
        let parsed = parse_configs(&reply.text, ctx.space, &base);
        self.rejected.extend(parsed.rejected.iter().cloned());
        let known = parsed
            .suggestions
            .iter()
            .filter(|s| ctx.history.contains(&s.config))
            .count();
        let fresh = parsed
            .suggestions
            .iter()
            .find(|s| !ctx.history.contains(&s.config));
        if fresh.is_none() && self.require_valid {
            return Err(StrategyError::NoValidSuggestion {
                rejected: parsed.rejected,
                duplicates: known,
            });
        }
        Ok(Proposal {
            configs: fresh.map(|s| s.config).into_iter().collect(),
            notes: fresh
                .and_then(|s| s.reasoning.as_ref())
                .map(|r| format!("LLM: {r}"))
                .into_iter()
                .collect(),
            warnings: reply.notices,
            llm: Some(LlmRound {
                requests: 1,
                suggested: parsed.suggestions.len() + parsed.rejected.len(),
                valid: parsed.suggestions.len(),
                from_llm: usize::from(fresh.is_some()),
                input_tokens: reply.input_tokens,
                output_tokens: reply.output_tokens,
                wall_s: llm_time.as_secs_f64(),
                ..Default::default()
            }),
            rejected: parsed.rejected,
            llm_time,
            ..Default::default()
        })
    }
}
