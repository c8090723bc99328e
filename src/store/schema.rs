//! The database schema as an ordered list of migrations.
//!
//! A database records its schema version in `PRAGMA user_version` and its owner in
//! `PRAGMA application_id`. Opening applies every migration newer than the recorded
//! version, in order, inside one `BEGIN IMMEDIATE` transaction that re-reads the version
//! first, so two processes opening the same new file at once cannot both apply a step.
//! Released steps are never edited: a schema change is a new entry at the end.

use rusqlite::{Connection, TransactionBehavior};

/// `GMTN`: marks a SQLite file as a gemmtune results database.
pub const APPLICATION_ID: u32 = u32::from_be_bytes(*b"GMTN");

/// One schema step.
pub struct Migration {
    /// The `user_version` after this step.
    pub version: u32,
    pub description: &'static str,
    pub sql: &'static str,
}

/// Every schema step, oldest first.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        description: "runs, problems, configs and measurements",
        sql: r#"
CREATE TABLE runs (
    id            INTEGER PRIMARY KEY,
    started_at    INTEGER NOT NULL,            -- unix milliseconds
    finished_at   INTEGER,
    command_line  TEXT NOT NULL,
    status        TEXT NOT NULL,               -- running | finished | failed | interrupted
    strategy      TEXT,
    device        TEXT
);
CREATE TABLE problems (
    id    INTEGER PRIMARY KEY,
    key   TEXT NOT NULL UNIQUE,                -- GemmProblem::key()
    json  TEXT NOT NULL                        -- the whole GemmProblem
);
CREATE TABLE configs (
    id    INTEGER PRIMARY KEY,
    name  TEXT NOT NULL UNIQUE                 -- canonical kernel name, or `vendor:<library>`
);
CREATE TABLE measurements (
    id                 INTEGER PRIMARY KEY,
    run_id             INTEGER REFERENCES runs(id),
    problem_id         INTEGER NOT NULL REFERENCES problems(id),
    config_id          INTEGER NOT NULL REFERENCES configs(id),
    device_name        TEXT NOT NULL,
    arch               TEXT NOT NULL,
    driver_version     TEXT NOT NULL,
    compiler_version   TEXT NOT NULL,
    source_hash        TEXT NOT NULL,
    status             TEXT NOT NULL,          -- Outcome::status()
    samples_json       TEXT,                   -- timing samples in microseconds
    min_us             REAL,
    median_us          REAL,
    mean_us            REAL,
    stddev_us          REAL,
    verification_json  TEXT,
    outcome_json       TEXT NOT NULL,          -- the whole Outcome
    recorded_at        INTEGER NOT NULL        -- unix milliseconds
);
CREATE INDEX measurements_by_key
    ON measurements(problem_id, config_id, device_name, arch);
"#,
    },
    Migration {
        version: 2,
        description:
            "kernel resources (compile time, registers, spills, shared memory) and report indexes",
        sql: r#"
ALTER TABLE measurements ADD COLUMN compile_ms REAL;
ALTER TABLE measurements ADD COLUMN registers INTEGER;
ALTER TABLE measurements ADD COLUMN spill_bytes INTEGER;
ALTER TABLE measurements ADD COLUMN shared_bytes INTEGER;
CREATE INDEX measurements_by_speed
    ON measurements(problem_id, device_name, status, median_us);
CREATE INDEX measurements_by_run ON measurements(run_id);
"#,
    },
    Migration {
        version: 3,
        description: "what an LLM contributed to each search round (llm_rounds)",
        sql: r#"
CREATE TABLE llm_rounds (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER REFERENCES runs(id),
    problem_key    TEXT NOT NULL,
    model          TEXT NOT NULL,
    round          INTEGER NOT NULL,
    requests       INTEGER NOT NULL,
    suggested      INTEGER NOT NULL,       -- configs the model suggested
    valid          INTEGER NOT NULL,       -- of them valid configs of the space
    from_llm       INTEGER NOT NULL,       -- configs of the batch from the model
    filled         INTEGER NOT NULL,       -- configs of the batch from the strategy filling in
    fell_back      INTEGER NOT NULL,       -- 1: the model contributed nothing this round
    input_tokens   INTEGER NOT NULL,
    output_tokens  INTEGER NOT NULL,
    wall_s         REAL NOT NULL,          -- time waiting on the model
    recorded_at    INTEGER NOT NULL        -- unix milliseconds
);
CREATE INDEX llm_rounds_by_run ON llm_rounds(run_id);
"#,
    },
];

/// The tables a database of schema `version` has (every version so far adds to version 1's).
pub fn tables_of(version: u32) -> &'static [&'static str] {
    if version == 0 {
        &[]
    } else {
        &["runs", "problems", "configs", "measurements"]
    }
}

/// The version a database has once [`migrate_to`] ran with no limit.
pub const CURRENT_VERSION: u32 = MIGRATIONS[MIGRATIONS.len() - 1].version;

/// The schema version recorded in the database.
pub fn version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
        .map(|v| v.clamp(0, u32::MAX as i64) as u32)
}

/// Applies the migrations up to `target` (inclusive) that the database lacks, and marks it
/// as a gemmtune database. Returns the version found before migrating.
pub fn migrate_to(conn: &mut Connection, target: u32) -> rusqlite::Result<u32> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found = version(&tx)?;
    for step in MIGRATIONS
        .iter()
        .filter(|m| m.version > found && m.version <= target)
    {
        tx.execute_batch(step.sql)?;
        tx.pragma_update(None, "user_version", step.version)?;
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID as i32)?;
    tx.commit()?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_consecutive() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1, "{}", m.description);
        }
    }

    #[test]
    fn migrating_twice_is_a_no_op() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate_to(&mut conn, 1).unwrap(), 0);
        assert_eq!(version(&conn).unwrap(), 1);
        assert_eq!(migrate_to(&mut conn, CURRENT_VERSION).unwrap(), 1);
        assert_eq!(
            migrate_to(&mut conn, CURRENT_VERSION).unwrap(),
            CURRENT_VERSION
        );
        let app: i64 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap();
        assert_eq!(app as u32, APPLICATION_ID);
        // v2's columns and v3's table exist.
        conn.execute_batch(
            "SELECT compile_ms, registers, spill_bytes, shared_bytes FROM measurements",
        )
        .unwrap();
        conn.execute_batch("SELECT fell_back, input_tokens, wall_s FROM llm_rounds")
            .unwrap();
    }
}
