//! `random`: uniformly random valid configs not tried before. The baseline every other
//! strategy must beat, and one of the LLM strategies' fallbacks.

use crate::search::strategy::{Proposal, ProposeCtx, Strategy, StrategyError};
use crate::space::KernelConfig;

/// Draws per config before concluding the space has nothing new left.
const TRIES_PER_CONFIG: usize = 64;

#[derive(Debug, Default)]
pub struct RandomSearch;

impl RandomSearch {
    /// `n` fresh random configs (fewer when the space is nearly used up).
    pub fn sample_fresh(ctx: &mut ProposeCtx<'_>, n: usize) -> Vec<KernelConfig> {
        let mut out: Vec<KernelConfig> = Vec::with_capacity(n);
        let mut tries = 0;
        while out.len() < n && tries < n * TRIES_PER_CONFIG {
            tries += 1;
            let Some(c) = ctx.space.sample(ctx.rng) else {
                break;
            };
            if !ctx.history.contains(&c) && !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }
}

impl Strategy for RandomSearch {
    fn name(&self) -> &str {
        "random"
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        let n = ctx.want(ctx.batch);
        let configs = Self::sample_fresh(ctx, n);
        let exhausted = configs.is_empty();
        Ok(Proposal {
            configs,
            exhausted,
            ..Default::default()
        })
    }
}
