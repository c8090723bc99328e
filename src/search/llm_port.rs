//! The port through which LLM-driven strategies talk to a model.
//!
//! A strategy builds an [`LlmRequest`] (system + user message, temperature, JSON mode) with
//! [`crate::search::prompt`], sends it through an [`LlmPort`], and parses the text it gets
//! back with [`crate::search::reply`]. The real HTTP clients live elsewhere and are adapted
//! to this trait at the edge; [`ScriptedLlm`] plays back canned replies so every LLM strategy
//! can be tested without a network.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use thiserror::Error;

/// One chat request: a system message and one user message.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmRequest {
    pub system: String,
    pub user: String,
    /// Sampling temperature; higher explores more.
    pub temperature: f32,
    /// Ask the model for a JSON object (OpenAI `response_format`, Ollama `format: json`).
    pub json: bool,
}

/// Why a request produced no text. Every variant is recoverable by a fallback strategy.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum LlmError {
    #[error("LLM request timed out after {after_s:.1} s")]
    Timeout { after_s: f64 },
    #[error("LLM transport error: {0}")]
    Transport(String),
    #[error("LLM API error (status {status}): {message}")]
    Api { status: u16, message: String },
    #[error("LLM returned an empty reply")]
    Empty,
}

/// Something that answers chat requests. Shared (`Arc`) between a strategy and its wrappers,
/// so implementations use interior mutability for any state (caches, counters).
pub trait LlmPort: Send + Sync {
    /// Sends one request and returns the model's text.
    fn complete(&self, request: &LlmRequest) -> Result<String, LlmError>;

    /// Model name for reports (`llama3.1:8b`, `gpt-4o`, `scripted`).
    fn model(&self) -> String;
}

/// A shared LLM handle as strategies hold it.
pub type SharedLlm = Arc<dyn LlmPort>;

/// Sends a request and measures how long the model took, so the driver can report LLM time.
pub fn timed_complete(
    llm: &dyn LlmPort,
    request: &LlmRequest,
) -> (Result<String, LlmError>, Duration) {
    let start = std::time::Instant::now();
    let reply = llm.complete(request);
    (reply, start.elapsed())
}

/// Plays back a fixed list of replies in order and records every request it was sent.
/// Once the script is used up it answers with `after_script` (a transport error by default).
#[derive(Debug)]
pub struct ScriptedLlm {
    replies: Mutex<VecDeque<Result<String, LlmError>>>,
    after_script: Result<String, LlmError>,
    requests: Mutex<Vec<LlmRequest>>,
}

impl ScriptedLlm {
    pub fn new(replies: Vec<Result<String, LlmError>>) -> Self {
        ScriptedLlm {
            replies: Mutex::new(replies.into()),
            after_script: Err(LlmError::Transport("scripted replies exhausted".into())),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// A script of successful text replies.
    pub fn replying(replies: &[&str]) -> Self {
        Self::new(replies.iter().map(|r| Ok(r.to_string())).collect())
    }

    /// What to answer once the script is used up (e.g. the same reply forever).
    pub fn then(mut self, reply: Result<String, LlmError>) -> Self {
        self.after_script = reply;
        self
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<LlmRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl LlmPort for ScriptedLlm {
    fn complete(&self, request: &LlmRequest) -> Result<String, LlmError> {
        if let Ok(mut log) = self.requests.lock() {
            log.push(request.clone());
        }
        let next = self.replies.lock().ok().and_then(|mut q| q.pop_front());
        next.unwrap_or_else(|| self.after_script.clone())
    }

    fn model(&self) -> String {
        "scripted".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(user: &str) -> LlmRequest {
        LlmRequest {
            system: "s".into(),
            user: user.into(),
            temperature: 0.7,
            json: true,
        }
    }

    #[test]
    fn scripted_plays_back_in_order_then_the_tail() {
        let llm = ScriptedLlm::new(vec![
            Ok("a".into()),
            Err(LlmError::Timeout { after_s: 1.0 }),
        ])
        .then(Ok("z".into()));
        assert_eq!(llm.complete(&req("1")), Ok("a".into()));
        assert_eq!(
            llm.complete(&req("2")),
            Err(LlmError::Timeout { after_s: 1.0 })
        );
        assert_eq!(llm.complete(&req("3")), Ok("z".into()));
        let seen: Vec<String> = llm.requests().into_iter().map(|r| r.user).collect();
        assert_eq!(seen, ["1", "2", "3"]);
    }

    #[test]
    fn exhausted_script_is_a_transport_error_by_default() {
        let llm = ScriptedLlm::replying(&[]);
        assert!(matches!(
            llm.complete(&req("x")),
            Err(LlmError::Transport(_))
        ));
    }
}
