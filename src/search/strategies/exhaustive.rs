//! `exhaustive`: every valid config of a bounded space, in enumeration order, one batch per
//! round. Refuses spaces larger than its limit (fix parameters to bound them).

use crate::search::strategy::{Proposal, ProposeCtx, Strategy, StrategyError};
use crate::space::KernelConfig;

pub struct Exhaustive {
    /// Largest product of domain sizes enumerated.
    pub limit: u128,
    all: Option<Vec<KernelConfig>>,
    cursor: usize,
}

impl Exhaustive {
    pub fn new(limit: u128) -> Self {
        Exhaustive {
            limit,
            all: None,
            cursor: 0,
        }
    }
}

impl Strategy for Exhaustive {
    fn name(&self) -> &str {
        "exhaustive"
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        if self.all.is_none() {
            self.all = Some(ctx.space.enumerate(self.limit)?);
        }
        let all = self.all.as_deref().unwrap_or_default();
        let n = ctx.want(ctx.batch);
        let mut configs = Vec::with_capacity(n);
        while configs.len() < n && self.cursor < all.len() {
            let c = all[self.cursor];
            self.cursor += 1;
            if !ctx.history.contains(&c) {
                configs.push(c);
            }
        }
        let exhausted = configs.is_empty();
        Ok(Proposal {
            configs,
            exhausted,
            ..Default::default()
        })
    }
}
