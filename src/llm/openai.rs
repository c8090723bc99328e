//! Transport for the OpenAI chat-completions format (`POST .../v1/chat/completions`), spoken
//! by OpenAI, vLLM, llama.cpp's server, OpenRouter and most self-hosted servers.
//!
//! Request: `{model, messages: [{role: system|user|assistant, content}], temperature,
//! max_tokens, response_format: {type: json_object}?}`, key as `Authorization: Bearer`.
//! Reply: `choices[0].message.content` and `usage.{prompt,completion}_tokens`.
//! JSON mode: some servers reject `response_format`; a 400/422 answer to a request that
//! carried it is retried once without it, and once such a retry succeeds the client stops
//! sending the field.

use reqwest::header::{HeaderMap, AUTHORIZATION};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::chat::{ChatReply, ChatRequest, Endpoint, LlmClient, Usage};
use super::config::LlmConfig;
use super::error::LlmError;
use super::http::{endpoint_url, HttpTransport};

#[derive(Debug)]
pub struct OpenAiClient {
    config: LlmConfig,
    url: String,
    http: HttpTransport,
    /// Set once the server has refused `response_format`.
    json_mode_rejected: AtomicBool,
}

impl OpenAiClient {
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let url = endpoint_url(&config.url, "/v1/chat/completions", "/chat/completions");
        let http = HttpTransport::new(&config)?;
        Ok(OpenAiClient {
            config,
            url,
            http,
            json_mode_rejected: AtomicBool::new(false),
        })
    }

    fn body(&self, req: &ChatRequest, json_mode: bool) -> Value {
        let mut messages = Vec::with_capacity(req.messages.len() + 1);
        if let Some(s) = &req.system {
            messages.push(json!({"role": "system", "content": s}));
        }
        for m in &req.messages {
            messages.push(json!({"role": m.role.as_str(), "content": m.content}));
        }
        let mut body = json!({
            "model": self.config.model,
            "messages": messages,
            "max_tokens": req.max_tokens.unwrap_or(self.config.default_max_tokens),
            "stream": false,
        });
        if let Some(t) = req.temperature {
            body["temperature"] = json!(t);
        }
        if json_mode {
            body["response_format"] = json!({"type": "json_object"});
        }
        body
    }

    fn headers(&self) -> Result<HeaderMap, LlmError> {
        let mut h = HeaderMap::new();
        if let Some(key) = &self.config.key {
            h.insert(AUTHORIZATION, self.http.secret_header("Bearer ", key)?);
        }
        Ok(h)
    }

    fn parse(&self, v: &Value) -> Result<(String, Option<Usage>), LlmError> {
        let bad = |reason: &str| self.http.bad_response(&self.url, reason, &v.to_string());
        if let Some(err) = v.get("error") {
            // OpenRouter and some proxies report upstream failures inside a 200.
            return Err(bad(&format!("error in reply: {}", short(err))));
        }
        let message = v
            .get("choices")
            .and_then(|c| c.get(0))
            .and_then(|c| c.get("message"))
            .ok_or_else(|| bad("no choices[0].message"))?;
        let text = match message.get("content") {
            Some(Value::String(s)) => s.clone(),
            // Content given as a list of parts by some servers.
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
            _ => return Err(bad("choices[0].message.content is not text")),
        };
        let usage = v.get("usage").map(|u| Usage {
            input_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
            output_tokens: u
                .get("completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        });
        Ok((text, usage))
    }
}

/// A JSON value as a short one-line string for messages.
pub(crate) fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 200 {
        format!("{}...", s.chars().take(200).collect::<String>())
    } else {
        s
    }
}

impl LlmClient for OpenAiClient {
    fn chat(&self, req: &ChatRequest) -> Result<ChatReply, LlmError> {
        let started = Instant::now();
        let headers = self.headers()?;
        let json_mode = req.json && !self.json_mode_rejected.load(Ordering::Relaxed);
        let reply = match self
            .http
            .post_json(&self.url, &headers, &self.body(req, json_mode))
        {
            Err(LlmError::Http {
                status: 400 | 422, ..
            }) if json_mode => {
                let plain = self
                    .http
                    .post_json(&self.url, &headers, &self.body(req, false))?;
                // Only now is it clear the field was the problem, not the rest of the request.
                self.json_mode_rejected.store(true, Ordering::Relaxed);
                plain
            }
            other => other?,
        };
        let (text, usage) = self.parse(&reply)?;
        Ok(ChatReply::received(text, usage, started))
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint::of(&self.config, &self.url)
    }
}
