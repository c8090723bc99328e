//! `model`: a surrogate model of kernel time, learned across shapes, proposes each batch.
//!
//! Per search:
//! 1. Candidates: every valid config when the space is small enough to list, otherwise the
//!    default, the structural starts ([`crate::space::Space::extra_starts`]), the best
//!    configs of the most similar shapes the database
//!    knows ([`Corpus::transfers`], repaired into this space) and random valid configs; each
//!    round adds the neighbourhoods of the best configs measured so far.
//! 2. The prior: a random forest grown on every other shape's measurements, weighted towards
//!    shapes like this one ([`Corpus::prior`]). It predicts the log of a config's time over
//!    its shape's best, with an uncertainty (the trees' spread).
//! 3. This shape's measurements correct it: how far the prior's ranking holds on them (a
//!    slope of the measured times on its predictions, shrunk towards trusting it) scales the
//!    prior, and a small forest learns what that leaves unexplained. Without a prior it
//!    learns the times themselves, and until there are [`MIN_LOCAL`] of them the pattern
//!    search proposes.
//! 4. The batch: the candidates of lowest confidence bound (predicted log time less
//!    [`EXPLORATION`] deviations), so a config predicted a little slower but much less certain
//!    can take a place; each config of the same tile family (tile, instruction, waves) already
//!    picked adds [`FAMILY_PENALTY`], so one wrong guess about the structure does not take
//!    the whole batch. The first batch also measures the space's default config and its
//!    structural starts, as the pattern search does, and the [`NEAR_DEFAULT`] moves from the
//!    default the model ranks best (one parameter stepped, or two coupled). Each later batch
//!    starts with the [`NEAR_BEST`] moves from the best config so far the model ranks best,
//!    then takes the pattern search's own moves (unranked neighbours of the best so far) up
//!    to [`LOCAL_SHARE`] of it, more as this shape's measurements contradict the prior
//!    ([`local_share`]), and is measured in order of predicted time, most promising first.
//!    The first batch stops after [`FIRST_PICKS`] of the model's own picks, and at half the
//!    batch where the starts are many: it is short, so that the batch which reacts to what
//!    the default and the starts measured comes early.
//!
//! A search is a function of the corpus, this shape's measurements and the seed: the corpus
//! keeps its shapes in one order whatever order they came in ([`Corpus::new`]), every forest
//! grows from a seeded generator, and ties are broken by the candidates' order.
//!
//! docs/search.md compares it with the other strategies on replayed sweeps, each judged on a
//! sweep it did not learn from.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::pattern::{wide_neighbors, PatternSearch};
use super::random::RandomSearch;
use crate::search::corpus::{Corpus, FAILURE_PENALTY};
use crate::search::features::{self, COUNT};
use crate::search::forest::{Forest, ForestOptions, Rows};
use crate::search::strategy::{Proposal, ProposeCtx, Strategy, StrategyError};
use crate::space::{KernelConfig, Space};

/// Timed configs of this shape needed before a model without a prior is trusted.
pub const MIN_LOCAL: usize = 8;
/// How many of this shape's measurements the prior's ranking is worth (see [`prior_slope`]).
pub const PRIOR_TRUST: f64 = 4.0;
/// How many deviations of doubt lower a candidate's score (the confidence bound): enough that
/// an uncertain config predicted a little slower can take a place, not so much that the
/// prior's best guesses lose theirs.
pub const EXPLORATION: f64 = 0.5;
/// Moves from the default config in the first batch: where the default is close to the
/// best (a well-chosen start), the best is usually a move or two away, which the prior,
/// learned on other shapes, may not rank first. A move steps one parameter, or moves one and
/// takes the adjacent step of a second that makes it valid (a shallower DepthU that frees
/// the LDS for one more prefetch stage): such coupled moves are often where the gain is, and
/// no single step reaches them.
pub const NEAR_DEFAULT: usize = 3;
/// Moves from the best config measured so far at the head of each later batch: most of
/// them share the incumbent's tile family, so under the family penalty alone its close
/// neighbourhood waits behind configs of other families, though a move or two from the best
/// so far is where the last few percent usually are.
pub const NEAR_BEST: usize = 2;
/// The share of each later batch taken by moves around the best so far: the model's
/// [`NEAR_BEST`], then the moves the pattern search would make next (untried neighbours of
/// the best configs, in random order), up to this fraction of the batch.
/// The model ranks a neighbourhood by what other shapes taught it; where this shape differs,
/// the unranked moves still find what the pattern search finds. Tuned on an H200 (32 configs
/// a round) from a database of five skinny shapes, with only its own [`NEAR_BEST`] moves the
/// model came within 2% of the best later than the pattern search on five of eight new
/// shapes (square NN, mid-size, 14336x96x4096): the pattern search's second round measures
/// the whole neighbourhood of its best, the model's measured two of it.
pub const LOCAL_SHARE: f64 = 0.5;

/// The share of a later batch taken by moves around the best so far, given how far the prior
/// holds on this shape ([`prior_slope`]: 1 trusted, 0 not at all): [`LOCAL_SHARE`] while the
/// prior is trusted, growing to the whole batch as its trust goes. A prior this shape's
/// measurements contradict is scaled away, and what ranks the candidates then is a forest of
/// the few configs measured here, which says little about the moves from the best so far
/// (they share almost every feature with it). Measuring that neighbourhood whole, as the
/// pattern search does, is then the better use of the batch than the model's spread over
/// other families. On the replayed 16032x109x16384 MI300X sweep the prior (learned mostly on
/// 3584x128x18944) was scaled away after the first batch, the within-2% configs were moves
/// of the best so far (DepthU 32), and half a batch of them reached one in 10-23
/// evaluations (median 12); the whole neighbourhood, in 9-12 (median 10).
fn local_share(slope: f64) -> f64 {
    LOCAL_SHARE + (1.0 - LOCAL_SHARE) * (1.0 - slope.clamp(0.0, 1.0))
}

/// The share of the first batch the prior's own picks may fill beyond the default, the starts
/// and the moves around the default; the first batch holds nothing else (no unranked
/// neighbours of the default). Nothing this shape measured has checked the prior yet, and
/// every config more in the first batch delays the batch that reacts to what the default and
/// the starts measured. Where a start beats the default by far (stream-K on 5120x77x5120,
/// the swapped wave tile on 28672x512x8192, each 1.4-2x), the best is a move from that
/// start, which only the second batch can rank: on an H100 (32 configs a round, 40
/// evaluations, ten shapes absent from the database; docs/search-on-gpu.md), a first batch
/// of the default, the starts, its moves, half the default's neighbours and a quarter of
/// picks (24 configs) came within 2% of the best later than the pattern search on 2-3 of
/// the shapes and sooner on 2-3; this one (8-11 configs) sooner on 5, later on none. On the
/// replay datasets the sums of the medians went from 73 to 72 at 8 configs a round and from
/// 105 to 78 at 32.
pub const FIRST_PICKS: f64 = 0.125;

/// What each config of the same tile family already in the batch adds to a candidate's
/// score (log time: 0.1 is 10% slower).
pub const FAMILY_PENALTY: f64 = 0.1;

/// How the model-based search gathers and weighs candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelOptions {
    /// Spaces of at most this many points (valid or not) are listed whole.
    pub enumerate_max: u128,
    /// Random valid configs drawn for a space too large to list.
    pub random_candidates: usize,
    /// The most similar shapes whose best configs are candidates, and how many of each.
    pub transfer_shapes: usize,
    pub transfer_per_shape: usize,
    /// Measured configs whose neighbourhoods join the candidates each round.
    pub neighbourhoods: usize,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            enumerate_max: 300_000,
            random_candidates: 600,
            transfer_shapes: 12,
            transfer_per_shape: 4,
            neighbourhoods: 4,
        }
    }
}

/// A candidate config with its features and the prior's prediction.
struct Candidate {
    config: KernelConfig,
    x: [f32; COUNT],
    prior: (f64, f64),
}

pub struct ModelSearch {
    corpus: Option<Arc<Corpus>>,
    /// The device the search runs on (shapes measured on it count most).
    device: String,
    pub options: ModelOptions,
    prior: Option<Arc<Forest>>,
    candidates: Vec<Candidate>,
    known: HashSet<KernelConfig>,
    /// Features of measured configs (they may not be candidates).
    measured: HashMap<KernelConfig, [f32; COUNT]>,
    started: bool,
    /// Proposes while there is nothing to learn from.
    pattern: PatternSearch,
}

impl ModelSearch {
    pub fn new(corpus: Option<Arc<Corpus>>, device: impl Into<String>) -> Self {
        ModelSearch {
            corpus: corpus.filter(|c| !c.is_empty()),
            device: device.into(),
            options: ModelOptions::default(),
            prior: None,
            candidates: Vec::new(),
            known: HashSet::new(),
            measured: HashMap::new(),
            started: false,
            pattern: PatternSearch::default(),
        }
    }

    fn add(&mut self, ctx: &ProposeCtx<'_>, c: KernelConfig) {
        let c = c.canonical();
        if !self.known.insert(c) {
            return;
        }
        let part = features::problem_features(&ctx.space.problem, &ctx.space.hw);
        let x = features::features(&part, &ctx.space.problem, &ctx.space.hw, &c);
        let prior = self.prior.as_ref().map_or((0.0, 0.0), |f| f.predict(&x));
        self.candidates.push(Candidate {
            config: c,
            x,
            prior,
        });
    }

    /// The first round's candidates (and the prior, grown or taken from the corpus).
    fn start(&mut self, ctx: &mut ProposeCtx<'_>) {
        self.started = true;
        let space = ctx.space;
        if let Some(corpus) = &self.corpus {
            self.prior = corpus.prior(&space.problem, &space.hw, &self.device);
        }
        let mut initial: Vec<KernelConfig> = Vec::new();
        if space.size() <= self.options.enumerate_max {
            initial.extend(
                space
                    .enumerate(self.options.enumerate_max)
                    .unwrap_or_default(),
            );
        } else {
            initial.extend(space.default_config().ok());
            initial.extend(space.extra_starts());
            if let Some(corpus) = &self.corpus {
                for c in corpus.transfers(
                    &space.problem,
                    &space.hw,
                    &self.device,
                    self.options.transfer_shapes,
                    self.options.transfer_per_shape,
                ) {
                    let c = c.canonical();
                    if space.is_valid(&c) {
                        initial.push(c);
                    } else if let Some(r) = space.repair(&c) {
                        initial.push(r);
                    }
                }
            }
            initial.extend(RandomSearch::sample_fresh(
                ctx,
                self.options.random_candidates,
            ));
        }
        for c in initial {
            self.add(ctx, c);
        }
    }

    /// The model of this shape's measurements: of their residual from the prior, or (without
    /// a prior) of their log time over the best. `None` before anything is timed.
    fn local(&mut self, ctx: &mut ProposeCtx<'_>) -> Option<Local> {
        let timed: Vec<(KernelConfig, f64)> = ctx
            .history
            .iter()
            .filter_map(|e| e.median_us.map(|m| (e.config, m)))
            .collect();
        let best = timed.iter().map(|(_, m)| *m).fold(f64::INFINITY, f64::min);
        if !best.is_finite() {
            return None;
        }
        let slowest = timed.iter().map(|(_, m)| *m).fold(best, f64::max);
        let fail_y = (slowest / best).ln() + FAILURE_PENALTY;
        let part = features::problem_features(&ctx.space.problem, &ctx.space.hw);
        let mut points = Vec::new();
        for e in ctx.history.iter() {
            let x = *self.measured.entry(e.config).or_insert_with(|| {
                features::features(&part, &ctx.space.problem, &ctx.space.hw, &e.config)
            });
            let y = e.median_us.map(|m| (m / best).ln()).unwrap_or(fail_y);
            let prior = self.prior.as_ref().map_or(0.0, |f| f.predict(&x).0);
            points.push((x, y, prior));
        }
        let slope = if self.prior.is_some() {
            prior_slope(&points)
        } else {
            0.0
        };
        let mut rows = Rows::new(COUNT);
        for (x, y, prior) in &points {
            rows.push(x, y - slope * prior, 1.0);
        }
        let opts = ForestOptions {
            trees: 24,
            max_depth: 8,
            min_leaf: 1.0,
            feature_fraction: 0.6,
            bins: 32,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(ctx.rng.gen());
        Some(Local {
            slope,
            forest: Forest::fit(&rows, &opts, &mut rng)?,
        })
    }
}

/// What this shape's measurements say: how far the prior's ranking holds here (`slope`: 1
/// where its predictions track the measured times, 0 where they do not), and a forest of
/// what it leaves unexplained.
struct Local {
    slope: f64,
    forest: Forest,
}

/// The least-squares slope of the measured log times on the prior's predictions, shrunk
/// towards 1 (trust) with the weight of [`PRIOR_TRUST`] points and kept in [0, 1]: a prior
/// learned on other shapes, or another GPU, may rank this one's configs badly, and then this
/// shape's own measurements take over.
fn prior_slope(points: &[([f32; COUNT], f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let mp = points.iter().map(|p| p.2).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let cov: f64 = points.iter().map(|p| (p.2 - mp) * (p.1 - my)).sum();
    let var: f64 = points.iter().map(|p| (p.2 - mp).powi(2)).sum();
    let fitted = if var > 1e-12 { cov / var } else { 1.0 };
    ((n * fitted + PRIOR_TRUST) / (n + PRIOR_TRUST)).clamp(0.0, 1.0)
}

/// The moves from `c` ([`NEAR_DEFAULT`]): its single-parameter steps, and each parameter
/// moved to any value, alone or with the adjacent step of a second that makes it valid.
fn moves(space: &Space, c: &KernelConfig) -> Vec<KernelConfig> {
    let mut out = space.neighbors(c);
    out.extend(wide_neighbors(space, c));
    out
}

/// The `k` configs of `among` with the lowest confidence bound (predicted log time less
/// [`EXPLORATION`] deviations) that `batch` does not hold yet; ties keep the candidates'
/// order, so the pick is a function of the candidates and the model alone.
fn best_ranked(
    scored: &[(f64, f64, KernelConfig)],
    among: &HashSet<KernelConfig>,
    batch: &[KernelConfig],
    k: usize,
) -> Vec<KernelConfig> {
    let mut ranked: Vec<&(f64, f64, KernelConfig)> = scored
        .iter()
        .filter(|s| among.contains(&s.2) && !batch.contains(&s.2))
        .collect();
    ranked.sort_by(|a, b| (a.0 - EXPLORATION * a.1).total_cmp(&(b.0 - EXPLORATION * b.1)));
    ranked.into_iter().take(k).map(|s| s.2).collect()
}

/// Orders a batch by predicted log time, lowest first; configs without a prediction keep
/// their place ahead of the rest (stable: ties keep the order they were picked in).
fn by_promise(configs: &mut [KernelConfig], predicted: &HashMap<KernelConfig, f64>) {
    configs.sort_by(|a, b| {
        let key = |c: &KernelConfig| predicted.get(c).copied().unwrap_or(f64::NEG_INFINITY);
        key(a).total_cmp(&key(b))
    });
}

/// The tile structure a config shares with its close relatives.
fn family(c: &KernelConfig) -> (u32, u32, [u32; 3], [u32; 2]) {
    (c.mt0, c.mt1, c.mi, c.wg)
}

impl Strategy for ModelSearch {
    fn name(&self) -> &str {
        "model"
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        let n = ctx.want(ctx.batch);
        if !self.started {
            self.start(ctx);
        }
        let timed = ctx.history.ranked();
        if self.prior.is_none() && timed.len() < MIN_LOCAL {
            return self.pattern.propose(ctx);
        }
        // The neighbourhoods of the best so far join the candidates.
        let tops: Vec<KernelConfig> = timed
            .iter()
            .take(self.options.neighbourhoods)
            .map(|e| e.config)
            .collect();
        // The best's moves, one parameter or two coupled (see [`NEAR_BEST`]).
        let mut incumbent_moves: HashSet<KernelConfig> = HashSet::new();
        for (i, c) in tops.iter().enumerate() {
            let around = if i == 0 {
                let m = moves(ctx.space, c);
                incumbent_moves.extend(m.iter().copied());
                m
            } else {
                ctx.space.neighbors(c)
            };
            for nb in around {
                self.add(ctx, nb);
            }
        }
        // The first round ranks the default's moves ([`NEAR_DEFAULT`]): they join the
        // candidates here, as the best so far's do in later rounds. (They had not: where the
        // space is too large to list, the near-default picks were only those moves that the
        // random candidates or the transfers happened to hold.)
        let first_default = if ctx.history.is_empty() {
            ctx.space.default_config().ok()
        } else {
            None
        };
        // Added in the order `moves` lists them (not the set's), so that ties among the
        // candidates break the same way in every run.
        let default_move_list = first_default.map_or_else(Vec::new, |d| moves(ctx.space, &d));
        for &c in &default_move_list {
            self.add(ctx, c);
        }
        let default_moves: HashSet<KernelConfig> = default_move_list.into_iter().collect();
        let local = self.local(ctx);
        let scored: Vec<(f64, f64, KernelConfig)> = self
            .candidates
            .iter()
            .filter(|c| !ctx.history.contains(&c.config))
            .map(|c| {
                let (slope, (lm, ls)) = local
                    .as_ref()
                    .map_or((1.0, (0.0, 0.0)), |l| (l.slope, l.forest.predict(&c.x)));
                let (pm, ps) = c.prior;
                let ps = slope * ps;
                (slope * pm + lm, (ps * ps + ls * ls).sqrt(), c.config)
            })
            .collect();
        if scored.is_empty() {
            return self.pattern.propose(ctx);
        }
        let mut configs: Vec<KernelConfig> = Vec::with_capacity(n);
        // The first batch also measures the default config and the structural starts (split
        // and stream-K, wide N, persistent), as the pattern search does: the prior, learned
        // on other shapes, may never rank a schedule this shape needs and they do not have.
        // Then the moves from the default the model ranks best.
        if ctx.history.is_empty() {
            if let Some(d) = first_default {
                configs.push(d);
                configs.extend(
                    ctx.space
                        .extra_starts()
                        .into_iter()
                        .take(n.saturating_sub(1)),
                );
                // Within the batch: where the starts fill it, no moves.
                let room = n.saturating_sub(configs.len()).min(NEAR_DEFAULT);
                let near = best_ranked(&scored, &default_moves, &configs, room);
                configs.extend(near);
            }
        } else {
            // Each later batch starts from the best so far: its moves the model ranks best,
            // before the family penalty (which most of them would pay, sharing its tile
            // family) spreads the rest of the batch.
            let near = best_ranked(&scored, &incumbent_moves, &configs, NEAR_BEST.min(n));
            configs.extend(near);
        }
        // Then the pattern search's own moves, up to the local share of the batch (all of it
        // where this shape has contradicted the prior); the first batch takes none (see
        // [`FIRST_PICKS`]).
        // (Without a prior the local forest learns the times themselves: nothing to contradict.)
        let local_n = if ctx.history.is_empty() {
            0
        } else {
            let share = match (&self.prior, &local) {
                (Some(_), Some(l)) => local_share(l.slope),
                _ => LOCAL_SHARE,
            };
            (n as f64 * share).ceil() as usize
        };
        if configs.len() < local_n {
            // Untried: the pattern search leaves out what was measured.
            for c in self.pattern.candidates(ctx, local_n + configs.len()) {
                if configs.len() >= local_n {
                    break;
                }
                if !configs.contains(&c) {
                    configs.push(c);
                }
            }
        }
        let mut picks: HashMap<_, i32> = HashMap::new();
        for c in &configs {
            *picks.entry(family(c)).or_default() += 1;
        }
        // Greedy: the lowest confidence bound, raised per config of the same family already
        // picked; in the first batch only up to its share of it ([`FIRST_PICKS`]), and not
        // past half the batch where the default, the starts and their moves already fill
        // most of that (problems with many starts: the picks wait for the second batch).
        let fill = if ctx.history.is_empty() {
            let picks = (n as f64 * FIRST_PICKS).ceil() as usize;
            n.min(configs.len() + picks).min(configs.len().max(n / 2))
        } else {
            n
        };
        while configs.len() < fill {
            let next = scored
                .iter()
                .enumerate()
                .filter(|(_, (_, _, c))| !configs.contains(c))
                .map(|(i, (mu, sigma, c))| {
                    let k = picks.get(&family(c)).copied().unwrap_or(0) as f64;
                    (mu - EXPLORATION * sigma + FAMILY_PENALTY * k, i)
                })
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let Some((_, i)) = next else { break };
            let c = scored[i].2;
            *picks.entry(family(&c)).or_default() += 1;
            configs.push(c);
        }
        // A later batch was chosen for coverage (confidence bound, family penalty); it is
        // measured most promising first (lowest predicted time), so a budget that ends inside
        // it keeps the likeliest winners, and the family penalty does not put a near-twin of
        // the incumbent ahead of the move the model expects most from. The first batch keeps
        // the default config and the starts first, as the pattern search measures them: the
        // prior has not yet been checked against anything this shape measured.
        if !ctx.history.is_empty() {
            let predicted: HashMap<KernelConfig, f64> =
                scored.iter().map(|&(mu, _, c)| (c, mu)).collect();
            by_promise(&mut configs, &predicted);
        }
        Ok(Proposal::of(configs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_measured_most_promising_first() {
        let c = |s: &str| KernelConfig::parse(s).unwrap();
        let slow = c("MT64x64x64_MI64x8x16_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0");
        let fast =
            c("MT64x128x64_MI64x8x16_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU2K_WGM8_GRVW8_SVW8_SU0");
        let twin =
            c("MT64x128x64_MI64x8x16_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW8_SU0");
        let unknown =
            c("MT128x64x64_MI64x8x16_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0");
        let predicted: HashMap<KernelConfig, f64> = [(slow, 0.3), (fast, 0.02), (twin, 0.02)]
            .into_iter()
            .collect();
        let mut batch = vec![slow, twin, unknown, fast];
        by_promise(&mut batch, &predicted);
        // Unpredicted first, then by predicted time; equal predictions keep their pick order.
        assert_eq!(batch, vec![unknown, twin, fast, slow]);
    }

    #[test]
    fn a_contradicted_prior_hands_the_batch_to_the_neighbourhood() {
        assert_eq!(local_share(1.0), LOCAL_SHARE);
        assert_eq!(local_share(0.0), 1.0);
        assert!(local_share(0.5) > LOCAL_SHARE && local_share(0.5) < 1.0);
        // Out-of-range slopes (prior_slope clamps them) keep the share a fraction.
        assert_eq!(local_share(-1.0), 1.0);
        assert_eq!(local_share(2.0), LOCAL_SHARE);
    }

    #[test]
    fn the_prior_is_trusted_as_far_as_this_shape_bears_it_out() {
        let x = [0f32; COUNT];
        let tracks: Vec<_> = (0..8)
            .map(|i| (x, i as f64 * 0.1, i as f64 * 0.1))
            .collect();
        assert!((prior_slope(&tracks) - 1.0).abs() < 1e-9);
        // Times that ignore the prior: trust shrinks towards none as measurements add up.
        let flat = |n: usize| -> Vec<_> {
            (0..n)
                .map(|i| (x, if i % 2 == 0 { 0.2 } else { 0.0 }, (i / 2) as f64 * 0.1))
                .collect()
        };
        let few = prior_slope(&flat(4));
        let many = prior_slope(&flat(40));
        assert!(many < few && many < 0.2, "{few} {many}");
        // Opposite rankings: no trust at all, never a negative one.
        let inverted: Vec<_> = (0..8).map(|i| (x, -(i as f64), i as f64)).collect();
        assert_eq!(prior_slope(&inverted), 0.0);
    }
}
