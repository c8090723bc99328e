//! The port through which LLM-driven strategies talk to a model.
//!
//! A strategy builds an [`LlmRequest`] (system + user message, temperature, the JSON schema
//! the reply must follow, the reply's token limit, a seed) with [`crate::search::prompt`],
//! sends it through an [`LlmPort`], and parses the [`LlmReply`] text it gets back with
//! [`crate::search::reply`]. The port also says how large the model's context is
//! ([`LlmLimits`]), so prompts are sized to fit. The real HTTP clients live elsewhere and are
//! adapted to this trait at the edge; [`ScriptedLlm`] plays back canned replies so every LLM
//! strategy can be tested without a network.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use thiserror::Error;

/// One chat request: a system message and one user message.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LlmRequest {
    pub system: String,
    pub user: String,
    /// Sampling temperature; higher explores more.
    pub temperature: f32,
    /// Ask the model for a JSON object (OpenAI `response_format`, Ollama `format: json`).
    pub json: bool,
    /// The JSON schema the reply must follow (constrained decoding where the endpoint has
    /// it; see [`crate::search::reply_schema`]).
    pub schema: Option<ReplySchema>,
    /// Longest reply in tokens; `None` leaves it to the endpoint's default.
    pub max_tokens: Option<u32>,
    /// Sampling seed: drawn from the search's seeded RNG, so each search seed gets (and
    /// caches) replies of its own.
    pub seed: Option<u64>,
}

/// A named JSON schema for a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplySchema {
    /// Letters, digits, `_` and `-` (what every API accepts as a schema or tool name).
    pub name: String,
    pub schema: Value,
}

/// The model's answer and what it cost.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LlmReply {
    pub text: String,
    /// Tokens of the prompt and of the reply, as the endpoint counted them (0 when it did not).
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Things to tell the user once (the server refused the schema, its context size is
    /// assumed).
    pub notices: Vec<String>,
}

impl LlmReply {
    pub fn text(text: impl Into<String>) -> Self {
        LlmReply {
            text: text.into(),
            ..Default::default()
        }
    }
}

/// How much a request may hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LlmLimits {
    /// The context window: prompt and reply together, in tokens.
    pub context_tokens: u32,
    /// The longest reply the user allows (`--llm-max-tokens`).
    pub max_reply_tokens: u32,
    /// Characters per prompt token, for estimating a prompt's size before sending it.
    pub chars_per_token: f64,
}

impl Default for LlmLimits {
    /// No practical limit (a scripted model).
    fn default() -> Self {
        LlmLimits {
            context_tokens: 1 << 20,
            max_reply_tokens: 2048,
            chars_per_token: 2.5,
        }
    }
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
    /// Sends one request and returns the model's reply.
    fn complete(&self, request: &LlmRequest) -> Result<LlmReply, LlmError>;

    /// Model name for reports (`llama3.1:8b`, `gpt-4o`, `scripted`).
    fn model(&self) -> String;

    /// How much one request may hold.
    fn limits(&self) -> LlmLimits {
        LlmLimits::default()
    }
}

/// A shared LLM handle as strategies hold it.
pub type SharedLlm = Arc<dyn LlmPort>;

/// Sends a request and measures how long the model took, so the driver can report LLM time.
pub fn timed_complete(
    llm: &dyn LlmPort,
    request: &LlmRequest,
) -> (Result<LlmReply, LlmError>, Duration) {
    let start = std::time::Instant::now();
    let reply = llm.complete(request);
    (reply, start.elapsed())
}

/// Plays back a fixed list of replies in order and records every request it was sent.
/// Once the script is used up it answers with `after_script` (a transport error by default).
/// It counts a token per four characters of prompt and of reply, so token accounting can be
/// tested; [`ScriptedLlm::with_context`] gives it a context window for budget tests.
#[derive(Debug)]
pub struct ScriptedLlm {
    replies: Mutex<VecDeque<Result<String, LlmError>>>,
    after_script: Result<String, LlmError>,
    requests: Mutex<Vec<LlmRequest>>,
    limits: LlmLimits,
}

impl ScriptedLlm {
    pub fn new(replies: Vec<Result<String, LlmError>>) -> Self {
        ScriptedLlm {
            replies: Mutex::new(replies.into()),
            after_script: Err(LlmError::Transport("scripted replies exhausted".into())),
            requests: Mutex::new(Vec::new()),
            limits: LlmLimits::default(),
        }
    }

    /// A context window of `tokens` and replies of at most `max_reply` tokens.
    pub fn with_context(mut self, tokens: u32, max_reply: u32) -> Self {
        self.limits.context_tokens = tokens;
        self.limits.max_reply_tokens = max_reply;
        self
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

/// Tokens as the scripted model counts them: one per four characters.
pub fn scripted_tokens(text: &str) -> u64 {
    text.chars().count().div_ceil(4) as u64
}

impl LlmPort for ScriptedLlm {
    fn complete(&self, request: &LlmRequest) -> Result<LlmReply, LlmError> {
        if let Ok(mut log) = self.requests.lock() {
            log.push(request.clone());
        }
        let next = self.replies.lock().ok().and_then(|mut q| q.pop_front());
        let text = next.unwrap_or_else(|| self.after_script.clone())?;
        Ok(LlmReply {
            input_tokens: scripted_tokens(&request.system) + scripted_tokens(&request.user),
            output_tokens: scripted_tokens(&text),
            text,
            notices: Vec::new(),
        })
    }

    fn model(&self) -> String {
        "scripted".to_string()
    }

    fn limits(&self) -> LlmLimits {
        self.limits
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
            ..Default::default()
        }
    }

    #[test]
    fn scripted_plays_back_in_order_then_the_tail() {
        let llm = ScriptedLlm::new(vec![
            Ok("a".into()),
            Err(LlmError::Timeout { after_s: 1.0 }),
        ])
        .then(Ok("z".into()));
        let a = llm.complete(&req("1")).unwrap();
        assert_eq!(a.text, "a");
        assert_eq!((a.input_tokens, a.output_tokens), (2, 1));
        assert_eq!(
            llm.complete(&req("2")),
            Err(LlmError::Timeout { after_s: 1.0 })
        );
        assert_eq!(llm.complete(&req("3")).unwrap().text, "z");
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
