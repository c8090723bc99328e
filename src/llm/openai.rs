//! Transport for the OpenAI chat-completions format (`POST .../v1/chat/completions`), spoken
//! by OpenAI, vLLM, llama.cpp's server, OpenRouter and most self-hosted servers.
//!
//! Request: `{model, messages: [{role: system|user|assistant, content}], temperature,
//! max_tokens, seed, response_format}`, key as `Authorization: Bearer`. A request with a
//! schema sends `response_format: {type: json_schema, json_schema: {name, strict: true,
//! schema}}`; the llama.cpp flavour ([`Provider::LlamaCpp`]) sends llama.cpp's own top-level
//! `json_schema` instead, which its server turns into a grammar. A request that only wants
//! JSON sends `response_format: {type: json_object}`.
//! Reply: `choices[0].message.content` and `usage.{prompt,completion}_tokens`.
//! A server that answers 400/422 to the schema or to JSON mode is asked again one mode down
//! ([`ModeFloor`]), and the client stays there, said once.
//! Context size: `--llm-context`, else llama.cpp's `/props`, else vLLM's `/v1/models`, else
//! the documented window of api.openai.com.

use reqwest::header::{HeaderMap, AUTHORIZATION};
use serde_json::{json, Value};
use std::sync::OnceLock;
use std::time::Instant;

use super::chat::{ChatReply, ChatRequest, Endpoint, LlmClient, Usage};
use super::config::{LlmConfig, Provider};
use super::context;
use super::error::LlmError;
use super::http::{endpoint_url, HttpTransport};
use super::output_mode::{ModeFloor, OutputMode};

#[derive(Debug)]
pub struct OpenAiClient {
    config: LlmConfig,
    url: String,
    http: HttpTransport,
    /// The output modes the server has refused.
    floor: ModeFloor,
    /// The context size, asked of the server once.
    context: OnceLock<Option<u32>>,
}

impl OpenAiClient {
    /// A client for `config.url`; `config.provider` picks the flavour (OpenAI's
    /// `response_format` or llama.cpp's `json_schema`).
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let url = endpoint_url(&config.url, "/v1/chat/completions", "/chat/completions");
        let http = HttpTransport::new(&config)?;
        Ok(OpenAiClient {
            config,
            url,
            http,
            floor: ModeFloor::default(),
            context: OnceLock::new(),
        })
    }

    fn llamacpp(&self) -> bool {
        self.config.provider == Provider::LlamaCpp
    }

    fn body(&self, req: &ChatRequest, mode: OutputMode) -> Value {
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
        if let Some(seed) = req.seed {
            body["seed"] = json!(seed);
        }
        match (mode, &req.schema) {
            (OutputMode::Schema, Some(s)) if self.llamacpp() => {
                body["json_schema"] = s.schema.clone();
            }
            (OutputMode::Schema, Some(s)) => {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": {"name": s.name, "strict": true, "schema": strict_subset(&s.schema)},
                });
            }
            (OutputMode::Schema | OutputMode::Json, _) => {
                body["response_format"] = json!({"type": "json_object"});
            }
            (OutputMode::Plain, _) => {}
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

/// The schema without string length limits, which OpenAI's strict mode does not take (enums,
/// `required`, `additionalProperties: false` and array bounds stay).
fn strict_subset(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "maxLength" | "minLength"))
                .map(|(k, v)| (k.clone(), strict_subset(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strict_subset).collect()),
        other => other.clone(),
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
        let (reply, notices) = self.floor.send(
            self.config.provider.name(),
            req,
            OutputMode::Plain,
            |mode| {
                self.http
                    .post_json(&self.url, &headers, &self.body(req, mode))
            },
        )?;
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
            let url = &self.config.url;
            context::llamacpp_props(&self.http, url, &headers)
                .or_else(|| {
                    (!self.llamacpp())
                        .then(|| {
                            context::openai_models(&self.http, url, &headers, &self.config.model)
                        })
                        .flatten()
                })
                .or_else(|| context::documented_context(self.config.provider, url))
        })
    }

    fn default_max_tokens(&self) -> u32 {
        self.config.default_max_tokens
    }
}
