//! `manifest.json`: what produced an output directory (logs, shard, devices, database,
//! strategy, keep/drop margin). `gemmtune merge` checks that shard directories belong to the
//! same log and finds their databases through it; `gemmtune export` finds the database.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::selection::{Criteria, WorkloadGemm};
use super::shard::Shard;
use super::WorkloadError;

pub const FILE: &str = "manifest.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub logs: Vec<String>,
    /// Identifies the workload: a hash of every GEMM's id, problem and calls.
    pub workload_fingerprint: String,
    pub gemms: usize,
    pub shard: Shard,
    pub devices: Vec<u32>,
    pub device_name: String,
    pub arch: String,
    pub backend: String,
    /// The results database (absolute when it could be resolved).
    pub db: PathBuf,
    pub strategy: String,
    pub criteria: Criteria,
    pub min_uplift: f64,
    /// For merged directories: the shard directories they came from.
    #[serde(default)]
    pub merged_from: Vec<PathBuf>,
    pub command_line: String,
}

/// The fingerprint of a workload: equal for the same logs, whatever a device measured.
pub fn workload_fingerprint(gemms: &[WorkloadGemm]) -> String {
    let mut h = Sha256::new();
    for g in gemms {
        h.update(format!("{}|{}|{}\n", g.id, g.problem.key(), g.calls).as_bytes());
    }
    h.finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Manifest {
    pub fn save(&self, dir: &Path) -> Result<(), WorkloadError> {
        let path = dir.join(FILE);
        let text = serde_json::to_string_pretty(self).map_err(|e| WorkloadError::file(&path, e))?;
        std::fs::write(&path, text + "\n")
            .map_err(|e| WorkloadError::io(format!("cannot write {}", path.display()), e))
    }

    pub fn load(dir: &Path) -> Result<Self, WorkloadError> {
        let path = dir.join(FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            WorkloadError::io(
                format!(
                    "{} is not a tune-log output directory (cannot read {})",
                    dir.display(),
                    path.display()
                ),
                e,
            )
        })?;
        serde_json::from_str(&text).map_err(|e| WorkloadError::file(&path, e))
    }

    /// The database path, resolved against the directory when it is relative.
    pub fn db_path(&self, dir: &Path) -> PathBuf {
        if self.db.is_absolute() {
            self.db.clone()
        } else {
            dir.join(&self.db)
        }
    }
}
