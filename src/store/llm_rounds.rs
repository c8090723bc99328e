//! What an LLM contributed to each search round, stored beside the run's measurements.
//!
//! `tune` and `tune-log` write one [`LlmRoundRow`] per round of an LLM-driven search (its
//! run, problem and model, the configs the model suggested and how many were valid, how many
//! of the batch came from it and how many from the strategy filling in, whether it fell
//! back, tokens and wall time), so what an LLM was worth can be queried across runs.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::handle::{now_ms, Store};
use super::StoreError;

/// One round of an LLM-driven search, as stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LlmRoundRow {
    pub round: usize,
    pub requests: usize,
    pub suggested: usize,
    pub valid: usize,
    pub from_llm: usize,
    pub filled: usize,
    pub fell_back: bool,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub wall_s: f64,
}

fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Store {
    /// Writes the rounds of one search in one transaction.
    pub fn record_llm_rounds(
        &mut self,
        run_id: Option<i64>,
        problem_key: &str,
        model: &str,
        rounds: &[LlmRoundRow],
    ) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(sql)?;
        for r in rounds {
            tx.prepare_cached(
                "INSERT INTO llm_rounds (run_id, problem_key, model, round, requests, suggested,
                     valid, from_llm, filled, fell_back, input_tokens, output_tokens, wall_s,
                     recorded_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    run_id,
                    problem_key,
                    model,
                    count(r.round as u64),
                    count(r.requests as u64),
                    count(r.suggested as u64),
                    count(r.valid as u64),
                    count(r.from_llm as u64),
                    count(r.filled as u64),
                    r.fell_back,
                    count(r.input_tokens),
                    count(r.output_tokens),
                    r.wall_s,
                    now_ms(),
                ])
            })
            .map_err(sql)?;
        }
        tx.commit().map_err(sql)
    }

    /// The rounds stored for a run, in round order (`None`: every run).
    pub fn llm_rounds(&self, run_id: Option<i64>) -> Result<Vec<LlmRoundRow>, StoreError> {
        let get = |r: &rusqlite::Row<'_>, i: usize| -> rusqlite::Result<usize> {
            Ok(r.get::<_, i64>(i)?.max(0) as usize)
        };
        self.conn
            .prepare_cached(
                "SELECT round, requests, suggested, valid, from_llm, filled, fell_back,
                        input_tokens, output_tokens, wall_s
                 FROM llm_rounds WHERE ?1 IS NULL OR run_id = ?1 ORDER BY run_id, round, id",
            )
            .and_then(|mut s| {
                s.query_map([run_id], |r| {
                    Ok(LlmRoundRow {
                        round: get(r, 0)?,
                        requests: get(r, 1)?,
                        suggested: get(r, 2)?,
                        valid: get(r, 3)?,
                        from_llm: get(r, 4)?,
                        filled: get(r, 5)?,
                        fell_back: r.get(6)?,
                        input_tokens: get(r, 7)? as u64,
                        output_tokens: get(r, 8)? as u64,
                        wall_s: r.get(9)?,
                    })
                })?
                .collect()
            })
            .map_err(|e| self.sql(e))
    }
}
