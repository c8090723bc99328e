//! `pattern`: neighbourhood (coordinate) search from the best, with restarts when stuck.
//!
//! Each round proposes the untried one-step neighbours (`Space::neighbors`: one parameter
//! moved to an adjacent value) of the best configs of the current basin — the best first,
//! then the runners-up (a small beam), each neighbourhood in seeded random order. When every
//! neighbour of the beam has been tried the basin is a local optimum: the search restarts
//! from fresh random configs, and only results since the restart form the new basin (the
//! driver keeps the global best regardless).

use rand::seq::SliceRandom;

use super::random::RandomSearch;
use crate::search::strategy::{Proposal, ProposeCtx, Strategy, StrategyError};
use crate::space::KernelConfig;

pub struct PatternSearch {
    /// How many of the basin's best configs have their neighbourhoods explored.
    pub beam: usize,
    /// History index where the current basin starts.
    basin_start: usize,
    pub restarts: usize,
}

impl Default for PatternSearch {
    fn default() -> Self {
        PatternSearch {
            beam: 3,
            basin_start: 0,
            restarts: 0,
        }
    }
}

impl PatternSearch {
    /// Untried neighbours of the basin's beam, best parent first.
    fn candidates(&self, ctx: &mut ProposeCtx<'_>, n: usize) -> Vec<KernelConfig> {
        let parents: Vec<KernelConfig> = ctx
            .history
            .ranked()
            .into_iter()
            .filter(|e| e.index >= self.basin_start)
            .take(self.beam)
            .map(|e| e.config)
            .collect();
        let mut out: Vec<KernelConfig> = Vec::new();
        for p in parents {
            let mut ns = ctx.space.neighbors(&p);
            ns.shuffle(ctx.rng);
            for c in ns {
                if out.len() >= n {
                    return out;
                }
                if !ctx.history.contains(&c) && !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out
    }
}

impl Strategy for PatternSearch {
    fn name(&self) -> &str {
        "pattern"
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        let n = ctx.want(ctx.batch);
        if ctx.history.is_empty() {
            // Start from the default config and its neighbourhood.
            let start = ctx.space.default_config()?;
            let mut configs = vec![start];
            let mut ns = ctx.space.neighbors(&start);
            ns.shuffle(ctx.rng);
            configs.extend(ns.into_iter().take(n.saturating_sub(1)));
            return Ok(Proposal::of(configs));
        }
        let configs = self.candidates(ctx, n);
        if !configs.is_empty() {
            return Ok(Proposal::of(configs));
        }
        // Local optimum (or nothing timed in this basin): restart from random configs.
        self.basin_start = ctx.history.len();
        self.restarts += 1;
        let configs = RandomSearch::sample_fresh(ctx, n);
        let exhausted = configs.is_empty();
        Ok(Proposal {
            notes: vec![format!("pattern search restart #{}", self.restarts)],
            configs,
            exhausted,
            ..Default::default()
        })
    }
}
