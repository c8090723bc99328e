//! Access to language models: transports, response cache, audit log, secrets, and tolerant
//! JSON extraction.
//!
//! Flow: the CLI's `--llm-*` options become an [`LlmConfig`] (key read from the environment
//! into a [`Secret`]); [`connect`] picks the transport for the provider ([`OpenAiClient`] for
//! OpenAI-compatible servers and llama.cpp, [`OllamaClient`], [`AnthropicClient`], all on the
//! shared retrying [`http`] layer). A request's JSON schema becomes each API's form of
//! constrained output, stepping down to plain JSON where a server refuses it
//! ([`output_mode`]); each transport can say how large the model's context is
//! ([`context`]); callers
//! stack wrappers on it — [`CachedClient`] so a repeated prompt costs nothing, and
//! [`AuditedClient`] so every prompt and reply of a run is on disk — and send
//! [`ChatRequest`]s through the [`LlmClient`] trait. Replies are text; [`extract`] finds the
//! JSON in them. Prompt wording and the meaning of the JSON belong to the search strategies.
//!
//! ```no_run
//! use gemmtune::llm::*;
//! let config = LlmConfig::from_options(&LlmOptions {
//!     url: Some("http://127.0.0.1:8080/v1".into()),
//!     model: Some("local".into()),
//!     ..LlmOptions::default()
//! })?;
//! let client = CachedClient::new(connect(&config)?, ResponseCache::new(ResponseCache::default_dir()));
//! let client = AuditedClient::new(client, AuditLog::new("run/llm")?.with_redactor(&config.redactor()));
//! let reply = client.chat(&ChatRequest::new("You tune GEMM kernels.", "Propose 4 configs as JSON.").json(true))?;
//! let configs = extract::json_objects(&reply.text);
//! # Ok::<(), LlmError>(())
//! ```

pub mod anthropic;
pub mod audit;
pub mod cache;
pub mod chat;
pub mod config;
pub mod context;
pub mod error;
pub mod extract;
pub mod http;
pub mod ollama;
pub mod openai;
pub mod output_mode;
pub mod port;
pub mod retry;
pub mod secret;

pub use anthropic::AnthropicClient;
pub use audit::{AuditLog, AuditedClient};
pub use cache::{CachedClient, ResponseCache};
pub use chat::{ChatMessage, ChatReply, ChatRequest, Endpoint, JsonSchema, LlmClient, Role, Usage};
pub use config::{LlmConfig, LlmOptions, Provider};
pub use error::LlmError;
pub use ollama::OllamaClient;
pub use openai::OpenAiClient;
pub use output_mode::OutputMode;
pub use retry::RetryPolicy;
pub use secret::{Redactor, Secret};

/// The transport for `config.provider`.
pub fn connect(config: &LlmConfig) -> Result<Box<dyn LlmClient>, LlmError> {
    Ok(match config.provider {
        Provider::OpenAi | Provider::LlamaCpp => Box::new(OpenAiClient::new(config.clone())?),
        Provider::Ollama => Box::new(OllamaClient::new(config.clone())?),
        Provider::Anthropic => Box::new(AnthropicClient::new(config.clone())?),
    })
}
