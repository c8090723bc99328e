//! Transport for Anthropic's Messages API (`POST /v1/messages`).
//!
//! Request: `{model, system, messages, max_tokens (required), temperature}` with the key in
//! `x-api-key` and the API version in `anthropic-version`. Reply: the `text` blocks of
//! `content`, concatenated; `usage.{input,output}_tokens`.
//! Structured output is tool use: a request with a JSON schema offers one tool whose
//! `input_schema` is that schema and forces it (`tool_choice: {type: tool, name}`); the
//! `tool_use` block's `input` is the reply, as JSON text. The API has no JSON switch, so a
//! JSON request without a schema (or after a 400 to the tool) adds one sentence to the
//! system prompt and relies on the caller's extraction. Context: `--llm-context`, else the
//! documented 200k window of api.anthropic.com.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{json, Value};
use std::time::Instant;

use super::chat::{ChatReply, ChatRequest, Endpoint, LlmClient, Usage};
use super::config::LlmConfig;
use super::context;
use super::error::LlmError;
use super::http::{endpoint_url, HttpTransport};
use super::openai::short;
use super::output_mode::{ModeFloor, OutputMode};

const JSON_INSTRUCTION: &str = "Answer with JSON only: no prose, no code fences.";

#[derive(Debug)]
pub struct AnthropicClient {
    config: LlmConfig,
    url: String,
    http: HttpTransport,
    floor: ModeFloor,
}

impl AnthropicClient {
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let url = endpoint_url(&config.url, "/v1/messages", "/messages");
        let http = HttpTransport::new(&config)?;
        Ok(AnthropicClient {
            config,
            url,
            http,
            floor: ModeFloor::default(),
        })
    }

    fn body(&self, req: &ChatRequest, mode: OutputMode) -> Value {
        let messages: Vec<Value> = req
            .messages
            .iter()
            .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
            .collect();
        let mut body = json!({
            "model": self.config.model,
            "messages": messages,
            "max_tokens": req.max_tokens.unwrap_or(self.config.default_max_tokens),
        });
        let tool = match (mode, &req.schema) {
            (OutputMode::Schema, Some(s)) => Some(s),
            _ => None,
        };
        // The instruction is for replies that nothing else keeps to JSON.
        let instruct = req.json && tool.is_none();
        let system = match (&req.system, instruct) {
            (Some(s), true) => Some(format!("{s}\n\n{JSON_INSTRUCTION}")),
            (Some(s), false) => Some(s.clone()),
            (None, true) => Some(JSON_INSTRUCTION.to_string()),
            (None, false) => None,
        };
        if let Some(s) = tool {
            body["tools"] = json!([{
                "name": s.name,
                "description": "Give your answer as this tool's input.",
                "input_schema": s.schema,
            }]);
            body["tool_choice"] = json!({"type": "tool", "name": s.name});
        }
        if let Some(s) = system {
            body["system"] = json!(s);
        }
        if let Some(t) = req.temperature {
            body["temperature"] = json!(t);
        }
        body
    }

    fn headers(&self) -> Result<HeaderMap, LlmError> {
        let mut h = HeaderMap::new();
        let version = HeaderValue::from_str(&self.config.anthropic_version).map_err(|_| {
            LlmError::Config("anthropic-version is not a valid header value".into())
        })?;
        h.insert(HeaderName::from_static("anthropic-version"), version);
        match &self.config.key {
            Some(key) => {
                h.insert(
                    HeaderName::from_static("x-api-key"),
                    self.http.secret_header("", key)?,
                );
            }
            None => {
                return Err(LlmError::MissingKey {
                    provider: "anthropic".into(),
                    var: self
                        .config
                        .key_env
                        .clone()
                        .unwrap_or_else(|| "ANTHROPIC_API_KEY".into()),
                })
            }
        }
        Ok(h)
    }

    fn parse(&self, v: &Value) -> Result<(String, Option<Usage>), LlmError> {
        let bad = |reason: &str| self.http.bad_response(&self.url, reason, &v.to_string());
        if v.get("type").and_then(Value::as_str) == Some("error") {
            let err = v.get("error").cloned().unwrap_or(Value::Null);
            return Err(bad(&format!("error in reply: {}", short(&err))));
        }
        let blocks = v
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no content array"))?;
        let usage = v.get("usage").map(|u| Usage {
            input_tokens: u.get("input_tokens").and_then(Value::as_u64).unwrap_or(0),
            output_tokens: u.get("output_tokens").and_then(Value::as_u64).unwrap_or(0),
        });
        // A forced tool's input is the answer; any text beside it is commentary.
        let kind = |b: &&Value| b.get("type").and_then(Value::as_str).map(str::to_string);
        if let Some(input) = blocks
            .iter()
            .find(|b| kind(b).as_deref() == Some("tool_use"))
            .and_then(|b| b.get("input"))
        {
            return Ok((input.to_string(), usage));
        }
        let texts: Vec<&str> = blocks
            .iter()
            .filter(|b| kind(b).as_deref() == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        if texts.is_empty() && !blocks.is_empty() {
            return Err(bad("no text block in content"));
        }
        Ok((texts.concat(), usage))
    }
}

impl LlmClient for AnthropicClient {
    fn chat(&self, req: &ChatRequest) -> Result<ChatReply, LlmError> {
        let started = Instant::now();
        let headers = self.headers()?;
        let (reply, notices) = self
            .floor
            .send("anthropic", req, OutputMode::Json, |mode| {
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
        self.config
            .context_tokens
            .or_else(|| context::documented_context(self.config.provider, &self.config.url))
    }

    fn default_max_tokens(&self) -> u32 {
        self.config.default_max_tokens
    }
}
