//! The results database (SQLite): runs, problems, configs and every measurement.
//!
//! Flow: the search driver opens a [`Store`], starts a run, and for each config first asks
//! [`Store::lookup`] whether an identical measurement exists (same device, arch, driver,
//! compiler, kernel-source hash, problem and config): if so the run reuses it (unless
//! forced); otherwise the config is measured and [`Store::record`] writes the whole
//! [`Outcome`](crate::device::Outcome) at once, in its own transaction. Reports read back
//! with the queries in `queries.rs`.
//!
//! Files: [`schema`] (versioned migrations), `handle.rs` (opening, checks and writes),
//! `queries.rs` (reads), [`records`] (row types), `outcome_json.rs` (lossless outcome JSON),
//! [`llm_rounds`] (what an LLM contributed to each search round), [`corpus`] (every kernel
//! measurement across problems, for the model-based search).

pub mod corpus;
mod handle;
pub mod llm_rounds;
mod outcome_json;
mod queries;
pub mod records;
pub mod schema;

pub use corpus::CorpusRow;
pub use handle::Store;
pub use llm_rounds::LlmRoundRow;
pub use records::{
    MeasurementExtra, MeasurementKey, NewRun, RunRecord, RunStatus, StoredMeasurement,
    VENDOR_PREFIX,
};

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong with the results database.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot create the directory {} for the results database: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read results database {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a SQLite database (corrupt, or another kind of file); it was left untouched", path.display())]
    NotADatabase { path: PathBuf },
    #[error("{} is a SQLite database of another application (application_id {application_id:#010x}, not gemmtune's); it was left untouched", path.display())]
    Foreign { path: PathBuf, application_id: u32 },
    #[error("{} has schema version {found} but this gemmtune knows only up to {known}; use a newer gemmtune or another database", path.display())]
    TooNew {
        path: PathBuf,
        found: u32,
        known: u32,
    },
    #[error("results database {}: {message}", path.display())]
    Unsupported { path: PathBuf, message: String },
    /// SQLite's own check failed, or a table is gone: nothing is written to such a file.
    #[error("results database {} is damaged ({detail}); nothing was written to it. Move it aside to start a new database there, or give another one with --db; `sqlite3 {} .recover | sqlite3 NEW.sqlite` salvages the readable rows", path.display(), path.display())]
    Damaged { path: PathBuf, detail: String },
    /// Some measurements of a run could not be written (the run is reported as failed).
    #[error("{count} measurement(s) could not be stored in {}: {first}", path.display())]
    Unstored {
        path: PathBuf,
        count: usize,
        first: String,
    },
    #[error("results database {}: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("results database {}: cannot decode the {what} of measurement {id}: {message}", path.display())]
    Decode {
        path: PathBuf,
        what: &'static str,
        id: i64,
        message: String,
    },
    #[error("cannot encode the {what} for the results database: {source}")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("run {0} does not exist in the results database")]
    NoSuchRun(i64),
    #[error("this system has no cache directory; give the results database path explicitly")]
    NoCacheDir,
}
