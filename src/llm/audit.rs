//! Audit log: every prompt sent and every reply received during a run, as numbered files.
//!
//! [`AuditedClient`] wraps any [`LlmClient`] and records each call in an [`AuditLog`]:
//! `NNN-request.json` (endpoint, request, time) is written before the call, so a prompt that
//! hangs or crashes the run is still on disk, and `NNN-reply.txt` after it (the reply text, or
//! `error: ...`), with `NNN-meta.json` (usage, latency, cache hit). Numbering continues after
//! the highest number already in the directory, so a resumed run appends. Everything written
//! passes through the log's [`Redactor`] first.

use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use super::chat::{ChatReply, ChatRequest, Endpoint, LlmClient, Usage};
use super::error::LlmError;
use super::secret::Redactor;

#[derive(Debug)]
pub struct AuditLog {
    dir: PathBuf,
    next: Mutex<u32>,
    redactor: Redactor,
}

#[derive(Serialize)]
struct RequestRecord<'a> {
    seq: u32,
    unix_time_s: u64,
    endpoint: &'a Endpoint,
    request: &'a ChatRequest,
}

#[derive(Serialize)]
struct MetaRecord {
    seq: u32,
    ok: bool,
    usage: Option<Usage>,
    latency_ms: Option<u64>,
    from_cache: bool,
}

impl AuditLog {
    /// Opens (creating it) an audit directory. Redacts the values of the well-known key
    /// variables found in the environment; add more with [`AuditLog::with_redactor`].
    pub fn new(dir: impl Into<PathBuf>) -> Result<Self, LlmError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|source| LlmError::Audit {
            path: dir.clone(),
            source,
        })?;
        let next = highest_seq(&dir).map_or(1, |n| n.saturating_add(1));
        Ok(AuditLog {
            dir,
            next: Mutex::new(next),
            redactor: Redactor::from_env(&[]),
        })
    }

    /// Also redacts everything `redactor` knows (e.g. [`LlmConfig::redactor`](super::LlmConfig::redactor)).
    pub fn with_redactor(mut self, redactor: &Redactor) -> Self {
        self.redactor.merge(redactor);
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn write(&self, name: String, text: &str) -> Result<(), LlmError> {
        let path = self.dir.join(name);
        std::fs::write(&path, self.redactor.redact(text))
            .map_err(|source| LlmError::Audit { path, source })
    }

    /// Records a request about to be sent; returns its sequence number.
    pub fn record_request(
        &self,
        endpoint: &Endpoint,
        request: &ChatRequest,
    ) -> Result<u32, LlmError> {
        let seq = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let seq = *next;
            *next = next.saturating_add(1);
            seq
        };
        let record = RequestRecord {
            seq,
            unix_time_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            endpoint,
            request,
        };
        let text = serde_json::to_string_pretty(&record).expect("audit record is plain data");
        self.write(format!("{seq:03}-request.json"), &text)?;
        Ok(seq)
    }

    /// Records the outcome of request `seq`.
    pub fn record_reply(
        &self,
        seq: u32,
        outcome: Result<&ChatReply, &LlmError>,
    ) -> Result<(), LlmError> {
        let (text, meta) = match outcome {
            Ok(r) => (
                r.text.clone(),
                MetaRecord {
                    seq,
                    ok: true,
                    usage: r.usage,
                    latency_ms: Some(r.latency.as_millis().min(u64::MAX as u128) as u64),
                    from_cache: r.from_cache,
                },
            ),
            Err(e) => (
                format!("error: {}", error_chain(e)),
                MetaRecord {
                    seq,
                    ok: false,
                    usage: None,
                    latency_ms: None,
                    from_cache: false,
                },
            ),
        };
        self.write(format!("{seq:03}-reply.txt"), &text)?;
        let meta = serde_json::to_string_pretty(&meta).expect("audit record is plain data");
        self.write(format!("{seq:03}-meta.json"), &meta)
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// The highest `NNN` of `NNN-*` files in `dir`.
fn highest_seq(dir: &Path) -> Option<u32> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            let name = name.to_str()?;
            name.split_once('-')?.0.parse::<u32>().ok()
        })
        .max()
}

/// An [`LlmClient`] that records every call in an [`AuditLog`].
#[derive(Debug)]
pub struct AuditedClient<C> {
    inner: C,
    log: AuditLog,
}

impl<C: LlmClient> AuditedClient<C> {
    pub fn new(inner: C, log: AuditLog) -> Self {
        AuditedClient { inner, log }
    }

    pub fn log(&self) -> &AuditLog {
        &self.log
    }

    pub fn inner(&self) -> &C {
        &self.inner
    }
}

impl<C: LlmClient> LlmClient for AuditedClient<C> {
    fn chat(&self, request: &ChatRequest) -> Result<ChatReply, LlmError> {
        let seq = self.log.record_request(&self.inner.endpoint(), request)?;
        let outcome = self.inner.chat(request);
        self.log.record_reply(seq, outcome.as_ref())?;
        outcome
    }

    fn endpoint(&self) -> Endpoint {
        self.inner.endpoint()
    }

    fn context_tokens(&self) -> Option<u32> {
        self.inner.context_tokens()
    }

    fn default_max_tokens(&self) -> u32 {
        self.inner.default_max_tokens()
    }
}
