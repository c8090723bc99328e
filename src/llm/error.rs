//! `LlmError`: every way a call to a language model can fail, for the whole `llm` layer.
//!
//! Transports map HTTP and socket failures into these variants; the retry loop decides from
//! [`LlmError::is_retryable`] whether to try again; the cache and the audit log add their own
//! I/O variants. Every string stored in a variant has already been passed through the
//! [`Redactor`](super::secret::Redactor), so printing an error (or its chain) never shows a key.

use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum LlmError {
    /// The provider needs an API key and the environment variable that should hold it is
    /// unset or empty. Names the variable, never a value.
    #[error("{provider} needs an API key: set the environment variable {var} (or name another variable with --llm-key-env)")]
    MissingKey { provider: String, var: String },

    /// A setting the user typed (provider name, URL, model, timeout) is unusable.
    #[error("invalid LLM setting: {0}")]
    Config(String),

    /// No complete answer within the configured time (connect or overall).
    #[error("LLM request to {url} timed out after {after:?}")]
    Timeout { url: String, after: Duration },

    /// The connection failed or broke (refused, reset, DNS, TLS).
    #[error("LLM request to {url} failed: {message}")]
    Transport { url: String, message: String },

    /// The server answered with a non-success status. `body` is a redacted excerpt.
    #[error("LLM server {url} answered HTTP {status}: {body}")]
    Http {
        url: String,
        status: u16,
        body: String,
        /// The server's `Retry-After`, when it sent one we could read.
        retry_after: Option<Duration>,
    },

    /// The server answered 2xx but the body is not the shape the API promises.
    #[error("LLM server {url} sent an unusable reply ({reason}): {excerpt}")]
    BadResponse {
        url: String,
        reason: String,
        excerpt: String,
    },

    /// Retryable failures kept happening until the retry budget ran out.
    #[error("LLM request failed after {attempts} attempts")]
    Exhausted {
        attempts: u32,
        #[source]
        last: Box<LlmError>,
    },

    /// Reading or writing the response cache failed.
    #[error("LLM response cache at {path}: {source}")]
    Cache {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// Writing the audit log failed.
    #[error("LLM audit log at {path}: {source}")]
    Audit {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl LlmError {
    /// Worth another attempt: rate limits (429), server errors (5xx), timeouts and broken
    /// connections. Other 4xx mean the request itself is wrong, so repeating it cannot help.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Http { status, .. } => *status == 429 || (500..600).contains(status),
            LlmError::Timeout { .. } | LlmError::Transport { .. } => true,
            _ => false,
        }
    }

    /// The error underneath any [`LlmError::Exhausted`] wrapping, so callers can match on the
    /// failure itself (`Http { status: 500, .. }`, `Timeout`, ...).
    pub fn root(&self) -> &LlmError {
        match self {
            LlmError::Exhausted { last, .. } => last.root(),
            other => other,
        }
    }

    /// How long the server asked us to wait, if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
