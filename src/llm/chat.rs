//! The provider-neutral conversation types and the [`LlmClient`] trait.
//!
//! A caller builds a [`ChatRequest`] (system prompt, alternating user/assistant messages,
//! sampling settings, whether a JSON reply is wanted and the [`JsonSchema`] it must follow)
//! and hands it to any [`LlmClient`]: a transport (`openai`, `llamacpp`, `ollama`,
//! `anthropic`) or a wrapper around one (`CachedClient`, `AuditedClient`). Each transport
//! translates the request into its API's body (the schema into its API's form of constrained
//! output) and the answer back into a [`ChatReply`].

use serde::{Deserialize, Serialize};
use std::time::Duration;

use super::error::LlmError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

impl ChatMessage {
    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::User,
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// One request to a chat model. Serialised whole into the cache key and the audit log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ChatRequest {
    pub system: Option<String>,
    pub messages: Vec<ChatMessage>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
    /// Ask for a JSON reply through the API's JSON mode where it has one. The reply text
    /// should still go through [`extract`](super::extract): not every server honours it.
    pub json: bool,
    /// The JSON schema the reply must follow, where the API can constrain its output to one
    /// (implies `json`). A server that refuses it gets plain JSON mode instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<JsonSchema>,
    /// Sampling seed, where the API takes one. Part of the cache key, so two searches with
    /// different seeds get (and cache) their own replies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// A named JSON schema for a constrained reply (`response_format.json_schema` in OpenAI's
/// terms, an input schema of a forced tool in Anthropic's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonSchema {
    /// `[a-zA-Z0-9_-]`, at most 64 characters (OpenAI's and Anthropic's rule for names).
    pub name: String,
    pub schema: serde_json::Value,
}

impl ChatRequest {
    /// A one-turn request: a system prompt and one user message.
    pub fn new(system: impl Into<String>, user: impl Into<String>) -> Self {
        ChatRequest {
            system: Some(system.into()),
            messages: vec![ChatMessage::user(user)],
            ..ChatRequest::default()
        }
    }

    pub fn temperature(mut self, t: f32) -> Self {
        self.temperature = Some(t);
        self
    }

    pub fn max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = Some(n);
        self
    }

    pub fn json(mut self, on: bool) -> Self {
        self.json = on;
        self
    }

    /// Asks for a reply that follows `schema` (and for JSON).
    pub fn schema(mut self, name: impl Into<String>, schema: serde_json::Value) -> Self {
        self.json = true;
        self.schema = Some(JsonSchema {
            name: name.into(),
            schema,
        });
        self
    }

    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Characters of every message (system prompt included): what a token estimate counts.
    pub fn prompt_chars(&self) -> usize {
        self.system.as_ref().map_or(0, |s| s.chars().count())
            + self
                .messages
                .iter()
                .map(|m| m.content.chars().count())
                .sum::<usize>()
    }
}

/// Token counts, when the server reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatReply {
    pub text: String,
    pub usage: Option<Usage>,
    /// Wall time of the call that produced the text (all attempts included); for a cache hit,
    /// the time of the original call.
    #[serde(with = "duration_ms")]
    pub latency: Duration,
    /// True when the reply came from the response cache rather than the server.
    #[serde(default)]
    pub from_cache: bool,
    /// Things the caller should tell the user once, e.g. that the server refused the JSON
    /// schema and later replies are unconstrained. Never cached.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
}

/// Which model at which address a client talks to: part of the cache key and the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    pub provider: String,
    pub url: String,
    pub model: String,
}

impl ChatReply {
    /// A reply just received from a server, for a call that started at `started`.
    pub fn received(text: String, usage: Option<Usage>, started: std::time::Instant) -> Self {
        ChatReply {
            text,
            usage,
            latency: started.elapsed(),
            from_cache: false,
            notices: Vec::new(),
        }
    }
}

impl Endpoint {
    /// The endpoint a client configured with `config` talks to at `url`.
    pub fn of(config: &super::config::LlmConfig, url: &str) -> Self {
        Endpoint {
            provider: config.provider.name().to_string(),
            url: url.to_string(),
            model: config.model.clone(),
        }
    }
}

/// Anything that can answer a chat request.
pub trait LlmClient: Send + Sync {
    fn chat(&self, request: &ChatRequest) -> Result<ChatReply, LlmError>;

    /// The endpoint this client ends up talking to.
    fn endpoint(&self) -> Endpoint;

    /// The model's context window in tokens (prompt and reply together), as configured or
    /// as the server says (see [`super::context`]); `None` when nobody can tell.
    fn context_tokens(&self) -> Option<u32> {
        None
    }

    /// The reply length asked for when a request leaves it open.
    fn default_max_tokens(&self) -> u32 {
        2048
    }
}

impl<T: LlmClient + ?Sized> LlmClient for Box<T> {
    fn chat(&self, request: &ChatRequest) -> Result<ChatReply, LlmError> {
        (**self).chat(request)
    }

    fn endpoint(&self) -> Endpoint {
        (**self).endpoint()
    }

    fn context_tokens(&self) -> Option<u32> {
        (**self).context_tokens()
    }

    fn default_max_tokens(&self) -> u32 {
        (**self).default_max_tokens()
    }
}

impl<T: LlmClient + ?Sized> LlmClient for std::sync::Arc<T> {
    fn chat(&self, request: &ChatRequest) -> Result<ChatReply, LlmError> {
        (**self).chat(request)
    }

    fn endpoint(&self) -> Endpoint {
        (**self).endpoint()
    }

    fn context_tokens(&self) -> Option<u32> {
        (**self).context_tokens()
    }

    fn default_max_tokens(&self) -> u32 {
        (**self).default_max_tokens()
    }
}

/// Durations as whole milliseconds in JSON: readable in cache and audit files.
mod duration_ms {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis().min(u64::MAX as u128) as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}
