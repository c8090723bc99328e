//! The default kernel set `gemmtune bench` runs when no configs are given: the space's default
//! plus a few variants that cover the regimes a user meets (skinny N with split-K, larger and
//! smaller tiles, shallower pipelines). Each variant is repaired into the space, so the set is
//! valid for any problem and GPU.

use crate::space::{KernelConfig, ParamId, Space};

/// Parameter changes applied to the default config, in order of expected usefulness.
const VARIANTS: &[&[(ParamId, i64)]] = &[
    &[],
    &[(ParamId::GlobalSplitU, 2)],
    &[
        (ParamId::GlobalSplitU, 4),
        (ParamId::GlobalSplitUAlgorithm, 0),
    ],
    &[(ParamId::MacroTile0, 64)],
    &[(ParamId::MacroTile0, 256), (ParamId::DepthU, 32)],
    &[(ParamId::DepthU, 32), (ParamId::PrefetchGlobalRead, 4)],
    &[
        (ParamId::PrefetchGlobalRead, 2),
        (ParamId::PrefetchLocalRead, 0),
    ],
    &[(ParamId::WavesM, 4), (ParamId::WavesN, 1)],
];

/// Up to `max` distinct valid configs for the space's problem.
pub fn default_configs(space: &Space, max: usize) -> Vec<KernelConfig> {
    let Ok(base) = space.default_config() else {
        return Vec::new();
    };
    let mut out: Vec<KernelConfig> = Vec::new();
    // The space's other starts come right after the default.
    let extras = space.extra_starts();
    for changes in VARIANTS {
        let mut c = base;
        for (p, v) in *changes {
            p.set(&mut c, *v);
        }
        // A variant whose tiles all run at once takes the order that places them best, as
        // the starts do (the space's tile_order).
        if let Some(c) = space.repair(&c.canonical()).map(|c| space.tile_order(&c)) {
            if !out.contains(&c) {
                out.push(c);
            }
        }
        if out.len() >= max {
            break;
        }
        if changes.is_empty() {
            for c in &extras {
                if out.len() < max && !out.contains(c) {
                    out.push(*c);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::GemmProblem;

    #[test]
    fn default_set_is_valid_and_distinct() {
        for (_, hw) in HwSpec::builtin() {
            let s = Space::for_problem(&GemmProblem::new(16032, 109, 16384), &hw);
            let set = default_configs(&s, 8);
            assert!(set.len() >= 4, "{}: {}", hw.name, set.len());
            for c in &set {
                s.check(c).unwrap();
            }
        }
    }
}
