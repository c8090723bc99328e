//! Bounded sweeps: every valid config of a narrowed space, for `bench --sweep` and datasets.
//!
//! The full space of a problem has millions of points, so a sweep starts from a preset that
//! fixes the minor parameters (store width, stagger, mapping, global read width) at their
//! defaults and keeps the structural ones free (instruction, tiles, depth, waves, pipeline
//! stages, split-K). The LDS layout comes in two fixed variants, swept side by side: padded
//! rows without swizzle (what the mma.sync path does best) and swizzled rows without padding
//! (the only layout of the wgmma path). `--fix NAME=V1,V2` narrows or widens any parameter. When more configs are
//! valid than the caller wants, half the budget goes to the configs the analytic model (the
//! sim backend's) ranks fastest and half to a seeded random draw of the rest, so the sweep is
//! both focused and able to find what the model gets wrong.

use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::device::sim::model_time_us;
use crate::space::{
    constraints, KernelConfig, ParamId, Space, SpaceError, FLAT_BATCH_FIXED, GEMV_FIXED,
};

/// Most points (valid or not) a sweep enumerates: about 45 s of constraint checks. The
/// whole bf16 space of a Hopper GPU (138 million points per LDS layout, with the pinned
/// parameters at their defaults) fits.
const SWEEP_POINTS_MAX: u128 = 160_000_000;

/// Parameters the preset pins to their defaults (PersistentKernel, ClusterN, ClusterM and
/// PackUnaligned: a sweep measures the tile kernels reading their operands in place;
/// `--fix PersistentKernel=0,1` adds the persistent ones, `--fix ClusterN=1,2` the clusters,
/// `--fix PackUnaligned=0,1,2,3` the copies into aligned rows, which would otherwise
/// quadruple the sweep of a problem with two such operands past SWEEP_POINTS_MAX).
pub const PINNED: [ParamId; 8] = [
    ParamId::StoreVectorWidth,
    ParamId::StaggerU,
    ParamId::WorkGroupMapping,
    ParamId::GlobalReadVectorWidth,
    ParamId::PersistentKernel,
    ParamId::ClusterN,
    ParamId::ClusterM,
    ParamId::PackUnaligned,
];

/// The two LDS layouts a sweep covers: (padding of A and B, swizzle).
const LDS_LAYOUTS: [(Option<i64>, i64); 2] = [(None, 0), (Some(0), 1)];

/// The sweep spaces: `space` with the minor parameters pinned, once per LDS layout (unless
/// the user fixes the layout), then the user's fixes applied.
pub fn sweep_spaces(space: &Space, fixes: &[(String, String)]) -> Result<Vec<Space>, SpaceError> {
    // The paths to sweep: the tile kernels, the GEMV kernels (N up to 8), the flat batch
    // kernels (many small batches), or those a `--fix Gemv=` or `--fix FlatBatch=` names.
    let mut paths = space.clone();
    for (name, values) in fixes {
        if matches!(
            ParamId::from_name(name),
            Some(ParamId::Gemv | ParamId::FlatBatch)
        ) {
            paths.fix(name, values)?;
        }
    }
    let takes = |id: ParamId, v: i64| paths.domain(id).contains(v);
    let mut out = Vec::new();
    if takes(ParamId::Gemv, 0) && takes(ParamId::FlatBatch, 0) {
        out.extend(layout_spaces(&space.tiles_only(), space, fixes)?);
    }
    if takes(ParamId::Gemv, 1) && takes(ParamId::FlatBatch, 0) {
        if let Some(gemv) = space.gemv_only() {
            out.push(family_sweep_space(gemv, fixes, &GEMV_FIXED)?);
        }
    }
    if (takes(ParamId::FlatBatch, 1) || takes(ParamId::FlatBatch, 2)) && takes(ParamId::Gemv, 0) {
        if let Some(flat) = space.flat_batch_only() {
            out.push(family_sweep_space(flat, fixes, &FLAT_BATCH_FIXED)?);
        }
    }
    Ok(out)
}

/// A sweep of GEMV or flat batch kernels (`fixed` the parameters the path ignores):
/// every parameter the path reads stays free (a GEMV's vectors included: unaligned leading
/// dimensions need narrow ones); the user's fixes narrow it (`--fix FlatBatch=2` to the staged
/// form), except those of parameters the path ignores and those none of whose values it takes (`--fix MT1=64` or `--fix PGR=8,12`
/// are about the tile kernels of the same sweep).
fn family_sweep_space(
    mut s: Space,
    fixes: &[(String, String)],
    fixed: &[(ParamId, i64)],
) -> Result<Space, SpaceError> {
    for (name, values) in fixes {
        let ignored =
            ParamId::from_name(name).is_some_and(|id| fixed.iter().any(|(f, _)| *f == id));
        if ignored {
            continue;
        }
        let mut narrowed = s.clone();
        match narrowed.fix(name, values) {
            Ok(()) => s = narrowed,
            Err(SpaceError::BadValue { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(s)
}

/// The tile kernels' sweep spaces, one per LDS layout unless the user fixes the layout.
fn layout_spaces(
    space: &Space,
    full: &Space,
    fixes: &[(String, String)],
) -> Result<Vec<Space>, SpaceError> {
    let layout_fixed = fixes.iter().any(|(name, _)| {
        matches!(
            ParamId::from_name(name),
            Some(ParamId::LdsPadA | ParamId::LdsPadB | ParamId::LdsSwizzle)
        )
    });
    let layouts: &[(Option<i64>, i64)] = if layout_fixed {
        &LDS_LAYOUTS[..1]
    } else {
        &LDS_LAYOUTS
    };
    layouts
        .iter()
        .map(|&(pad, swizzle)| {
            let mut s = space.clone();
            for p in [ParamId::LdsPadA, ParamId::LdsPadB] {
                let v = pad.unwrap_or(s.domain(p).default);
                s.domain_mut(p).restrict(&[v]);
            }
            s.domain_mut(ParamId::LdsSwizzle).restrict(&[swizzle]);
            sweep_space(&s, full, fixes)
        })
        .collect()
}

/// One sweep space: `s` with the minor parameters pinned, then the user's fixes applied
/// (a fix may widen a pinned parameter again, back to its domain in `full`).
fn sweep_space(s: &Space, full: &Space, fixes: &[(String, String)]) -> Result<Space, SpaceError> {
    let mut s = s.clone();
    let space = full;
    for p in PINNED {
        let d = s.domain(p).default;
        s.domain_mut(p).restrict(&[d]);
    }
    // Tiles wider than 256 columns are for N past 256, where one of them covers N with
    // warpgroups side by side sharing A: the preset keeps the narrowest that does. All of
    // them would double the sweep (276 million points for 4096^3 on an H200, past
    // SWEEP_POINTS_MAX); so would the warpgroup path's widths of an odd multiple of 8 (the
    // one-wave starts measure those): the preset keeps steps of 16, the GEMV's 1-8 columns
    // and, of the wide ones, the one that covers N. `--fix MacroTile1=...` asks for others.
    let n = s.problem.n;
    let widths = &s.domain(ParamId::MacroTile1).values;
    let covering = widths
        .iter()
        .copied()
        .filter(|&v| v > 256 && v >= n && v % 16 == 0)
        .min();
    let keep: Vec<i64> = widths
        .iter()
        .copied()
        .filter(|&v| v <= 8 || (v <= 256 && v % 16 == 0) || Some(v) == covering)
        .collect();
    s.domain_mut(ParamId::MacroTile1).restrict(&keep);
    // Three warpgroups along M (WavesM 12) would add a quarter to the sweep of N past 128
    // (184 million points for 4096x300x4096); the start that needs them measures them, and
    // `--fix WavesM=12` asks for them.
    leave_out(
        &mut s,
        ParamId::WavesM,
        i64::from(constraints::THREE_WARPGROUPS),
    );
    // K in five likewise (160 million points for 4096^3 with it): it is for 128-row tiles
    // of all of N whose count times five fills one wave, which the split start measures
    // (`Space::full_n_split_start`); `--fix GlobalSplitU=5` asks for it.
    leave_out(&mut s, ParamId::GlobalSplitU, 5);
    // 320-row tiles likewise: they are for a producer warpgroup's two warpgroups side by side,
    // which the large-tile start measures (`Space::big_tile_wave_starts`); `--fix
    // MacroTile0=320` asks for them.
    leave_out(&mut s, ParamId::MacroTile0, 320);
    for (name, values) in fixes {
        // A fix may widen a pinned parameter again: start from the full domain. Which path
        // is swept was settled by `sweep_spaces`.
        match ParamId::from_name(name) {
            Some(ParamId::Gemv) => continue,
            Some(id) => *s.domain_mut(id) = space.domain(id).clone(),
            None => {}
        }
        s.fix(name, values)?;
    }
    Ok(s)
}

/// `s` without `value` of parameter `id`: the preset leaves it out.
fn leave_out(s: &mut Space, id: ParamId, value: i64) {
    let kept: Vec<i64> = s
        .domain(id)
        .values
        .iter()
        .copied()
        .filter(|&v| v != value)
        .collect();
    s.domain_mut(id).restrict(&kept);
}

/// Up to `max` valid configs of the sweep spaces (all of them when there are fewer).
pub fn sweep_configs(
    spaces: &[Space],
    max: usize,
    seed: u64,
) -> Result<Vec<KernelConfig>, SpaceError> {
    let mut all = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for s in spaces {
        for c in s.enumerate(SWEEP_POINTS_MAX)? {
            if seen.insert(c) {
                all.push(c);
            }
        }
    }
    let Some(space) = spaces.first() else {
        return Ok(all);
    };
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
        let s = sweep_spaces(&space, &fixes).unwrap();
        assert_eq!(s.len(), 2, "both LDS layouts");
        let a = sweep_configs(&s, 40, 1).unwrap();
        assert_eq!(a.len(), 40);
        assert_eq!(a, sweep_configs(&s, 40, 1).unwrap());
        for c in &a {
            space.check(c).unwrap();
            assert_eq!(c.depth_u, 64);
            assert!([1, 2, 4].contains(&c.gsu));
        }
        // Every config of both layouts, when the budget allows: wgmma configs are among them.
        let all = sweep_configs(&s, 100_000, 1).unwrap();
        assert!(all.iter().any(|c| c.swizzle == 1 && c.mi == [64, 8, 16]));
        assert!(all.iter().any(|c| c.swizzle == 0 && c.mi == [16, 8, 16]));
        assert_eq!(
            sweep_spaces(&space, &[parse_fix("SW=0").unwrap()])
                .unwrap()
                .len(),
            1
        );
        assert!(sweep_spaces(&space, &[parse_fix("Bogus=1").unwrap()]).is_err());
    }

    #[test]
    fn tiny_n_sweeps_hold_tile_and_gemv_kernels_and_tile_fixes_leave_the_gemv_free() {
        let p = GemmProblem::new(4096, 1, 4096);
        let space = Space::for_problem(&p, &HwSpec::by_name("H100-SXM").unwrap());
        let fixes = vec![
            parse_fix("MT1=64").unwrap(),
            parse_fix("PGR=8,12").unwrap(),
            parse_fix("GSU=1,2").unwrap(),
            parse_fix("DepthU=64").unwrap(),
        ];
        let spaces = sweep_spaces(&space, &fixes).unwrap();
        let all = sweep_configs(&spaces, 100_000, 1).unwrap();
        let (gemv, tiles): (Vec<&KernelConfig>, Vec<&KernelConfig>) =
            all.iter().partition(|c| c.gv == 1);
        assert!(!gemv.is_empty() && !tiles.is_empty());
        assert!(tiles
            .iter()
            .all(|c| c.mt1 == 64 && [8, 12].contains(&c.pgr)));
        // GlobalSplitU is read by both families: the fix narrows the GEMV kernels too.
        assert!(gemv.iter().all(|c| c.gsu <= 2 && c.pgr <= 4 && c.mt1 <= 8));
        for c in &all {
            space.check(c).unwrap();
        }
        let only_tiles = sweep_spaces(&space, &[parse_fix("Gemv=0").unwrap()]).unwrap();
        assert!(only_tiles
            .iter()
            .all(|s| !s.domain(ParamId::Gemv).contains(1)));
    }

    #[test]
    fn wide_problems_sweep_tiles_up_to_256_columns_and_one_that_covers_n() {
        let h200 = HwSpec::by_name("H200").unwrap();
        for (n, wide) in [(4096, None), (300, Some(304)), (512, Some(512))] {
            let space = Space::for_problem(&GemmProblem::new(4096, n, 4096), &h200);
            for s in sweep_spaces(&space, &[]).unwrap() {
                assert!(s.size() <= SWEEP_POINTS_MAX, "N = {n}: {}", s.size());
                let widths = &s.domain(ParamId::MacroTile1).values;
                assert!(widths.contains(&256), "N = {n}: {widths:?}");
                assert_eq!(widths.iter().copied().find(|&v| v > 256), wide, "N = {n}");
            }
            // Asked for by name, the others come back.
            let fixed = sweep_spaces(&space, &[("MacroTile1".into(), "320".into())]).unwrap();
            assert_eq!(fixed[0].domain(ParamId::MacroTile1).values, vec![320]);
        }
        // Three warpgroups along M are offered for N = 300, left out of the preset, and
        // come back when asked for.
        let space = Space::for_problem(&GemmProblem::new(4096, 300, 4096), &h200);
        assert!(space.domain(ParamId::WavesM).contains(12));
        let preset = sweep_spaces(&space, &[]).unwrap();
        assert!(preset
            .iter()
            .all(|s| !s.domain(ParamId::WavesM).contains(12)));
        let asked = sweep_spaces(&space, &[("WavesM".into(), "12".into())]).unwrap();
        assert_eq!(asked[0].domain(ParamId::WavesM).values, vec![12]);
    }

    #[test]
    fn the_whole_hopper_space_fits_the_enumeration_bound() {
        // The seed shape, and K = 1000 (both operands' rows aligned to 16 bytes only, so
        // ClusterN and PackUnaligned have more than one value).
        for p in [
            GemmProblem::new(16032, 109, 16384),
            GemmProblem::new(1000, 1000, 1000),
        ] {
            let space = Space::for_problem(&p, &HwSpec::by_name("H200").unwrap());
            assert!(space.domain(ParamId::PackUnaligned).values.len() <= 4);
            for s in sweep_spaces(&space, &[]).unwrap() {
                eprintln!("sweep space of {} points", s.size());
                assert!(s.size() <= SWEEP_POINTS_MAX, "{}", s.size());
                assert_eq!(s.domain(ParamId::PackUnaligned).values, vec![0]);
            }
        }
        // Asked for, the copies come back.
        let space = Space::for_problem(
            &GemmProblem::new(1000, 1000, 1000),
            &HwSpec::by_name("H200").unwrap(),
        );
        let fixes = [
            ("PackUnaligned".to_string(), "1,3".to_string()),
            ("DepthU".to_string(), "64".to_string()),
        ];
        for s in sweep_spaces(&space, &fixes).unwrap() {
            assert_eq!(s.domain(ParamId::PackUnaligned).values, vec![1, 3]);
        }
    }
}
