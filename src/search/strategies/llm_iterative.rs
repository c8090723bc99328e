//! `llm-iterative`: one edited config per iteration, from the best so far.
//!
//! The first round measures the starting config (the space's default, like the user's
//! initial kernel config); every later round sends the context, the results and the last
//! attempt, and asks for one modification of the best config. Parameters the model leaves
//! out keep the best config's values.

use crate::search::llm_port::{timed_complete, SharedLlm};
use crate::search::prompt::PromptBuilder;
use crate::search::reply::parse_configs;
use crate::search::strategy::{Proposal, ProposeCtx, Rejected, Strategy, StrategyError};

pub struct LlmIterative {
    llm: SharedLlm,
    pub temperature: f32,
    rejected: Vec<Rejected>,
}

impl LlmIterative {
    pub fn new(llm: SharedLlm) -> Self {
        LlmIterative {
            llm,
            temperature: 0.7,
            rejected: Vec::new(),
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
        let mut pb = PromptBuilder::new(ctx.space);
        pb.temperature = self.temperature;
        let request = pb.iterative_edit(ctx.history, &self.rejected);
        let (reply, llm_time) = timed_complete(self.llm.as_ref(), &request);
        let text = reply?;
        let base = ctx.incumbent()?;
        let parsed = parse_configs(&text, ctx.space, &base);
        self.rejected.extend(parsed.rejected.iter().cloned());
        let known = parsed
            .suggestions
            .iter()
            .filter(|s| ctx.history.contains(&s.config))
            .count();
        let Some(s) = parsed
            .suggestions
            .iter()
            .find(|s| !ctx.history.contains(&s.config))
        else {
            return Err(StrategyError::NoValidSuggestion {
                rejected: parsed.rejected,
                duplicates: known,
            });
        };
        Ok(Proposal {
            configs: vec![s.config],
            notes: s.reasoning.iter().map(|r| format!("LLM: {r}")).collect(),
            rejected: parsed.rejected,
            llm_time,
            ..Default::default()
        })
    }
}
