//! `genetic`: a steady-state genetic algorithm over parameter values.
//!
//! The population is the `population` fastest configs measured so far (so the best are
//! always kept: elitism). Each child: two parents by tournament selection (best of
//! `tournament` random members), uniform crossover per parameter, then each parameter
//! mutates with probability `mutation_rate` — to an adjacent value (`Domain::neighbors`)
//! mostly, to a random value of its domain sometimes. Invalid children are repaired
//! (`Space::repair`) or dropped. Round 1 is a random initial population.

use rand::seq::SliceRandom;
use rand::Rng;

use super::random::RandomSearch;
use crate::search::strategy::{Proposal, ProposeCtx, Strategy, StrategyError};
use crate::space::KernelConfig;

pub struct Genetic {
    pub population: usize,
    pub tournament: usize,
    pub mutation_rate: f64,
    /// Probability that a mutation jumps to a random value rather than a neighbour.
    pub jump_rate: f64,
}

impl Default for Genetic {
    fn default() -> Self {
        Genetic {
            population: 16,
            tournament: 3,
            mutation_rate: 0.15,
            jump_rate: 0.25,
        }
    }
}

impl Genetic {
    fn select<'a>(&self, pop: &'a [KernelConfig], ctx: &mut ProposeCtx<'_>) -> &'a KernelConfig {
        // `pop` is sorted fastest first, so the lowest index drawn wins the tournament.
        let best = (0..self.tournament.max(1))
            .map(|_| ctx.rng.gen_range(0..pop.len()))
            .min()
            .unwrap_or(0);
        &pop[best]
    }

    fn child(&self, pop: &[KernelConfig], ctx: &mut ProposeCtx<'_>) -> Option<KernelConfig> {
        let a = *self.select(pop, ctx);
        let b = *self.select(pop, ctx);
        let mut c = a;
        for d in &ctx.space.domains {
            if ctx.rng.gen_bool(0.5) {
                d.id.set(&mut c, d.id.get(&b));
            }
            if ctx.rng.gen_bool(self.mutation_rate) {
                let v = d.id.get(&c);
                let new = if ctx.rng.gen_bool(self.jump_rate) {
                    d.sample(ctx.rng)
                } else {
                    *d.neighbors(v).choose(ctx.rng).unwrap_or(&v)
                };
                d.id.set(&mut c, new);
            }
        }
        let c = c.canonical();
        if ctx.space.is_valid(&c) {
            Some(c)
        } else {
            ctx.space.repair(&c)
        }
    }
}

impl Strategy for Genetic {
    fn name(&self) -> &str {
        "genetic"
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        let n = ctx.want(ctx.batch);
        let pop: Vec<KernelConfig> = ctx
            .history
            .ranked()
            .into_iter()
            .take(self.population)
            .map(|e| e.config)
            .collect();
        if pop.len() < 2 {
            let configs =
                RandomSearch::sample_fresh(ctx, n.max(self.population.min(ctx.remaining)));
            let exhausted = configs.is_empty();
            return Ok(Proposal {
                configs,
                exhausted,
                ..Default::default()
            });
        }
        let mut configs: Vec<KernelConfig> = Vec::with_capacity(n);
        let mut tries = 0;
        while configs.len() < n && tries < n * 40 {
            tries += 1;
            if let Some(c) = self.child(&pop, ctx) {
                if !ctx.history.contains(&c) && !configs.contains(&c) {
                    configs.push(c);
                }
            }
        }
        // A converged population breeds only known configs: inject fresh random ones.
        if configs.len() < n {
            let fresh = RandomSearch::sample_fresh(ctx, n - configs.len());
            configs.extend(
                fresh
                    .into_iter()
                    .filter(|c| !configs.contains(c))
                    .collect::<Vec<_>>(),
            );
        }
        let exhausted = configs.is_empty();
        Ok(Proposal {
            configs,
            exhausted,
            ..Default::default()
        })
    }
}
