//! [`Store`]: one open connection to a results database, and the writes.
//!
//! Opening checks what the file is *before* SQLite may write to it: the 100-byte header is
//! read directly, so a corrupt file, another kind of file or another application's database
//! is refused with its path and left byte-for-byte as it was. A gemmtune database (or a new
//! or empty file) is then opened in WAL mode with a busy timeout, so several worker
//! processes can write at once, and migrated forward ([`schema`]).
//!
//! Every write is one `BEGIN IMMEDIATE` transaction: a measurement is on disk as soon as
//! `record` returns, and a crash loses at most the config being measured.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, TransactionBehavior};

use super::outcome_json;
use super::records::{MeasurementExtra, MeasurementKey, NewRun, RunStatus};
use super::schema::{self, APPLICATION_ID, CURRENT_VERSION};
use super::StoreError;
use crate::device::Outcome;
use crate::measure::stats::Stats;
use crate::problem::GemmProblem;

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// An open results database.
pub struct Store {
    pub(super) conn: Connection,
    pub(super) path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// What the file header says the file is.
enum Existing {
    /// Missing or empty: SQLite creates a new database.
    New,
    Ours,
    /// A SQLite database without an application id: ours only if it has no tables.
    Unmarked,
}

impl Store {
    /// `<cache dir>/gemmtune/results.sqlite` (e.g. `~/.cache/gemmtune/results.sqlite`).
    pub fn default_path() -> Result<PathBuf, StoreError> {
        dirs::cache_dir()
            .map(|d| d.join("gemmtune").join("results.sqlite"))
            .ok_or(StoreError::NoCacheDir)
    }

    /// Opens (creating it and its directories if needed) and migrates a results database.
    ///
    /// Processes that open a new file at the same moment race on the journal-mode switch and
    /// the migration; SQLite reports some of those conflicts as "busy" at once, without its
    /// busy handler, so the whole opening sequence is retried with a short backoff.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref();
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        let mut wait = std::time::Duration::from_millis(10);
        loop {
            match Self::open_once(path) {
                Err(StoreError::Sqlite { source, .. })
                    if is_busy(&source) && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(std::time::Duration::from_millis(250));
                }
                other => return other,
            }
        }
    }

    fn open_once(path: &Path) -> Result<Store, StoreError> {
        let path = path.to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let existing = inspect(&path)?;
        let sql = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let mut conn = Connection::open(&path).map_err(sql)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        if let Existing::Unmarked = existing {
            let tables: i64 = conn
                .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
                .map_err(sql)?;
            if tables > 0 {
                return Err(StoreError::Foreign {
                    path,
                    application_id: 0,
                });
            }
        }
        let found = schema::version(&conn).map_err(sql)?;
        if found > CURRENT_VERSION {
            return Err(StoreError::TooNew {
                path,
                found,
                known: CURRENT_VERSION,
            });
        }
        if let Existing::New | Existing::Unmarked = existing {
            // Mark the file before switching to WAL: in rollback mode the header is written
            // to the main file at once, so a process opening it concurrently already sees
            // whose it is instead of an unmarked file.
            conn.pragma_update(None, "application_id", APPLICATION_ID as i32)
                .map_err(sql)?;
        }
        // WAL lets readers and one writer proceed together; NORMAL sync is durable across
        // process crashes in WAL mode, which is what workers need.
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(sql)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Unsupported {
                path,
                message: format!("the file system does not allow WAL mode (journal mode `{mode}`)"),
            });
        }
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(sql)?;
        if found < CURRENT_VERSION {
            schema::migrate_to(&mut conn, CURRENT_VERSION).map_err(sql)?;
        }
        Ok(Store { conn, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open database (always [`CURRENT_VERSION`] after `open`).
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        schema::version(&self.conn).map_err(|e| self.sql(e))
    }

    pub(super) fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// Starts a run; measurements refer to it.
    pub fn begin_run(&mut self, run: &NewRun) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT INTO runs (started_at, command_line, status, strategy, device)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    now_ms(),
                    run.command_line,
                    RunStatus::Running.as_str(),
                    run.strategy,
                    run.device
                ],
            )
            .map_err(|e| self.sql(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Marks a run as ended with `status`.
    pub fn finish_run(&mut self, run_id: i64, status: RunStatus) -> Result<(), StoreError> {
        let changed = self
            .conn
            .execute(
                "UPDATE runs SET finished_at = ?1, status = ?2 WHERE id = ?3",
                params![now_ms(), status.as_str(), run_id],
            )
            .map_err(|e| self.sql(e))?;
        if changed == 0 {
            return Err(StoreError::NoSuchRun(run_id));
        }
        Ok(())
    }

    /// Writes one measurement (and its problem and config, if new) in one transaction.
    /// Returns the measurement's id.
    pub fn record(
        &mut self,
        run_id: Option<i64>,
        key: &MeasurementKey,
        problem: &GemmProblem,
        outcome: &Outcome,
        extra: &MeasurementExtra,
    ) -> Result<i64, StoreError> {
        let encode = |what: &'static str| move |source| StoreError::Encode { what, source };
        let problem_json = serde_json::to_string(problem).map_err(encode("problem"))?;
        let outcome_text = outcome_json::encode(outcome).map_err(encode("outcome"))?;
        let samples_json = outcome
            .samples()
            .map(outcome_json::encode_samples)
            .transpose()
            .map_err(encode("samples"))?;
        let verification_json = outcome
            .verification()
            .map(outcome_json::encode_verification)
            .transpose()
            .map_err(encode("verification"))?;
        let stats = outcome.samples().and_then(Stats::of);

        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        tx.prepare_cached(
            "INSERT INTO problems (key, json) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING",
        )
        .and_then(|mut s| s.execute(params![key.problem_key, problem_json]))
        .map_err(sql)?;
        let problem_id: i64 = tx
            .prepare_cached("SELECT id FROM problems WHERE key = ?1")
            .and_then(|mut s| s.query_row([&key.problem_key], |r| r.get(0)))
            .map_err(sql)?;
        tx.prepare_cached("INSERT INTO configs (name) VALUES (?1) ON CONFLICT (name) DO NOTHING")
            .and_then(|mut s| s.execute([&key.config_name]))
            .map_err(sql)?;
        let config_id: i64 = tx
            .prepare_cached("SELECT id FROM configs WHERE name = ?1")
            .and_then(|mut s| s.query_row([&key.config_name], |r| r.get(0)))
            .map_err(sql)?;
        tx.prepare_cached(
            "INSERT INTO measurements (
                run_id, problem_id, config_id, device_name, arch, driver_version,
                compiler_version, source_hash, status, samples_json, min_us, median_us,
                mean_us, stddev_us, verification_json, outcome_json, recorded_at,
                compile_ms, registers, spill_bytes, shared_bytes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                     ?17, ?18, ?19, ?20, ?21)",
        )
        .and_then(|mut s| {
            s.execute(params![
                run_id,
                problem_id,
                config_id,
                key.device_name,
                key.arch,
                key.driver_version,
                key.compiler_version,
                key.source_hash,
                outcome.status(),
                samples_json,
                stats.map(|s| s.min_us),
                stats.map(|s| s.median_us),
                stats.map(|s| s.mean_us),
                stats.map(|s| s.stddev_us),
                verification_json,
                outcome_text,
                now_ms(),
                extra.compile_ms,
                extra.registers,
                extra.spill_bytes,
                extra.shared_bytes,
            ])
        })
        .map_err(sql)?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(sql)?;
        Ok(id)
    }
}

/// Reads the header of an existing file to decide whether SQLite may open it.
fn inspect(path: &Path) -> Result<Existing, StoreError> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Existing::New),
        Err(e) => return Err(io(e)),
    };
    let mut header = Vec::with_capacity(100);
    file.by_ref()
        .take(100)
        .read_to_end(&mut header)
        .map_err(io)?;
    if header.is_empty() {
        return Ok(Existing::New);
    }
    if header.len() < 100 || !header.starts_with(b"SQLite format 3\0") {
        return Err(StoreError::NotADatabase {
            path: path.to_path_buf(),
        });
    }
    // The application id is the big-endian u32 at offset 68 of the header.
    let app = u32::from_be_bytes([header[68], header[69], header[70], header[71]]);
    match app {
        APPLICATION_ID => Ok(Existing::Ours),
        0 => Ok(Existing::Unmarked),
        other => Err(StoreError::Foreign {
            path: path.to_path_buf(),
            application_id: other,
        }),
    }
}

pub(super) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Whether an SQLite error is a lock conflict that a retry can resolve.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}
