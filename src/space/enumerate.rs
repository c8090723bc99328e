//! Every valid config of a [`Space`], built by construction instead of checking every point
//! of the product of the domains (138 million per LDS layout for a Hopper bf16 problem).
//!
//! The parameters are assigned one at a time, depth first, in an order where the ones most
//! rules read come first (instruction, tiles, swap, waves, depth, layout, pipeline, split).
//! The parameters not yet assigned hold a *witness* completion (the defaults at first).
//! After each assignment the config goes through [`constraints::check`]; when the rule it
//! breaks reads only parameters already assigned ([`reads`]), no completion can satisfy that
//! rule and the whole subtree is skipped. When the broken rule reads a parameter not yet
//! assigned, the witness is changed one parameter at a time towards a completion that gets
//! further through the rules ([`constraints::RULE_ORDER`]), so that a later rule the
//! assignment already breaks shows; the children inherit the witness. A rule the table does
//! not know reads everything (never settled early), so a new rule costs speed, never
//! configs. Leaves that pass are the valid configs; they are returned in the order the
//! product enumeration had (domains in order, the last fastest), without duplicates after
//! canonicalisation.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use super::config::KernelConfig;
use super::constraints;
use super::param::{Domain, ParamId};
use crate::hw::HwSpec;
use crate::problem::GemmProblem;

use ParamId::*;

/// The assignment order (after the parameters with a single value): parameters read by many
/// rules first, the split before its algorithm (which canonicalisation resets without a
/// split), the free minor ones last.
const ORDER: &[ParamId] = &[
    // Whether a config is a GEMV or a flat batch decides which rules apply at all.
    Gemv,
    FlatBatch,
    MatrixInstruction,
    SwapAB,
    MacroTile0,
    MacroTile1,
    WavesM,
    WavesN,
    DepthU,
    LdsSwizzle,
    LdsPadA,
    LdsPadB,
    PrefetchLocalRead,
    PrefetchGlobalRead,
    GlobalSplitUAlgorithm,
    ProducerWarp,
    GlobalSplitU,
    GlobalReadVectorWidth,
    StoreVectorWidth,
    WorkGroupMapping,
    StaggerU,
];

/// [`ORDER`], then any parameter it does not list (a new one is walked last, never left at
/// its default).
fn walk_order() -> Vec<ParamId> {
    ORDER
        .iter()
        .chain(ParamId::ALL.iter().filter(|p| !ORDER.contains(p)))
        .copied()
        .collect()
}

/// Subtrees to walk in parallel, at least (the first branching parameters' values).
const PARALLEL_ROOTS: usize = 16;

/// The parameters a rule of [`constraints::check`] reads (beside the problem and the GPU),
/// or `None` for a rule this table does not know. A superset is always safe. Whether a
/// config is stream-K depends on its split algorithm alone (canonicalisation resets the
/// algorithm only without a split, and never to stream-K), so rules that only ask that read
/// GlobalSplitUAlgorithm without GlobalSplitU.
pub(super) fn reads(rule: &str) -> Option<&'static [ParamId]> {
    Some(match rule {
        "gemv" => &[
            Gemv,
            MacroTile0,
            MacroTile1,
            MatrixInstruction,
            WavesM,
            WavesN,
            GlobalReadVectorWidth,
            PrefetchGlobalRead,
            GlobalSplitU,
            GlobalSplitUAlgorithm,
        ],
        "flat-batch" => &[
            FlatBatch,
            MacroTile0,
            MacroTile1,
            MatrixInstruction,
            WavesM,
            WavesN,
        ],
        "dtype" => &[MatrixInstruction],
        "matrix-instruction" => &[MatrixInstruction],
        "threads" => &[WavesM, WavesN],
        "alignment" => &[GlobalReadVectorWidth, MatrixInstruction],
        "store-alignment" => &[StoreVectorWidth],
        "swap-ab" => &[SwapAB, MatrixInstruction],
        "lds-layout" => &[LdsSwizzle, LdsPadA, LdsPadB],
        "tile-granularity" => &[MacroTile0, MacroTile1, DepthU],
        "tile-vs-problem" => &[MacroTile0, MacroTile1, SwapAB],
        "depth-u" => &[DepthU, MatrixInstruction],
        "global-read" => &[GlobalReadVectorWidth, DepthU],
        "store" => &[StoreVectorWidth, MacroTile0],
        "range" => &[
            PrefetchGlobalRead,
            PrefetchLocalRead,
            LdsSwizzle,
            MatrixInstruction,
            WavesM,
        ],
        "wave-tile" => &[MacroTile0, MacroTile1, WavesM, WavesN, MatrixInstruction],
        "positive" => &[
            MacroTile0,
            MacroTile1,
            DepthU,
            WavesM,
            WavesN,
            GlobalSplitU,
            WorkGroupMapping,
            GlobalReadVectorWidth,
            StoreVectorWidth,
            PrefetchGlobalRead,
        ],
        "wgmma" => &[
            MatrixInstruction,
            LdsSwizzle,
            LdsPadA,
            LdsPadB,
            MacroTile0,
            MacroTile1,
            PrefetchLocalRead,
            PrefetchGlobalRead,
            WavesM,
            WavesN,
            SwapAB,
            DepthU,
        ],
        "lds" => &[
            MacroTile0,
            MacroTile1,
            DepthU,
            PrefetchGlobalRead,
            LdsPadA,
            LdsPadB,
            MatrixInstruction,
            GlobalSplitUAlgorithm,
            PersistentKernel,
        ],
        "persistent" => &[
            PersistentKernel,
            MatrixInstruction,
            ProducerWarp,
            GlobalSplitU,
            GlobalSplitUAlgorithm,
            MacroTile1,
        ],
        "transpose-lds" => &[
            TransposeLds,
            LdsPadA,
            LdsPadB,
            DepthU,
            MatrixInstruction,
            WavesM,
            WavesN,
        ],
        "pack-unaligned" => &[PackUnaligned, MatrixInstruction],
        // The kernel that walks batches, and the copies before it (which read the tile and
        // its warpgroups where an M- or N-major operand's chunks decide them).
        "launch-grid" => &[
            Gemv,
            PersistentKernel,
            GlobalSplitUAlgorithm,
            PackUnaligned,
            PackMnMajor,
            MatrixInstruction,
            MacroTile0,
            MacroTile1,
            WavesM,
            WavesN,
        ],
        "pack-mn-major" => &[PackMnMajor, MatrixInstruction, Gemv],
        "cluster" => &[
            ClusterN,
            ClusterM,
            PackUnaligned,
            MatrixInstruction,
            ProducerWarp,
            GlobalSplitU,
            GlobalSplitUAlgorithm,
            MacroTile0,
            MacroTile1,
            WavesM,
            WavesN,
            SwapAB,
        ],
        "split-k" => &[
            GlobalSplitU,
            GlobalSplitUAlgorithm,
            DepthU,
            MacroTile0,
            MacroTile1,
            WavesM,
            WavesN,
            PrefetchGlobalRead,
        ],
        "registers" | "producer-warp" => &[
            MacroTile0,
            MacroTile1,
            WavesM,
            WavesN,
            MatrixInstruction,
            DepthU,
            GlobalReadVectorWidth,
            PrefetchGlobalRead,
            PrefetchLocalRead,
            GlobalSplitUAlgorithm,
            ProducerWarp,
            PersistentKernel,
        ],
        _ => return None,
    })
}

/// What the construction reads of a space (`tuning_space::Space` hands it over): the
/// parameter domains in the space's order, the config the unassigned parameters hold, and
/// the problem and GPU the rules judge by.
pub(super) struct SpaceView<'a> {
    pub domains: &'a [Domain],
    pub start: KernelConfig,
    pub problem: &'a GemmProblem,
    pub hw: &'a HwSpec,
}

impl SpaceView<'_> {
    fn domain(&self, id: ParamId) -> &Domain {
        self.domains
            .iter()
            .find(|d| d.id == id)
            .expect("every ParamId has a domain")
    }
}

/// Every valid config of `space`, in the product enumeration's order.
pub(super) fn valid_configs(space: &SpaceView) -> Vec<KernelConfig> {
    construct(space).0
}

/// The valid configs and how many times [`constraints::check`] ran to find them.
fn construct(space: &SpaceView) -> (Vec<KernelConfig>, u64) {
    // Parameters with one value cost no branching: assigned first, they settle the rules
    // that read them from the start.
    let mut domains: Vec<(ParamId, &[i64])> = walk_order()
        .into_iter()
        .map(|id| (id, space.domain(id).values.as_slice()))
        .collect();
    domains.sort_by_key(|(_, values)| values.len() > 1);
    if domains.iter().any(|(_, v)| v.is_empty()) {
        return (Vec::new(), 0);
    }
    // The subtrees below the first few branching parameters are walked in parallel.
    let mut roots = vec![(space.start, 0u32)];
    let mut depth = 0;
    while depth < domains.len() && roots.len() < PARALLEL_ROOTS {
        let (id, values) = domains[depth];
        roots = roots
            .into_iter()
            .flat_map(|(c, assigned)| {
                values.iter().map(move |&v| {
                    let mut c = c;
                    id.set(&mut c, v);
                    (c, assigned | bit(id))
                })
            })
            .collect();
        depth += 1;
    }
    let walks: Vec<(Vec<(KernelConfig, KernelConfig)>, u64)> = roots
        .into_par_iter()
        .map(|(config, assigned)| {
            let mut walk = Walk {
                space,
                domains: &domains,
                config,
                assigned,
                rules: HashMap::new(),
                found: Vec::new(),
                checks: Cell::new(0),
            };
            walk.descend(depth);
            (walk.found, walk.checks.get())
        })
        .collect();
    let checks = walks.iter().map(|(_, n)| n).sum();
    let mut found: Vec<(KernelConfig, KernelConfig)> =
        walks.into_iter().flat_map(|(f, _)| f).collect();
    // The product enumeration's order: by each parameter's value index, domains in order.
    let index_of = |id: ParamId, c: &KernelConfig| {
        let v = id.get(c);
        space
            .domain(id)
            .values
            .iter()
            .position(|x| *x == v)
            .unwrap_or(usize::MAX)
    };
    found.sort_by_cached_key(|(raw, _)| {
        space
            .domains
            .iter()
            .map(|d| index_of(d.id, raw))
            .collect::<Vec<_>>()
    });
    let mut seen = HashSet::new();
    let valid = found
        .into_iter()
        .map(|(_, c)| c)
        .filter(|c| seen.insert(*c))
        .collect();
    (valid, checks)
}

struct Walk<'a> {
    space: &'a SpaceView<'a>,
    domains: &'a [(ParamId, &'a [i64])],
    /// The assignment so far, the other parameters holding the witness (not canonical).
    config: KernelConfig,
    /// Bit `ParamId as usize` set when that parameter is assigned.
    assigned: u32,
    /// Per rule met so far: the parameters it reads (all bits when unknown), its position.
    rules: HashMap<&'static str, (u32, usize)>,
    /// Valid leaves: the assignment as made (for ordering) and its canonical config.
    found: Vec<(KernelConfig, KernelConfig)>,
    /// Configs checked so far.
    checks: Cell<u64>,
}

/// Witness changes tried per node before descending without a verdict.
const WITNESS_STEPS: usize = 4;

/// A parameter's bit in a set of parameters.
fn bit(id: ParamId) -> u32 {
    1 << id as usize
}

impl Walk<'_> {
    /// What [`reads`] says of `rule` as a bit set, and the rule's position in the order
    /// [`constraints::check`] applies them (how far a config breaking it got).
    fn rule(&mut self, rule: &'static str) -> (u32, usize) {
        *self.rules.entry(rule).or_insert_with(|| {
            let reads = reads(rule).map_or(u32::MAX, |ps| ps.iter().map(|p| bit(*p)).sum());
            let position = constraints::RULE_ORDER
                .iter()
                .position(|x| *x == rule)
                .unwrap_or(0);
            (reads, position)
        })
    }

    /// How far a config gets: the position of the rule it breaks, past all when it breaks
    /// none, just below that when the rule it breaks is settled.
    fn progress(&mut self, broken: Option<&'static str>) -> usize {
        match broken {
            None => usize::MAX,
            Some(r) if self.settled(r) => usize::MAX - 1,
            Some(r) => self.rule(r).1,
        }
    }

    fn broken(&self, c: &KernelConfig) -> Option<&'static str> {
        self.checks.set(self.checks.get() + 1);
        constraints::check(&c.canonical(), self.space.problem, self.space.hw)
            .err()
            .map(|v| v.rule)
    }

    /// `Some(rule)` when the assignment so far breaks `rule` whatever the completion; moves the
    /// witness on the way.
    fn settled_violation(&mut self) -> Option<&'static str> {
        for _ in 0..WITNESS_STEPS {
            let rule = self.broken(&self.config)?;
            if self.settled(rule) {
                return Some(rule);
            }
            // One unassigned parameter the rule reads, set to the value that gets furthest.
            let free = self.rule(rule).0 & !self.assigned;
            let mut best = (self.rule(rule).1, None);
            for &(id, values) in self.domains {
                if free & bit(id) == 0 {
                    continue;
                }
                for &v in values {
                    let mut c = self.config;
                    id.set(&mut c, v);
                    let broken = self.broken(&c);
                    let score = self.progress(broken);
                    if score > best.0 {
                        best = (score, Some((id, v)));
                    }
                }
            }
            let (id, v) = best.1?;
            id.set(&mut self.config, v);
        }
        None
    }

    fn descend(&mut self, depth: usize) {
        if depth == self.domains.len() {
            if self.broken(&self.config).is_none() {
                self.found.push((self.config, self.config.canonical()));
            }
            return;
        }
        if self.settled_violation().is_some() {
            return;
        }
        let (id, values) = self.domains[depth];
        let before = id.get(&self.config);
        self.assigned |= bit(id);
        for &v in values {
            id.set(&mut self.config, v);
            self.descend(depth + 1);
        }
        self.assigned &= !bit(id);
        id.set(&mut self.config, before);
    }

    /// Whether every parameter `rule` reads is assigned: then no completion passes it.
    fn settled(&mut self, rule: &'static str) -> bool {
        self.rule(rule).0 & !self.assigned == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{DataType, Trans};
    use crate::space::Space;

    /// The product enumeration this module replaces, for comparison on small spaces.
    fn by_filtering(space: &Space) -> Vec<KernelConfig> {
        let lens: Vec<usize> = space.domains.iter().map(|d| d.values.len()).collect();
        let mut idx = vec![0usize; lens.len()];
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        'outer: loop {
            let mut c = space.raw_default();
            for (d, &i) in space.domains.iter().zip(&idx) {
                d.id.set(&mut c, d.values[i]);
            }
            let c = c.canonical();
            if constraints::check(&c, &space.problem, &space.hw).is_ok() && seen.insert(c) {
                out.push(c);
            }
            for pos in (0..idx.len()).rev() {
                idx[pos] += 1;
                if idx[pos] < lens[pos] {
                    continue 'outer;
                }
                idx[pos] = 0;
            }
            return out;
        }
    }

    /// The work follows the valid configs, not the product of the domains: a skinny Hopper
    /// problem's sweep space (both LDS layouts, split-K and pipeline depth free) is built
    /// with a tenth of the checks that testing every point takes, at most (about a
    /// sixteenth here; a fortieth on the whole space, too slow for a debug test).
    #[test]
    fn construction_checks_a_small_fraction_of_the_points() {
        let hw = HwSpec::by_name("H200").unwrap();
        let mut space = Space::for_problem(&GemmProblem::new(2048, 64, 2048), &hw);
        space.fix("DepthU", "64").unwrap();
        space.fix("GlobalSplitU", "1,2,4,8").unwrap();
        for s in crate::bench::sweep::sweep_spaces(&space, &[]).unwrap() {
            let (valid, checks) = construct(&s.view());
            assert!(!valid.is_empty());
            let points = s.size() as u64;
            assert!(
                checks * 10 < points,
                "{checks} checks for {} valid configs among {points} points",
                valid.len()
            );
        }
    }

    #[test]
    fn every_parameter_is_walked_once() {
        let order = walk_order();
        assert_eq!(order.len(), ParamId::ALL.len());
        for p in ParamId::ALL {
            assert_eq!(order.iter().filter(|x| **x == p).count(), 1, "{p:?}");
        }
    }

    #[test]
    fn every_rule_is_in_the_table() {
        for rule in constraints::RULE_ORDER {
            assert!(reads(rule).is_some(), "{rule} reads unknown parameters");
        }
    }

    /// More batches than a grid's layers (the `launch-grid` rule): construction keeps the
    /// kernels that walk the batches, as filtering does.
    #[test]
    fn construction_keeps_the_batch_walking_and_folding_kernels_past_a_grids_layers() {
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem {
            batch: 70000,
            ..GemmProblem::new(64, 64, 64)
        };
        let mut s = Space::for_problem(&p, &hw);
        let free = [
            PersistentKernel,
            GlobalSplitUAlgorithm,
            GlobalSplitU,
            ProducerWarp,
            PrefetchGlobalRead,
            Gemv,
        ];
        // The rest pinned to a 64x64 tile's values, which the problem's 64x64 allows.
        let base = KernelConfig::parse(
            "MT64x64x64_MI64x8x16_WG4x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
        )
        .unwrap();
        for d in &mut s.domains {
            if !free.contains(&d.id) {
                d.restrict(&[d.id.get(&base)]);
            }
        }
        let want = by_filtering(&s);
        assert!(!want.is_empty());
        // Each walks the batches (persistent, stream-K) or folds them into its grid's y with
        // no reduction kernel after it; both kinds are there.
        let walks = |c: &KernelConfig| c.pk > 0 || c.gsu_algo == crate::space::GsuAlgo::StreamK;
        let folds = |c: &KernelConfig| c.pk == 0 && (c.gsu == 1 || c.sums_splits_in_kernel());
        assert!(want.iter().all(|c| walks(c) || folds(c)));
        assert!(want.iter().any(walks) && want.iter().any(|c| !walks(c)));
        assert_eq!(valid_configs(&s.view()), want);
    }

    /// The same configs in the same order as checking every point, on spaces small enough to
    /// check every point: both vendors, two layouts and types, skinny and square problems.
    /// Each case frees a few parameters over their whole domain and pins the rest to their
    /// defaults, so that every rule meets both assigned and unassigned parameters.
    #[test]
    fn construction_finds_exactly_what_filtering_finds() {
        let free_sets: [&[ParamId]; 4] = [
            &[
                MacroTile0,
                MacroTile1,
                MatrixInstruction,
                SwapAB,
                WavesM,
                GlobalSplitU,
            ],
            &[
                DepthU,
                PrefetchGlobalRead,
                PrefetchLocalRead,
                GlobalSplitUAlgorithm,
                GlobalSplitU,
                ProducerWarp,
            ],
            &[
                MacroTile1,
                WavesN,
                LdsSwizzle,
                LdsPadA,
                LdsPadB,
                GlobalReadVectorWidth,
                StoreVectorWidth,
            ],
            &[
                MacroTile0,
                DepthU,
                MatrixInstruction,
                PrefetchGlobalRead,
                StaggerU,
                WorkGroupMapping,
            ],
        ];
        let mut checked = 0;
        for hw in ["H200", "MI300X"] {
            let hw = HwSpec::by_name(hw).unwrap();
            for (m, n, k) in [(2048, 64, 2048), (4096, 4096, 4096), (1000, 37, 300)] {
                for (ta, t) in [("T", DataType::Bf16), ("N", DataType::F32)] {
                    let mut p = GemmProblem::new(m, n, k);
                    p.trans_a = ta.parse::<Trans>().unwrap();
                    p.a_type = t;
                    p.b_type = t;
                    p.fill_defaults();
                    let full = Space::for_problem(&p, &hw);
                    for free in free_sets {
                        let mut s = full.clone();
                        for d in &mut s.domains {
                            if !free.contains(&d.id) {
                                let v = d.default;
                                d.restrict(&[v]);
                            }
                        }
                        let want = by_filtering(&s);
                        assert_eq!(
                            valid_configs(&s.view()),
                            want,
                            "{} {} {free:?}",
                            hw.name,
                            p.label()
                        );
                        checked += want.len();
                    }
                }
            }
        }
        assert!(checked > 1000, "only {checked} valid configs compared");
    }
}
