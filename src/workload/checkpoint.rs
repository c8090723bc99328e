//! Per-GEMM checkpoints: `<out>/gemms/<id>.json`, written when a GEMM's tuning finishes.
//!
//! A rerun of `tune-log` into the same directory skips every GEMM whose checkpoint matches
//! (same problem, device model and tuning settings, see [`fingerprint`]) and tunes the rest;
//! the GEMM that was interrupted resumes its search from the measurements already in the
//! results database. Files are written to a temporary name and renamed, so a kill never
//! leaves half a checkpoint; an unreadable or mismatched one just means tuning again.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::pipeline::{TuneSettings, TunedGemm};
use super::WorkloadError;

/// A finished GEMM and the settings it was tuned with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub fingerprint: String,
    pub result: TunedGemm,
}

/// Everything that changes what tuning a GEMM produces: the problem, the device model and the
/// search and timing settings (not the keep/drop margin, which is applied when reporting).
pub fn fingerprint(settings: &TuneSettings, device_name: &str, problem_key: &str) -> String {
    let mut h = Sha256::new();
    for part in [
        problem_key.to_string(),
        device_name.to_string(),
        settings.strategy.clone(),
        // What the database held to learn from is data, not a setting (and the device is
        // named above).
        format!(
            "{:?}",
            crate::search::strategies::StrategyOptions {
                corpus: None,
                device: String::new(),
                ..settings.strategy_options.clone()
            }
        ),
        serde_json::to_string(&settings.search).unwrap_or_default(),
        serde_json::to_string(&settings.timing).unwrap_or_default(),
    ] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn dir(out: &Path) -> PathBuf {
    out.join("gemms")
}

fn path(out: &Path, id: usize) -> PathBuf {
    dir(out).join(format!("{id}.json"))
}

/// Writes a finished GEMM atomically. Failed GEMMs are not checkpointed: a rerun retries them.
pub fn save(out: &Path, fingerprint: &str, result: &TunedGemm) -> Result<(), WorkloadError> {
    if result.error.is_some() {
        return Ok(());
    }
    let d = dir(out);
    std::fs::create_dir_all(&d)
        .map_err(|e| WorkloadError::io(format!("cannot create {}", d.display()), e))?;
    let final_path = path(out, result.id);
    let tmp = final_path.with_extension(format!("json.tmp{}", std::process::id()));
    let text = serde_json::to_string_pretty(&Checkpoint {
        fingerprint: fingerprint.to_string(),
        result: result.clone(),
    })
    .map_err(|e| WorkloadError::file(&final_path, e))?;
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, &final_path))
        .map_err(|e| WorkloadError::io(format!("cannot write {}", final_path.display()), e))
}

/// The finished result of GEMM `id`, if its checkpoint exists and matches `fingerprint`.
pub fn load(out: &Path, id: usize, fingerprint: &str) -> Option<TunedGemm> {
    let text = std::fs::read_to_string(path(out, id)).ok()?;
    let c: Checkpoint = serde_json::from_str(&text).ok()?;
    (c.fingerprint == fingerprint && c.result.id == id).then_some(c.result)
}
