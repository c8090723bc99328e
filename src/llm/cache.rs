//! Response cache: a rerun of the same prompt against the same model costs nothing.
//!
//! [`CachedClient`] wraps any [`LlmClient`]. The key is a SHA-256 of the endpoint (provider,
//! URL, model) and the whole [`ChatRequest`] as canonical JSON; the entry is one file
//! `<dir>/<key>.json` holding the endpoint, the request and the reply (never a key: neither
//! carries one). Only successful replies are stored. Writes go through a temporary file and a
//! rename, so two processes sharing the directory never read a torn entry; an unreadable
//! entry counts as a miss and is overwritten.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

use super::chat::{ChatReply, ChatRequest, Endpoint, LlmClient};
use super::error::LlmError;

#[derive(Serialize, Deserialize)]
struct Entry {
    endpoint: Endpoint,
    request: ChatRequest,
    reply: ChatReply,
}

/// A directory of cached replies.
#[derive(Debug, Clone)]
pub struct ResponseCache {
    dir: PathBuf,
}

impl ResponseCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ResponseCache { dir: dir.into() }
    }

    /// `$XDG_CACHE_HOME/gemmtune/llm` (or the platform equivalent).
    pub fn default_dir() -> PathBuf {
        dirs::cache_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("gemmtune")
            .join("llm")
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cache key of one request to one endpoint.
    pub fn key(endpoint: &Endpoint, request: &ChatRequest) -> String {
        #[derive(Serialize)]
        struct KeyParts<'a> {
            endpoint: &'a Endpoint,
            request: &'a ChatRequest,
        }
        // serde_json writes struct fields in declaration order, so this text is canonical.
        let text = serde_json::to_string(&KeyParts { endpoint, request })
            .expect("endpoint and request are plain data");
        let digest = Sha256::digest(text.as_bytes());
        digest[..16].iter().map(|b| format!("{b:02x}")).collect()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The cached reply, if there is a readable entry for exactly this endpoint and request.
    pub fn get(&self, endpoint: &Endpoint, request: &ChatRequest) -> Option<ChatReply> {
        let bytes = std::fs::read(self.path(&Self::key(endpoint, request))).ok()?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        // A hash collision or a hand-edited file must not answer a different question.
        (entry.endpoint == *endpoint && entry.request == *request).then_some(entry.reply)
    }

    pub fn put(
        &self,
        endpoint: &Endpoint,
        request: &ChatRequest,
        reply: &ChatReply,
    ) -> Result<(), LlmError> {
        let io = |source| LlmError::Cache {
            path: self.dir.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let entry = Entry {
            endpoint: endpoint.clone(),
            request: request.clone(),
            reply: ChatReply {
                from_cache: false,
                notices: Vec::new(),
                ..reply.clone()
            },
        };
        let text = serde_json::to_vec_pretty(&entry).expect("cache entry is plain data");
        let key = Self::key(endpoint, request);
        let tmp = self.dir.join(format!(".{key}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, self.path(&key)).map_err(io)
    }
}

/// An [`LlmClient`] that answers repeated requests from a [`ResponseCache`].
#[derive(Debug)]
pub struct CachedClient<C> {
    inner: C,
    cache: ResponseCache,
}

impl<C: LlmClient> CachedClient<C> {
    pub fn new(inner: C, cache: ResponseCache) -> Self {
        CachedClient { inner, cache }
    }

    pub fn cache(&self) -> &ResponseCache {
        &self.cache
    }

    pub fn inner(&self) -> &C {
        &self.inner
    }
}

impl<C: LlmClient> LlmClient for CachedClient<C> {
    fn chat(&self, request: &ChatRequest) -> Result<ChatReply, LlmError> {
        let endpoint = self.inner.endpoint();
        if let Some(mut hit) = self.cache.get(&endpoint, request) {
            hit.from_cache = true;
            return Ok(hit);
        }
        let reply = self.inner.chat(request)?;
        self.cache.put(&endpoint, request, &reply)?;
        Ok(reply)
    }

    fn endpoint(&self) -> Endpoint {
        self.inner.endpoint()
    }

    fn context_tokens(&self) -> Option<u32> {
        self.inner.context_tokens()
    }

    fn default_max_tokens(&self) -> u32 {
        self.inner.default_max_tokens()
    }
}
