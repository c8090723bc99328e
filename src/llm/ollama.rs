//! Transport for Ollama's native chat API (`POST /api/chat`).
//!
//! Request: `{model, messages, stream: false, format, options: {temperature, num_predict,
//! num_ctx, seed}}`. `format` is the request's JSON schema (Ollama constrains the output to
//! it), or `"json"` for plain JSON mode; a server too old for schemas (400) is asked again with
//! `"json"` and the client stays there, said once. `num_ctx` is set to the context the request
//! needs (its prompt estimate plus `num_predict`, within the model's window from `/api/show`):
//! left out, Ollama's small default context would silently cut the prompt.
//! Reply: `message.content`, token counts in `prompt_eval_count` / `eval_count`. Ollama needs
//! no key; one named with `--llm-key-env` is sent as a bearer token for servers behind an
//! authenticating proxy.

use reqwest::header::{HeaderMap, AUTHORIZATION};
use serde_json::{json, Value};
use std::sync::OnceLock;
use std::time::Instant;

use super::chat::{ChatReply, ChatRequest, Endpoint, LlmClient, Usage};
use super::config::LlmConfig;
use super::context;
use super::error::LlmError;
use super::http::{endpoint_url, HttpTransport};
use super::openai::short;
use super::output_mode::{ModeFloor, OutputMode};

/// Characters per token assumed when sizing `num_ctx` (generous: it only has to be enough).
const CHARS_PER_TOKEN: usize = 2;

#[derive(Debug)]
pub struct OllamaClient {
    config: LlmConfig,
    url: String,
    http: HttpTransport,
    floor: ModeFloor,
    context: OnceLock<Option<u32>>,
}

impl OllamaClient {
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let url = endpoint_url(&config.url, "/api/chat", "");
        let http = HttpTransport::new(&config)?;
        Ok(OllamaClient {
            config,
            url,
            http,
            floor: ModeFloor::default(),
            context: OnceLock::new(),
        })
    }

    fn headers(&self) -> Result<HeaderMap, LlmError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.config.key {
            headers.insert(AUTHORIZATION, self.http.secret_header("Bearer ", key)?);
        }
        Ok(headers)
    }

    /// The context this request needs, rounded up to whole 1024s, within the model's window
    /// when it is known (given, or already asked of the server: a plain chat never probes).
    fn num_ctx(&self, req: &ChatRequest, num_predict: u32) -> u32 {
        let need = (req.prompt_chars() / CHARS_PER_TOKEN) as u32 + num_predict;
        let need = need.div_ceil(1024) * 1024;
        let window = self
            .config
            .context_tokens
            .or_else(|| self.context.get().copied().flatten());
        match window {
            Some(window) => need.min(window),
            None => need,
        }
    }

    fn body(&self, req: &ChatRequest, mode: OutputMode) -> Value {
        let mut messages = Vec::with_capacity(req.messages.len() + 1);
        if let Some(s) = &req.system {
            messages.push(json!({"role": "system", "content": s}));
        }
        for m in &req.messages {
            messages.push(json!({"role": m.role.as_str(), "content": m.content}));
        }
        let num_predict = req.max_tokens.unwrap_or(self.config.default_max_tokens);
        let mut options = json!({
            "num_predict": num_predict,
            "num_ctx": self.num_ctx(req, num_predict),
        });
        if let Some(t) = req.temperature {
            options["temperature"] = json!(t);
        }
        if let Some(seed) = req.seed {
            options["seed"] = json!(seed);
        }
        let mut body = json!({
            "model": self.config.model,
            "messages": messages,
            "stream": false,
            "options": options,
        });
        match (mode, &req.schema) {
            (OutputMode::Schema, Some(s)) => body["format"] = s.schema.clone(),
            (OutputMode::Schema | OutputMode::Json, _) => body["format"] = json!("json"),
            (OutputMode::Plain, _) => {}
        }
        body
    }

    fn parse(&self, v: &Value) -> Result<(String, Option<Usage>), LlmError> {
        let bad = |reason: &str| self.http.bad_response(&self.url, reason, &v.to_string());
        if let Some(err) = v.get("error") {
            return Err(bad(&format!("error in reply: {}", short(err))));
        }
        let text = v
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no message.content"))?
            .to_string();
        let count = |k: &str| v.get(k).and_then(Value::as_u64);
        let usage = match (count("prompt_eval_count"), count("eval_count")) {
            (None, None) => None,
            (i, o) => Some(Usage {
                input_tokens: i.unwrap_or(0),
                output_tokens: o.unwrap_or(0),
            }),
        };
        Ok((text, usage))
    }
}

impl LlmClient for OllamaClient {
    fn chat(&self, req: &ChatRequest) -> Result<ChatReply, LlmError> {
        let started = Instant::now();
        let headers = self.headers()?;
        let (reply, notices) = self.floor.send("ollama", req, OutputMode::Plain, |mode| {
            self.http
                .post_json(&self.url, &headers, &self.body(req, mode))
        })?;
        let (text, usage) = self.parse(&reply)?;
        let mut reply = ChatReply::received(text, usage, started);
        reply.notices = notices;
        Ok(reply)
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint::of(&self.config, &self.url)
    }

    fn context_tokens(&self) -> Option<u32> {
        if let Some(n) = self.config.context_tokens {
            return Some(n);
        }
        *self.context.get_or_init(|| {
            let headers = self.headers().ok()?;
            context::ollama_show(&self.http, &self.config.url, &headers, &self.config.model)
        })
    }

    fn default_max_tokens(&self) -> u32 {
        self.config.default_max_tokens
    }
}
