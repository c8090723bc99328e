//! Bounded sweeps: every valid config of a narrowed space, for `bench --sweep` and datasets.
//!
//! The full space of a problem has millions of points, so a sweep starts from a preset that
//! fixes the minor parameters (LDS padding, swizzle, store width, stagger, mapping, global read
//! width) at their defaults and keeps the structural ones free (tiles, depth, waves, pipeline
//! stages, split-K). `--fix NAME=V1,V2` narrows or widens any parameter. When more configs are
//! valid than the caller wants, half the budget goes to the configs the analytic model (the
//! sim backend's) ranks fastest and half to a seeded random draw of the rest, so the sweep is
//! both focused and able to find what the model gets wrong.

use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::device::sim::model_time_us;
use crate::space::{KernelConfig, ParamId, Space, SpaceError};

/// Parameters the preset pins to their defaults.
const PINNED: [ParamId; 7] = [
    ParamId::LdsPadA,
    ParamId::LdsPadB,
    ParamId::LdsSwizzle,
    ParamId::StoreVectorWidth,
    ParamId::StaggerU,
    ParamId::WorkGroupMapping,
    ParamId::GlobalReadVectorWidth,
];

/// The sweep space: `space` with the minor parameters pinned, then the user's fixes applied.
pub fn sweep_space(space: &Space, fixes: &[(String, String)]) -> Result<Space, SpaceError> {
    let mut s = space.clone();
    for p in PINNED {
        let d = s.domain(p).default;
        s.domain_mut(p).restrict(&[d]);
    }
    for (name, values) in fixes {
        // A fix may widen a pinned parameter again: start from the full domain.
        if let Some(id) = ParamId::from_name(name) {
            *s.domain_mut(id) = space.domain(id).clone();
        }
        s.fix(name, values)?;
    }
    Ok(s)
}

/// Up to `max` valid configs of the sweep space (all of them when there are fewer).
pub fn sweep_configs(
    space: &Space,
    max: usize,
    seed: u64,
) -> Result<Vec<KernelConfig>, SpaceError> {
    let all = space.enumerate(50_000_000)?;
    if all.len() <= max {
        return Ok(all);
    }
    let mut ranked: Vec<(f64, KernelConfig)> = all
        .iter()
        .map(|c| (model_time_us(c, &space.problem, &space.hw), *c))
        .collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
    let top = max / 2;
    let mut out: Vec<KernelConfig> = ranked[..top].iter().map(|(_, c)| *c).collect();
    let mut rest: Vec<KernelConfig> = ranked[top..].iter().map(|(_, c)| *c).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    rest.shuffle(&mut rng);
    out.extend(rest.into_iter().take(max - top));
    Ok(out)
}

/// Parses `NAME=V1,V2` as given to `--fix`.
pub fn parse_fix(s: &str) -> Option<(String, String)> {
    let (k, v) = s.split_once('=')?;
    Some((k.trim().to_string(), v.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::GemmProblem;

    #[test]
    fn sweep_is_valid_bounded_and_deterministic() {
        let p = GemmProblem::new(16032, 109, 16384);
        let space = Space::for_problem(&p, &HwSpec::by_name("H100-SXM").unwrap());
        let fixes = vec![
            parse_fix("DepthU=64").unwrap(),
            parse_fix("GSU=1,2,4").unwrap(),
        ];
        let s = sweep_space(&space, &fixes).unwrap();
        let a = sweep_configs(&s, 40, 1).unwrap();
        assert_eq!(a.len(), 40);
        assert_eq!(a, sweep_configs(&s, 40, 1).unwrap());
        for c in &a {
            s.check(c).unwrap();
            assert_eq!(c.depth_u, 64);
            assert!([1, 2, 4].contains(&c.gsu));
        }
        assert!(sweep_space(&space, &[parse_fix("Bogus=1").unwrap()]).is_err());
    }
}
