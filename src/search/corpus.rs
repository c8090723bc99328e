//! What the measurements of other shapes teach the model-based search.
//!
//! A [`Corpus`] holds, per shape (a problem on a device), every config measured and its
//! median (or its failure). The CLI fills it from the results database; offline evaluation
//! from the other recorded sweeps (leaving the evaluated shape out). For a new shape it grows
//! a prior [`Forest`] once: every other shape's configs as [`features`] rows, each target the
//! log of the time over that shape's best (at most [`SLOWEST_Y`]; failures a step slower than
//! its slowest), each
//! row weighted by how much its shape is like the new one ([`Corpus::similarity`]: dims,
//! layout, types, device), so a new shape starts from what similar shapes taught. The best
//! configs of the most similar shapes are also offered as candidates to try
//! ([`Corpus::transfers`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::features::{self, COUNT};
use super::forest::{Forest, ForestOptions, Rows};
use crate::device::replay::Dataset;
use crate::hw::HwSpec;
use crate::problem::GemmProblem;
use crate::space::KernelConfig;

/// How much slower than a shape's slowest timed config a failed config counts (log scale).
pub const FAILURE_PENALTY: f64 = 0.4;
/// The prior's targets stop at twice the shape's best (log scale): which of two configs is
/// 3x or 5x slower does not matter to a search, and left in, those differences would take
/// the trees' splits from the near-best configs that do.
pub const SLOWEST_Y: f64 = std::f64::consts::LN_2;
/// Rows at most in a prior's training set (drawn by weight when there are more).
const PRIOR_ROWS_MAX: usize = 30_000;
/// Rows per shape that carry the shape's full weight; larger shapes share it.
const SHAPE_ROWS_FULL: f64 = 400.0;

/// Every measured config of one problem on one device.
#[derive(Debug, Clone)]
pub struct ShapeRecords {
    pub problem: GemmProblem,
    pub hw: Arc<HwSpec>,
    /// The device's name: the same problem on two GPUs (or on the simulator) is two shapes.
    pub device: String,
    /// Each config with its median time, `None` when it failed.
    pub configs: Vec<(KernelConfig, Option<f64>)>,
}

impl ShapeRecords {
    /// A recorded sweep as one shape.
    pub fn from_dataset(d: &Dataset) -> Self {
        ShapeRecords {
            problem: d.header.problem.clone(),
            hw: Arc::new(d.header.hw.clone()),
            device: d.header.device.name.clone(),
            configs: d
                .records()
                .map(|(c, o)| {
                    let median = o
                        .samples()
                        .and_then(crate::bench::stats::Stats::of)
                        .map(|s| s.median_us);
                    (c, median)
                })
                .collect(),
        }
    }

    fn key(&self) -> String {
        format!("{}@{}", self.problem.key(), self.device)
    }

    /// The fastest median.
    pub fn best_us(&self) -> Option<f64> {
        self.configs
            .iter()
            .filter_map(|(_, m)| *m)
            .min_by(|a, b| a.total_cmp(b))
    }
}

/// The shapes a search can learn from, and the priors grown from them (kept per target).
#[derive(Default)]
pub struct Corpus {
    shapes: Vec<ShapeRecords>,
    priors: Mutex<HashMap<String, Option<Arc<Forest>>>>,
}

impl std::fmt::Debug for Corpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Corpus")
            .field("shapes", &self.shapes.len())
            .field("measurements", &self.measurements())
            .finish()
    }
}

impl Clone for Corpus {
    fn clone(&self) -> Self {
        Corpus::new(self.shapes.clone())
    }
}

impl Corpus {
    /// Shapes with at least one timed config; records of one shape given twice are merged.
    ///
    /// The shapes are kept in the order of their keys and each shape's configs in the order
    /// of their names, whatever order they came in: the prior's training rows, its bootstrap
    /// draws and the ties among transfers follow this order, and the caller may gather the
    /// shapes from a hash map (the CLI does), so without it two searches over the same
    /// database would learn different priors and propose different batches.
    pub fn new(shapes: Vec<ShapeRecords>) -> Self {
        let mut merged: Vec<ShapeRecords> = Vec::new();
        for s in shapes {
            match merged.iter_mut().find(|m| m.key() == s.key()) {
                Some(m) => m.configs.extend(s.configs),
                None => merged.push(s),
            }
        }
        merged.retain(|s| s.best_us().is_some());
        merged.sort_by_cached_key(|s| s.key());
        for s in &mut merged {
            // Stable: a config given twice keeps its measurements in the order they came.
            s.configs.sort_by_cached_key(|(c, _)| c.name());
        }
        Corpus {
            shapes: merged,
            priors: Mutex::new(HashMap::new()),
        }
    }

    pub fn shapes(&self) -> &[ShapeRecords] {
        &self.shapes
    }

    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }

    /// Configs measured, over every shape.
    pub fn measurements(&self) -> usize {
        self.shapes.iter().map(|s| s.configs.len()).sum()
    }

    /// The corpus without any shape of `problem` (on any device): leave-one-shape-out.
    pub fn without(&self, problem: &GemmProblem) -> Corpus {
        let key = problem.key();
        Corpus::new(
            self.shapes
                .iter()
                .filter(|s| s.problem.key() != key)
                .cloned()
                .collect(),
        )
    }

    /// How much a shape measured on `hw` (named `device`) is like `target` on `target_hw`, in
    /// (0, 1]: a Gaussian of the distance in log2 M, N, K and batch (one unit = a factor of
    /// four), halved per layout or type difference, and lower for another GPU (the simulator
    /// of the same GPU counts as half the GPU).
    pub fn similarity(
        shape: &GemmProblem,
        hw: &HwSpec,
        device: &str,
        target: &GemmProblem,
        target_hw: &HwSpec,
        target_device: &str,
    ) -> f64 {
        let d = |a: i64, b: i64| ((a.max(1) as f64).log2() - (b.max(1) as f64).log2()) / 2.0;
        let dims = d(shape.m, target.m).powi(2)
            + d(shape.n, target.n).powi(2)
            + d(shape.k, target.k).powi(2)
            + d(shape.batch, target.batch).powi(2);
        let mut s = (-dims / 2.0).exp();
        for differs in [
            shape.trans_a != target.trans_a,
            shape.trans_b != target.trans_b,
            shape.a_type != target.a_type,
            shape.d_type != target.d_type,
        ] {
            if differs {
                s *= 0.5;
            }
        }
        s *= if device == target_device {
            1.0
        } else if hw.name == target_hw.name {
            0.5
        } else if hw.vendor == target_hw.vendor {
            0.2
        } else {
            0.05
        };
        s.max(1e-3)
    }

    /// The prior for `target` on `hw` (a device named `device`): grown on the first call,
    /// kept for later ones (the seeds of an offline evaluation share it). `None` without data.
    pub fn prior(&self, target: &GemmProblem, hw: &HwSpec, device: &str) -> Option<Arc<Forest>> {
        let key = format!("{}@{device}", target.key());
        if let Some(p) = self.priors.lock().ok()?.get(&key) {
            return p.clone();
        }
        let grown = self.grow_prior(target, hw, device).map(Arc::new);
        if let Ok(mut cache) = self.priors.lock() {
            cache.insert(key, grown.clone());
        }
        grown
    }

    fn grow_prior(&self, target: &GemmProblem, hw: &HwSpec, device: &str) -> Option<Forest> {
        let mut rows = Rows::new(COUNT);
        for s in &self.shapes {
            let Some(best) = s.best_us() else { continue };
            let slowest = s
                .configs
                .iter()
                .filter_map(|(_, m)| *m)
                .fold(best, f64::max);
            let fail_y = ((slowest / best).ln() + FAILURE_PENALTY).min(SLOWEST_Y);
            let sim = Self::similarity(&s.problem, &s.hw, &s.device, target, hw, device);
            let w = sim * (SHAPE_ROWS_FULL / s.configs.len().max(1) as f64).min(1.0);
            let part = features::problem_features(&s.problem, &s.hw);
            for (c, m) in &s.configs {
                let y = m.map(|m| (m / best).ln().min(SLOWEST_Y)).unwrap_or(fail_y);
                rows.push(&features::features(&part, &s.problem, &s.hw, c), y, w);
            }
        }
        // The prior does not depend on the search's seed: the database is what it is.
        let mut rng = ChaCha8Rng::seed_from_u64(0x5EED_F0E5);
        let rows = thin(rows, PRIOR_ROWS_MAX, &mut rng);
        Forest::fit(&rows, &ForestOptions::default(), &mut rng)
    }

    /// The `per_shape` fastest configs of the `shapes` shapes most like `target`, most
    /// similar shape first (they may not all be valid for the target: the caller checks).
    pub fn transfers(
        &self,
        target: &GemmProblem,
        hw: &HwSpec,
        device: &str,
        shapes: usize,
        per_shape: usize,
    ) -> Vec<KernelConfig> {
        let mut ranked: Vec<(f64, &ShapeRecords)> = self
            .shapes
            .iter()
            .map(|s| {
                (
                    Self::similarity(&s.problem, &s.hw, &s.device, target, hw, device),
                    s,
                )
            })
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut out = Vec::new();
        for (_, s) in ranked.into_iter().take(shapes) {
            let mut timed: Vec<(KernelConfig, f64)> = s
                .configs
                .iter()
                .filter_map(|(c, m)| m.map(|m| (*c, m)))
                .collect();
            timed.sort_by(|a, b| a.1.total_cmp(&b.1));
            out.extend(timed.into_iter().take(per_shape).map(|(c, _)| c));
        }
        out
    }
}

/// At most `max` rows, drawn without replacement in proportion to weight (kept rows keep
/// their weights).
fn thin(rows: Rows, max: usize, rng: &mut ChaCha8Rng) -> Rows {
    use rand::Rng;
    if rows.len() <= max {
        return rows;
    }
    // Efraimidis-Spirakis: the `max` largest keys u^(1/w).
    let mut keyed: Vec<(f64, usize)> = rows
        .w
        .iter()
        .enumerate()
        .map(|(i, w)| (rng.gen::<f64>().powf(1.0 / w.max(1e-12)), i))
        .collect();
    keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out = Rows::new(rows.width);
    for &(_, i) in keyed.iter().take(max) {
        out.push(
            &rows.x[i * rows.width..(i + 1) * rows.width],
            rows.y[i],
            rows.w[i],
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similar_shapes_weigh_more() {
        let hw = HwSpec::by_name("H200").unwrap();
        let t = GemmProblem::new(4096, 128, 4096);
        let sim = |p: &GemmProblem, dev: &str| Corpus::similarity(p, &hw, dev, &t, &hw, "H200");
        let near = sim(&GemmProblem::new(4096, 64, 4096), "H200");
        let far = sim(&GemmProblem::new(256, 4096, 256), "H200");
        let simulated = sim(&GemmProblem::new(4096, 64, 4096), "sim:H200");
        assert!(near > far * 10.0, "{near} {far}");
        assert!((simulated - near / 2.0).abs() < 1e-9);
        let mut nn = t.clone();
        nn.trans_a = crate::problem::Trans::N;
        assert!((sim(&nn, "H200") - 0.5).abs() < 1e-9);
    }
}
