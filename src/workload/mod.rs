//! Workload tuning: every GEMM worth tuning in a hipBLASLt log, on one or many GPUs, on one or
//! many hosts, with the numbers to decide which tuned kernels to keep.
//!
//! Flow of `gemmtune tune-log` ([`tune::run`]):
//! 1. the logs are parsed and merged ([`crate::problem::log`]); each distinct GEMM gets a
//!    stable id (its first-seen position) and an owner shard ([`shard`]), and keeps the
//!    fields its log line asked for beyond the plain GEMM ([`log_fields`]); the lines that
//!    could not be read are kept for the report ([`unread`]);
//! 2. a [`pool::DevicePool`] opens one device context per `--devices` index
//!    ([`context`]: worker process, compiler, database connection);
//! 3. the baseline pass times the vendor library on every GEMM (through the pool), GEMMs that
//!    cannot be tuned get their reason, and [`selection`] weights each by calls x baseline
//!    time and keeps those above `--thr` / in the top K;
//! 4. the selected GEMMs this shard owns are tuned through the pool ([`pipeline`]): vendor
//!    time, search, the winner verified and re-timed beside the vendor library; each finished
//!    GEMM is written to a [`checkpoint`] so a rerun skips it, and every measurement is in the
//!    results database as it happens, so an interrupted GEMM resumes its search;
//! 5. [`record`] turns the results into rows and verdicts (kept / dropped / skipped), and
//!    [`outputs`] writes `workload.csv`, `raw_results.csv`, `final_results.csv`,
//!    `unread_lines.csv`, `summary.md` ([`summary`], [`chart`]) and the [`solutions`] file.
//!
//! `gemmtune merge` ([`merge`]) reads shard directories back (their CSVs, [`manifest`] and
//! databases) and writes the same outputs for the whole workload.

pub mod chart;
pub mod checkpoint;
pub mod context;
pub mod lock;
pub mod log_fields;
pub mod manifest;
pub mod merge;
pub mod outputs;
pub mod pipeline;
pub mod pool;
pub mod record;
pub mod selection;
pub mod shard;
pub mod solutions;
pub mod summary;
pub mod table;
pub mod tune;
pub mod unread;

use std::path::PathBuf;

use thiserror::Error;

pub use shard::Shard;

/// Errors of the workload layer (a GEMM that cannot be tuned is a verdict, not an error).
#[derive(Debug, Error)]
pub enum WorkloadError {
    /// Something the user typed or gave is not usable.
    #[error("{0}")]
    Usage(String),
    #[error("device {index}: {message}")]
    Device { index: u32, message: String },
    #[error("{0}")]
    Thread(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Log(#[from] crate::problem::log::LogError),
}

impl WorkloadError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        WorkloadError::Io {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn file(path: &std::path::Path, message: impl std::fmt::Display) -> Self {
        WorkloadError::File {
            path: path.to_path_buf(),
            message: message.to_string(),
        }
    }
}
