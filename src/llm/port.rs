//! Connects an [`LlmClient`] to the search strategies' [`LlmPort`]: requests become chat
//! requests, transport errors become the port's recoverable errors (which the fallback
//! wrapper turns into a fallback round). Also builds the client stack the CLI uses:
//! transport -> response cache -> audit log (prompts and replies saved, keys redacted).

use std::path::Path;

use super::audit::{AuditLog, AuditedClient};
use super::cache::{CachedClient, ResponseCache};
use super::chat::{ChatRequest, LlmClient};
use super::config::LlmConfig;
use super::error::LlmError;
use crate::search::llm_port::{LlmError as PortError, LlmPort, LlmRequest};

/// An [`LlmClient`] seen through the search's port.
pub struct ClientPort<C: LlmClient> {
    client: C,
}

impl<C: LlmClient> ClientPort<C> {
    pub fn new(client: C) -> Self {
        ClientPort { client }
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
    fn complete(&self, request: &LlmRequest) -> Result<String, PortError> {
        let mut chat = ChatRequest::new(request.system.clone(), request.user.clone())
            .temperature(request.temperature);
        if request.json {
            chat = chat.json(true);
        }
        let reply = self.client.chat(&chat).map_err(|e| to_port_error(&e))?;
        if reply.text.trim().is_empty() {
            return Err(PortError::Empty);
        }
        Ok(reply.text)
    }

    fn model(&self) -> String {
        self.client.endpoint().model
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
