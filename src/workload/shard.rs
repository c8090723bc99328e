//! `--shard I/N`: which slice of a workload one host tunes.
//!
//! A GEMM belongs to shard `id % N`, where `id` is its first-seen position in the merged
//! log. The assignment depends only on the log, never on a measurement, so N hosts given the
//! same log split it into N disjoint slices that together cover every GEMM exactly once,
//! whatever their GPUs measure.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Shard `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// The whole workload.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// The shard that owns the GEMM with this id.
    pub fn owner(count: usize, id: usize) -> usize {
        id % count.max(1)
    }

    pub fn owns(&self, id: usize) -> bool {
        Shard::owner(self.count, id) == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("shard `{s}` must be I/N with 0 <= I < N (e.g. 0/4)");
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!(
            "1/3".parse::<Shard>().unwrap(),
            Shard { index: 1, count: 3 }
        );
        for bad in ["3/3", "1", "a/3", "0/0", "-1/2", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_partition_the_ids() {
        let shards: Vec<Shard> = (0..3).map(|i| Shard { index: i, count: 3 }).collect();
        for id in 0..50 {
            assert_eq!(shards.iter().filter(|s| s.owns(id)).count(), 1);
        }
        assert!((0..50).all(|id| Shard::ALL.owns(id)));
    }
}
