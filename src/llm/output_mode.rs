//! How strictly a transport asks for structured output, and the step down when a server
//! refuses it.
//!
//! A request that carries a [`JsonSchema`](super::chat::JsonSchema) is sent in
//! [`OutputMode::Schema`] (the API's constrained-output form); one that only wants JSON in
//! [`OutputMode::Json`]. A server that answers 400/422 to that is asked the same question one
//! mode down, and once the lower mode succeeds the client stays there for the rest of the
//! run and reports the change once (a notice on that reply), so an older server or a proxy
//! that does not know the field costs one extra request, not a failed search.

use std::sync::atomic::{AtomicU8, Ordering};

use serde_json::Value;

use super::chat::ChatRequest;
use super::error::LlmError;

/// From the strictest output constraint down to none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OutputMode {
    /// The reply is constrained by the request's JSON schema.
    Schema = 0,
    /// The API's plain JSON mode (no schema).
    Json = 1,
    /// No output constraint; the prompt alone asks for JSON.
    Plain = 2,
}

impl OutputMode {
    fn from_level(level: u8) -> Self {
        match level {
            0 => OutputMode::Schema,
            1 => OutputMode::Json,
            _ => OutputMode::Plain,
        }
    }

    /// The mode a request asks for.
    pub fn wanted(req: &ChatRequest) -> Self {
        if req.schema.is_some() {
            OutputMode::Schema
        } else if req.json {
            OutputMode::Json
        } else {
            OutputMode::Plain
        }
    }

    fn lower(self) -> Option<OutputMode> {
        match self {
            OutputMode::Schema => Some(OutputMode::Json),
            OutputMode::Json => Some(OutputMode::Plain),
            OutputMode::Plain => None,
        }
    }

    /// What the request carries in this mode, as the notice words it.
    fn describe(self) -> &'static str {
        match self {
            OutputMode::Schema => "a JSON schema for its replies",
            OutputMode::Json => "JSON mode",
            OutputMode::Plain => "no output constraint",
        }
    }
}

/// The modes a server has refused so far (shared by every request of one client).
#[derive(Debug, Default)]
pub struct ModeFloor {
    level: AtomicU8,
}

impl ModeFloor {
    /// The mode to use for `req`: what it asks for, unless the server refused that before.
    pub fn mode_for(&self, req: &ChatRequest) -> OutputMode {
        OutputMode::wanted(req).max(OutputMode::from_level(self.level.load(Ordering::Relaxed)))
    }

    /// Sends with `send(mode)` at the mode `req` may use, stepping down on 400/422 as far as
    /// `lowest` (the last mode whose body differs in substance for this API). Returns the
    /// reply and the notices to pass on (one per step down taken now).
    pub fn send(
        &self,
        provider: &str,
        req: &ChatRequest,
        lowest: OutputMode,
        mut send: impl FnMut(OutputMode) -> Result<Value, LlmError>,
    ) -> Result<(Value, Vec<String>), LlmError> {
        let mut mode = self.mode_for(req);
        let mut refused = Vec::new();
        loop {
            match send(mode) {
                Ok(v) => {
                    // Only a success one mode down shows the mode was the problem, not the
                    // rest of the request.
                    let notices = refused
                        .iter()
                        .map(|(m, status): &(OutputMode, u16)| {
                            format!(
                                "the {provider} server refused {} (HTTP {status}); later requests carry {} (replies are checked against the space all the same)",
                                m.describe(),
                                mode.describe()
                            )
                        })
                        .collect();
                    if !refused.is_empty() {
                        self.level.fetch_max(mode as u8, Ordering::Relaxed);
                    }
                    return Ok((v, notices));
                }
                Err(LlmError::Http {
                    status: status @ (400 | 422),
                    ..
                }) if mode < lowest => {
                    refused.push((mode, status));
                    mode = mode.lower().expect("checked above");
                }
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16) -> LlmError {
        LlmError::Http {
            url: "u".into(),
            status,
            body: String::new(),
            retry_after: None,
        }
    }

    #[test]
    fn steps_down_once_and_remembers() {
        let floor = ModeFloor::default();
        let req = ChatRequest::new("s", "u").schema("x", serde_json::json!({"type": "object"}));
        let mut tried = Vec::new();
        let (_, notices) = floor
            .send("openai", &req, OutputMode::Plain, |m| {
                tried.push(m);
                if m == OutputMode::Schema {
                    Err(http(400))
                } else {
                    Ok(Value::Null)
                }
            })
            .unwrap();
        assert_eq!(tried, [OutputMode::Schema, OutputMode::Json]);
        assert_eq!(notices.len(), 1);
        assert!(notices[0].contains("refused a JSON schema"), "{notices:?}");
        // The next request starts one mode down and says nothing.
        let (_, notices) = floor
            .send("openai", &req, OutputMode::Plain, |m| {
                assert_eq!(m, OutputMode::Json);
                Ok(Value::Null)
            })
            .unwrap();
        assert!(notices.is_empty());
        // Other errors pass through without a step down.
        let floor = ModeFloor::default();
        assert!(floor
            .send("openai", &req, OutputMode::Plain, |_| Err(http(500)))
            .is_err());
        assert_eq!(floor.mode_for(&req), OutputMode::Schema);
        // A request refused in every mode is an error and changes nothing.
        assert!(floor
            .send("openai", &req, OutputMode::Plain, |_| Err(http(400)))
            .is_err());
        assert_eq!(floor.mode_for(&req), OutputMode::Schema);
    }
}
