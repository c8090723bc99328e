//! Summary statistics of timing samples and the derived rates shown in every report.

use serde::{Deserialize, Serialize};

use crate::hw::HwSpec;
use crate::problem::GemmProblem;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub min_us: f64,
    pub median_us: f64,
    pub mean_us: f64,
    pub stddev_us: f64,
    pub samples: usize,
}

impl Stats {
    /// Statistics of a non-empty sample set; `None` for an empty one.
    pub fn of(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(|a, b| a.total_cmp(b));
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        let mean = s.iter().sum::<f64>() / n as f64;
        let var = s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n.max(2) - 1) as f64;
        Some(Stats {
            min_us: s[0],
            median_us: median,
            mean_us: mean,
            stddev_us: var.sqrt(),
            samples: n,
        })
    }
}

/// Rates of one timing against a problem and a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    pub tflops: f64,
    /// Compulsory bytes / time.
    pub gbps: f64,
    /// Roofline bound / time, in percent.
    pub roofline_pct: f64,
}

impl Rates {
    pub fn of(time_us: f64, p: &GemmProblem, hw: &HwSpec) -> Rates {
        let t = time_us.max(1e-9) * 1e-6;
        let floor = hw.roofline_us(p.flops(), p.min_bytes(), p.a_type);
        Rates {
            tflops: p.flops() / t / 1e12,
            gbps: p.min_bytes() / t / 1e9,
            roofline_pct: floor / time_us.max(1e-9) * 100.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_samples() {
        let s = Stats::of(&[3.0, 1.0, 2.0, 4.0]).unwrap();
        assert_eq!(s.min_us, 1.0);
        assert_eq!(s.median_us, 2.5);
        assert_eq!(s.mean_us, 2.5);
        assert!((s.stddev_us - 1.290_994).abs() < 1e-5);
        assert!(Stats::of(&[]).is_none());
    }
}
