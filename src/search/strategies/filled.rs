//! An LLM strategy filled in by another, so the LLM can only add to a search.
//!
//! [`Filled`] wraps an LLM-driven strategy (`inner`) and a filler (the pattern search, or the
//! model-based search when the database has measurements). The first round starts from the
//! filler's first proposals (`lead` of them: the pattern search's default config and split
//! start, the model's best guesses); every round then takes the model's valid new configs
//! and fills what is missing of the batch from the filler. A reply with nothing valid leaves
//! the whole round to the filler, with a warning. So a search with the LLM measures at least
//! what the filler would have measured first, and the round's [`LlmRound`] says how many of
//! the batch came from the model. Transport failures pass through to the
//! [`super::fallback::Fallback`] wrapper outside, which owns what happens then.

use crate::search::strategy::{Proposal, ProposeCtx, Strategy, StrategyError};
use crate::space::KernelConfig;

/// How many of the filler's first proposals lead the first batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lead {
    /// The space's start configs: its default, and its split start where it has one (the
    /// pattern search's first two proposals).
    Starts,
    /// This many.
    First(usize),
    /// Half the batch (the model's best guesses).
    Half,
}

impl Lead {
    fn of(self, n: usize, space: &crate::space::Space) -> usize {
        match self {
            Lead::Starts => (1 + usize::from(space.split_start().is_some())).min(n),
            Lead::First(k) => k.min(n),
            Lead::Half => n.div_ceil(2),
        }
    }
}

pub struct Filled {
    inner: Box<dyn Strategy>,
    filler: Box<dyn Strategy>,
    pub lead: Lead,
    /// The batch size when the inner strategy has its own (one edit per round); the
    /// driver's otherwise.
    pub batch: Option<usize>,
}

impl Filled {
    pub fn new(inner: Box<dyn Strategy>, filler: Box<dyn Strategy>, lead: Lead) -> Self {
        Filled {
            inner,
            filler,
            lead,
            batch: None,
        }
    }

    /// The filler's proposals for this round, without the configs already chosen.
    fn fill(
        &mut self,
        ctx: &mut ProposeCtx<'_>,
        chosen: &[KernelConfig],
    ) -> Result<Proposal, StrategyError> {
        let mut p = self.filler.propose(ctx)?;
        p.configs
            .retain(|c| !chosen.contains(c) && !ctx.history.contains(c));
        Ok(p)
    }
}

impl Strategy for Filled {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        let n = ctx.want(self.batch.unwrap_or(ctx.batch));
        // The first round: the filler's first picks lead, whatever the model says; the rest
        // of its first proposal is kept to fill with.
        let mut lead = Vec::new();
        let mut spare = None;
        let k = self.lead.of(n, ctx.space);
        if ctx.history.is_empty() && k > 0 {
            let mut first = self.fill(ctx, &[])?;
            let rest = first.configs.split_off(k.min(first.configs.len()));
            lead = std::mem::take(&mut first.configs);
            first.configs = rest;
            spare = Some(first);
        }
        let mut p = self.inner.propose(ctx)?;
        let Some(mut round) = p.llm.take() else {
            // The model was not asked this round (the iterative strategy's start): nothing to
            // fill in for.
            return Ok(p);
        };
        let from_model: Vec<KernelConfig> = p
            .configs
            .iter()
            .copied()
            .filter(|c| !lead.contains(c))
            .take(n.saturating_sub(lead.len()))
            .collect();
        let mut configs = lead;
        configs.extend(&from_model);
        round.from_llm = from_model.len();
        if configs.len() < n {
            let mut fill = match spare {
                Some(first) => first,
                None => self.fill(ctx, &configs)?,
            };
            fill.configs.retain(|c| !configs.contains(c));
            let room = n - configs.len();
            configs.extend(fill.configs.into_iter().take(room));
            p.notes.extend(fill.notes);
            p.exhausted = fill.exhausted && configs.is_empty();
        }
        round.filled = configs.len() - round.from_llm;
        if round.from_llm == 0 {
            round.fell_back = true;
            p.warnings.push(format!(
                "round {}: the LLM gave no new valid config ({} suggested, {} valid); the {} search proposes this round",
                ctx.round + 1,
                round.suggested,
                round.valid,
                self.filler.name()
            ));
        }
        p.configs = configs;
        p.llm = Some(round);
        Ok(p)
    }
}
