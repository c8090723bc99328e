//! Transport for Ollama's native chat API (`POST /api/chat`).
//!
//! Request: `{model, messages, stream: false, format: "json"?, options: {temperature,
//! num_predict}}`. Reply: `message.content`, token counts in `prompt_eval_count` /
//! `eval_count`. Ollama needs no key; one named with `--llm-key-env` is sent as a bearer
//! token for servers behind an authenticating proxy.

use reqwest::header::{HeaderMap, AUTHORIZATION};
use serde_json::{json, Value};
use std::time::Instant;

use super::chat::{ChatReply, ChatRequest, Endpoint, LlmClient, Usage};
use super::config::LlmConfig;
use super::error::LlmError;
use super::http::{endpoint_url, HttpTransport};
use super::openai::short;

#[derive(Debug)]
pub struct OllamaClient {
    config: LlmConfig,
    url: String,
    http: HttpTransport,
}

impl OllamaClient {
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let url = endpoint_url(&config.url, "/api/chat", "");
        let http = HttpTransport::new(&config)?;
        Ok(OllamaClient { config, url, http })
    }

    fn body(&self, req: &ChatRequest) -> Value {
        let mut messages = Vec::with_capacity(req.messages.len() + 1);
        if let Some(s) = &req.system {
            messages.push(json!({"role": "system", "content": s}));
        }
        for m in &req.messages {
            messages.push(json!({"role": m.role.as_str(), "content": m.content}));
        }
        let mut options = json!({
            "num_predict": req.max_tokens.unwrap_or(self.config.default_max_tokens),
        });
        if let Some(t) = req.temperature {
            options["temperature"] = json!(t);
        }
        let mut body = json!({
            "model": self.config.model,
            "messages": messages,
            "stream": false,
            "options": options,
        });
        if req.json {
            body["format"] = json!("json");
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
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.config.key {
            headers.insert(AUTHORIZATION, self.http.secret_header("Bearer ", key)?);
        }
        let reply = self.http.post_json(&self.url, &headers, &self.body(req))?;
        let (text, usage) = self.parse(&reply)?;
        Ok(ChatReply::received(text, usage, started))
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint::of(&self.config, &self.url)
    }
}
