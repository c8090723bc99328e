//! Connects an [`LlmClient`] to the search strategies' [`LlmPort`]: requests become chat
//! requests (schema, token limit and seed included), transport errors become the port's
//! recoverable errors (which the fallback wrapper turns into a fallback round), and the
//! client's context size becomes the port's [`LlmLimits`]. The characters-per-token ratio
//! that sizes prompts starts conservative and follows what the server reports it counted.
//! Also builds the client stack the CLI uses: transport -> response cache -> audit log
//! (prompts and replies saved, keys redacted).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use super::audit::{AuditLog, AuditedClient};
use super::cache::{CachedClient, ResponseCache};
use super::chat::{ChatRequest, LlmClient};
use super::config::LlmConfig;
use super::error::LlmError;
use crate::search::llm_port::{LlmError as PortError, LlmLimits, LlmPort, LlmReply, LlmRequest};

/// The context assumed when neither the user nor the server says: what small local servers
/// are commonly started with (llama.cpp's `-c 8192`).
pub const ASSUMED_CONTEXT_TOKENS: u32 = 8192;
/// Characters per token before the server has counted a prompt. SmolLM2's tokenizer gives
/// about 2.6 on these prompts (kernel names cost one token per 1.2 characters, prose one per
/// 4); larger vocabularies give more, so this errs towards shorter prompts.
const INITIAL_CHARS_PER_TOKEN: f64 = 2.4;

/// An [`LlmClient`] seen through the search's port.
pub struct ClientPort<C: LlmClient> {
    client: C,
    context: OnceLock<Option<u32>>,
    chars_per_token: Mutex<f64>,
    /// The assumed-context notice has been given.
    told_assumption: AtomicBool,
}

impl<C: LlmClient> ClientPort<C> {
    pub fn new(client: C) -> Self {
        ClientPort {
            client,
            context: OnceLock::new(),
            chars_per_token: Mutex::new(INITIAL_CHARS_PER_TOKEN),
            told_assumption: AtomicBool::new(false),
        }
    }

    fn known_context(&self) -> Option<u32> {
        *self.context.get_or_init(|| self.client.context_tokens())
    }

    /// Learns the characters-per-token ratio from a prompt the server counted, with a 15%
    /// margin: the chat template adds tokens the text does not show, and later prompts hold
    /// more history rows, whose kernel names take more tokens per character than the first
    /// prompt's prose (with 5%, a SmolLM2 tune's third prompt came out 7% over its estimate
    /// and an 8192-token server refused it by 4 tokens).
    fn calibrate(&self, chat: &ChatRequest, input_tokens: u64) {
        let chars = chat.prompt_chars() as f64;
        if input_tokens > 0 && chars > 200.0 {
            let observed = (chars / input_tokens as f64 * 0.85).clamp(1.0, 8.0);
            if let Ok(mut r) = self.chars_per_token.lock() {
                *r = observed;
            }
        }
    }
}

fn to_port_error(e: &LlmError) -> PortError {
    match e.root() {
        LlmError::Timeout { after, .. } => PortError::Timeout {
            after_s: after.as_secs_f64(),
        },
        LlmError::Http { status, body, .. } => PortError::Api {
            status: *status,
            message: body.clone(),
        },
        other => PortError::Transport(other.to_string()),
    }
}

impl<C: LlmClient> LlmPort for ClientPort<C> {
    fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError> {
        let mut chat = ChatRequest::new(request.system.clone(), request.user.clone())
            .temperature(request.temperature);
        if request.json {
            chat = chat.json(true);
        }
        if let Some(s) = &request.schema {
            chat = chat.schema(s.name.clone(), s.schema.clone());
        }
        if let Some(n) = request.max_tokens {
            chat = chat.max_tokens(n);
        }
        if let Some(seed) = request.seed {
            chat = chat.seed(seed);
        }
        let reply = self.client.chat(&chat).map_err(|e| to_port_error(&e))?;
        if reply.text.trim().is_empty() {
            return Err(PortError::Empty);
        }
        let usage = reply.usage.unwrap_or_default();
        if !reply.from_cache {
            self.calibrate(&chat, usage.input_tokens);
        }
        let mut notices = reply.notices;
        // Said once, when prompts were sized for an assumed context (a caller that never asked
        // for the limits, like the advice writer, makes the server answer nothing more).
        let assumed = self.context.get().is_some_and(Option::is_none);
        if assumed && !self.told_assumption.swap(true, Ordering::Relaxed) {
            notices.push(format!(
                "the LLM server did not say its context size; prompts are sized for {ASSUMED_CONTEXT_TOKENS} tokens (set --llm-context)"
            ));
        }
        Ok(LlmReply {
            text: reply.text,
            // A cached reply cost nothing this time.
            input_tokens: if reply.from_cache {
                0
            } else {
                usage.input_tokens
            },
            output_tokens: if reply.from_cache {
                0
            } else {
                usage.output_tokens
            },
            notices,
        })
    }

    fn model(&self) -> String {
        self.client.endpoint().model
    }

    fn limits(&self) -> LlmLimits {
        LlmLimits {
            context_tokens: self.known_context().unwrap_or(ASSUMED_CONTEXT_TOKENS),
            max_reply_tokens: self.client.default_max_tokens(),
            chars_per_token: self.chars_per_token.lock().map(|r| *r).unwrap_or(2.0),
        }
    }
}

/// The client the CLI uses: the configured transport, a response cache (a rerun of the same
/// prompt is free) and, when `audit_dir` is given, every prompt and reply saved there with
/// the key redacted.
pub fn cli_client(
    config: &LlmConfig,
    cache_dir: &Path,
    audit_dir: Option<&Path>,
) -> Result<Box<dyn LlmClient>, LlmError> {
    let transport = super::connect(config)?;
    let cached = CachedClient::new(transport, ResponseCache::new(cache_dir));
    Ok(match audit_dir {
        Some(dir) => {
            let log = AuditLog::new(dir)?.with_redactor(&config.redactor());
            Box::new(AuditedClient::new(cached, log))
        }
        None => Box::new(cached),
    })
}
