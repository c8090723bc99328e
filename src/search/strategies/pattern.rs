//! `pattern`: neighbourhood (coordinate) search from the best, with restarts when stuck.
//!
//! Each round proposes the untried one-step neighbours (`Space::neighbors`: one parameter
//! moved to an adjacent value, or to any other value of a categorical one) of the best
//! configs of the current basin — the best first, then the runners-up (a small beam), each
//! neighbourhood in seeded random order. When those
//! are all tried, the wider neighbourhood follows: one parameter moved to any value of its
//! domain, and moves that are only valid together with an adjacent step of a second
//! parameter (a larger MacroTile0 often needs more waves along M, a deeper DepthU fewer
//! pipeline stages). Parameters are coupled through the constraints, so single steps alone
//! stall in local optima that one coupled move escapes. When the wider neighbourhood of the
//! beam is exhausted too, the basin is a local optimum: the search restarts from fresh random
//! configs, and only results since the restart form the new basin (the driver keeps the
//! global best regardless).

use rand::seq::SliceRandom;

use super::random::RandomSearch;
use crate::search::strategy::{Proposal, ProposeCtx, Strategy, StrategyError};
use crate::space::{KernelConfig, Space};

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

/// Valid configs reached from `c` by moving one parameter to any value of its domain, or by
/// such a move plus one adjacent step of another parameter that makes it valid.
pub(crate) fn wide_neighbors(space: &Space, c: &KernelConfig) -> Vec<KernelConfig> {
    let mut out = Vec::new();
    for d in &space.domains {
        let v0 = d.id.get(c);
        for &v in d.values.iter().filter(|&&v| v != v0) {
            let mut moved = *c;
            d.id.set(&mut moved, v);
            let moved = moved.canonical();
            if space.is_valid(&moved) {
                out.push(moved);
                continue;
            }
            for e in space.domains.iter().filter(|e| e.id != d.id) {
                for w in e.neighbors(e.id.get(&moved)) {
                    let mut both = moved;
                    e.id.set(&mut both, w);
                    let both = both.canonical();
                    if space.is_valid(&both) {
                        out.push(both);
                    }
                }
            }
        }
    }
    out.sort_by_key(|x| x.name());
    out.dedup();
    out
}

impl PatternSearch {
    /// Untried neighbours of the basin's beam, best parent first: adjacent steps first, then
    /// the wider neighbourhood.
    pub(super) fn candidates(&self, ctx: &mut ProposeCtx<'_>, n: usize) -> Vec<KernelConfig> {
        let near = self.collect(ctx, n, |s, c| s.neighbors(c));
        if !near.is_empty() {
            return near;
        }
        self.collect(ctx, n, wide_neighbors)
    }

    fn collect(
        &self,
        ctx: &mut ProposeCtx<'_>,
        n: usize,
        around: fn(&Space, &KernelConfig) -> Vec<KernelConfig>,
    ) -> Vec<KernelConfig> {
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
            let mut ns = around(ctx.space, &p);
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
            // Start from the default config (and the space's other starts, if any) and the
            // default's neighbourhood.
            let start = ctx.space.default_config()?;
            let mut configs = vec![start];
            configs.extend(
                ctx.space
                    .extra_starts()
                    .into_iter()
                    .take(n.saturating_sub(1)),
            );
            let mut ns = ctx.space.neighbors(&start);
            ns.shuffle(ctx.rng);
            let room = n.saturating_sub(configs.len());
            configs.extend(ns.into_iter().take(room));
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
