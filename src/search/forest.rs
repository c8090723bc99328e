//! A random-forest regressor, small and in plain Rust, for the model-based search.
//!
//! Each tree is grown on a weighted bootstrap of the rows (rows drawn with probability in
//! proportion to their weight, so rows of similar shapes count more), splitting at each node
//! on the best of a random subset of the features by weighted variance reduction. Split
//! points are searched over at most [`ForestOptions::bins`] quantile bins per feature (the
//! histogram method of LightGBM and XGBoost's `hist`): one pass over a node's rows per
//! feature, so a forest of a few thousand rows grows in milliseconds. A prediction is the
//! mean of the trees' leaves, and their spread is the model's uncertainty, which the
//! acquisition weighs against the predicted time (the way SMAC uses a forest in Bayesian
//! optimisation).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// How a forest is grown.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForestOptions {
    pub trees: usize,
    pub max_depth: usize,
    /// Fewest bootstrap draws a leaf keeps.
    pub min_leaf: f64,
    /// Features tried per split, as a fraction of all.
    pub feature_fraction: f64,
    /// Quantile bins per feature (at most 256).
    pub bins: usize,
}

impl Default for ForestOptions {
    fn default() -> Self {
        ForestOptions {
            trees: 40,
            max_depth: 14,
            min_leaf: 2.0,
            feature_fraction: 0.5,
            bins: 48,
        }
    }
}

/// Training rows: `width` features per row, a target and a weight each.
#[derive(Debug, Clone, Default)]
pub struct Rows {
    pub width: usize,
    pub x: Vec<f32>,
    pub y: Vec<f64>,
    pub w: Vec<f64>,
}

impl Rows {
    pub fn new(width: usize) -> Self {
        Rows {
            width,
            ..Default::default()
        }
    }

    pub fn push(&mut self, x: &[f32], y: f64, w: f64) {
        debug_assert_eq!(x.len(), self.width);
        self.x.extend_from_slice(x);
        self.y.push(y);
        self.w.push(w.max(0.0));
    }

    pub fn len(&self) -> usize {
        self.y.len()
    }

    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    fn row(&self, i: usize) -> &[f32] {
        &self.x[i * self.width..(i + 1) * self.width]
    }
}

#[derive(Debug, Clone, Copy)]
enum Node {
    Leaf(f64),
    /// Rows with `x[feature] <= threshold` go to `left`, the others to `right`.
    Split {
        feature: u32,
        threshold: f32,
        left: u32,
        right: u32,
    },
}

#[derive(Debug, Clone)]
struct Tree {
    nodes: Vec<Node>,
}

impl Tree {
    fn predict(&self, x: &[f32]) -> f64 {
        let mut i = 0usize;
        loop {
            match self.nodes[i] {
                Node::Leaf(v) => return v,
                Node::Split {
                    feature,
                    threshold,
                    left,
                    right,
                } => {
                    i = if x[feature as usize] <= threshold {
                        left as usize
                    } else {
                        right as usize
                    }
                }
            }
        }
    }
}

/// A grown forest.
#[derive(Debug, Clone)]
pub struct Forest {
    trees: Vec<Tree>,
    width: usize,
}

/// Per feature, the upper edges of its bins (a value `v` is in the first bin whose edge is
/// `>= v`; the last bin is open).
fn bin_edges(rows: &Rows, bins: usize) -> Vec<Vec<f32>> {
    (0..rows.width)
        .map(|f| {
            let mut v: Vec<f32> = (0..rows.len()).map(|i| rows.row(i)[f]).collect();
            v.sort_by(|a, b| a.total_cmp(b));
            v.dedup();
            if v.len() <= bins {
                // Midpoints between distinct values: every distinct value has a bin.
                v.windows(2).map(|w| (w[0] + w[1]) / 2.0).collect()
            } else {
                let mut edges: Vec<f32> = (1..bins).map(|q| v[q * v.len() / bins]).collect();
                edges.dedup();
                edges
            }
        })
        .collect()
}

/// Node statistics for one candidate split: weight and weighted target sum on the left.
struct Best {
    gain: f64,
    feature: usize,
    bin: usize,
}

impl Forest {
    /// Grows a forest on `rows`; `None` when there is nothing (with weight) to learn from.
    pub fn fit(rows: &Rows, opts: &ForestOptions, rng: &mut ChaCha8Rng) -> Option<Forest> {
        let total: f64 = rows.w.iter().sum();
        if rows.is_empty() || total <= 0.0 || rows.width == 0 {
            return None;
        }
        let edges = bin_edges(rows, opts.bins.clamp(2, 256));
        // Every row's bin per feature, row-major.
        let binned: Vec<u8> = (0..rows.len())
            .flat_map(|i| {
                rows.row(i)
                    .iter()
                    .zip(&edges)
                    .map(|(v, e)| e.partition_point(|edge| edge < v) as u8)
                    .collect::<Vec<_>>()
            })
            .collect();
        // Cumulative weights for drawing the bootstrap.
        let mut cumulative = Vec::with_capacity(rows.len());
        let mut acc = 0.0;
        for w in &rows.w {
            acc += w;
            cumulative.push(acc);
        }
        let per_split =
            ((rows.width as f64 * opts.feature_fraction).round() as usize).clamp(1, rows.width);
        let trees = (0..opts.trees.max(1))
            .map(|_| {
                let mut counts = vec![0f64; rows.len()];
                for _ in 0..rows.len() {
                    let r = rng.gen::<f64>() * acc;
                    let i = cumulative.partition_point(|c| *c <= r).min(rows.len() - 1);
                    counts[i] += 1.0;
                }
                let members: Vec<u32> = (0..rows.len() as u32)
                    .filter(|&i| counts[i as usize] > 0.0)
                    .collect();
                grow(
                    rows, &binned, &edges, &counts, members, opts, per_split, rng,
                )
            })
            .collect();
        Some(Forest {
            trees,
            width: rows.width,
        })
    }

    /// The mean prediction and the standard deviation across trees.
    pub fn predict(&self, x: &[f32]) -> (f64, f64) {
        debug_assert_eq!(x.len(), self.width);
        let n = self.trees.len() as f64;
        let (mut s, mut s2) = (0.0, 0.0);
        for t in &self.trees {
            let v = t.predict(x);
            s += v;
            s2 += v * v;
        }
        let mean = s / n;
        (mean, (s2 / n - mean * mean).max(0.0).sqrt())
    }
}

#[allow(clippy::too_many_arguments)]
fn grow(
    rows: &Rows,
    binned: &[u8],
    edges: &[Vec<f32>],
    counts: &[f64],
    mut members: Vec<u32>,
    opts: &ForestOptions,
    per_split: usize,
    rng: &mut ChaCha8Rng,
) -> Tree {
    let width = rows.width;
    let mut nodes = vec![Node::Leaf(0.0)];
    // (node index, range of `members`, depth)
    let mut work = vec![(0usize, 0usize, members.len(), 0usize)];
    let mut features: Vec<usize> = (0..width).collect();
    let mut hist_w = vec![0f64; 256];
    let mut hist_s = vec![0f64; 256];
    while let Some((node, lo, hi, depth)) = work.pop() {
        let part = &mut members[lo..hi];
        // The bootstrap drew rows in proportion to their weights: a row counts as often as
        // it was drawn.
        let weight = |i: u32| counts[i as usize];
        let (mut w, mut s) = (0.0, 0.0);
        for &i in part.iter() {
            w += weight(i);
            s += weight(i) * rows.y[i as usize];
        }
        let mean = if w > 0.0 { s / w } else { 0.0 };
        nodes[node] = Node::Leaf(mean);
        if depth >= opts.max_depth || w < 2.0 * opts.min_leaf || part.len() < 2 {
            continue;
        }
        // A random subset of the features (partial Fisher-Yates).
        for j in 0..per_split {
            let k = rng.gen_range(j..width);
            features.swap(j, k);
        }
        let parent = s * s / w;
        let mut best: Option<Best> = None;
        for &f in &features[..per_split] {
            let nb = edges[f].len() + 1;
            if nb < 2 {
                continue;
            }
            hist_w[..nb].iter_mut().for_each(|v| *v = 0.0);
            hist_s[..nb].iter_mut().for_each(|v| *v = 0.0);
            for &i in part.iter() {
                let b = binned[i as usize * width + f] as usize;
                let wi = weight(i);
                hist_w[b] += wi;
                hist_s[b] += wi * rows.y[i as usize];
            }
            let (mut wl, mut sl) = (0.0, 0.0);
            for b in 0..nb - 1 {
                wl += hist_w[b];
                sl += hist_s[b];
                let wr = w - wl;
                if wl < opts.min_leaf || wr < opts.min_leaf {
                    continue;
                }
                let sr = s - sl;
                let gain = sl * sl / wl + sr * sr / wr - parent;
                if gain > 1e-12 && best.as_ref().is_none_or(|x| gain > x.gain) {
                    best = Some(Best {
                        gain,
                        feature: f,
                        bin: b,
                    });
                }
            }
        }
        let Some(best) = best else { continue };
        // Partition the node's rows: bins <= best.bin to the left.
        let mut split = 0;
        for j in 0..part.len() {
            if (binned[part[j] as usize * width + best.feature] as usize) <= best.bin {
                part.swap(j, split);
                split += 1;
            }
        }
        if split == 0 || split == part.len() {
            continue;
        }
        let left = nodes.len();
        nodes.push(Node::Leaf(mean));
        nodes.push(Node::Leaf(mean));
        nodes[node] = Node::Split {
            feature: best.feature as u32,
            threshold: edges[best.feature][best.bin],
            left: left as u32,
            right: left as u32 + 1,
        };
        work.push((left, lo, lo + split, depth + 1));
        work.push((left + 1, lo + split, hi, depth + 1));
    }
    Tree { nodes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn learns_a_step_and_an_interaction_and_knows_where_it_is_unsure() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut rows = Rows::new(3);
        for _ in 0..600 {
            let x: [f32; 3] = [rng.gen(), rng.gen(), rng.gen()];
            // A step in x0, an interaction of x1 and x2, nothing from noise.
            let y = if x[0] > 0.5 { 2.0 } else { 0.0 }
                + if x[1] > 0.5 && x[2] > 0.5 { 1.0 } else { 0.0 };
            rows.push(&x, y, 1.0);
        }
        let forest = Forest::fit(&rows, &ForestOptions::default(), &mut rng).unwrap();
        let (hi, _) = forest.predict(&[0.9, 0.9, 0.9]);
        let (lo, _) = forest.predict(&[0.1, 0.1, 0.9]);
        assert!((hi - 3.0).abs() < 0.3, "{hi}");
        assert!(lo.abs() < 0.3, "{lo}");
        // Trees disagree most where the target jumps.
        let (_, sure) = forest.predict(&[0.2, 0.2, 0.2]);
        let (_, edge) = forest.predict(&[0.5, 0.2, 0.2]);
        assert!(edge > sure, "{edge} {sure}");
    }

    #[test]
    fn weights_decide_what_the_forest_believes() {
        // Two groups disagree about the same inputs; the heavier one wins.
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut rows = Rows::new(1);
        for i in 0..200 {
            let x = [(i % 10) as f32];
            rows.push(&x, 1.0, 10.0);
            rows.push(&x, 5.0, 0.1);
        }
        let forest = Forest::fit(&rows, &ForestOptions::default(), &mut rng).unwrap();
        let (m, _) = forest.predict(&[3.0]);
        assert!(m < 1.5, "{m}");
        assert!(Forest::fit(&Rows::new(2), &ForestOptions::default(), &mut rng).is_none());
    }
}
