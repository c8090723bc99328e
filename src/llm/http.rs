//! The HTTP plumbing every transport shares: one POST of a JSON body, with timeouts, retries
//! and redaction.
//!
//! A transport builds its API's body and headers and calls [`HttpTransport::post_json`]. Each
//! attempt either yields the parsed JSON of a 2xx reply or an [`LlmError`]; retryable errors
//! (429, 5xx, timeouts, broken connections) are tried again after the [`RetryPolicy`]'s pause,
//! others return at once. Every text that ends up in an error (bodies, reqwest's messages with
//! their URLs) passes through the [`Redactor`] first.

use reqwest::blocking::Client;
use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};
use serde_json::Value;
use std::io::Read;
use std::time::{Duration, Instant};

use super::config::LlmConfig;
use super::error::LlmError;
use super::retry::{parse_retry_after, RetryPolicy};
use super::secret::{Redactor, Secret};

/// Replies larger than this are cut off and reported as unusable: no chat answer the search
/// asks for comes near it, and an unbounded read would let a broken server exhaust memory.
const MAX_BODY_BYTES: u64 = 16 << 20;
/// How much of a body an error message quotes.
const EXCERPT_CHARS: usize = 400;
/// Time limit of a probe of the server's properties (its context size).
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub struct HttpTransport {
    client: Client,
    policy: RetryPolicy,
    redactor: Redactor,
    timeout: Duration,
}

impl HttpTransport {
    pub fn new(cfg: &LlmConfig) -> Result<Self, LlmError> {
        let client = Client::builder()
            .timeout(cfg.timeout)
            .connect_timeout(cfg.connect_timeout)
            .user_agent(concat!("gemmtune/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(HttpTransport {
            client,
            policy: cfg.retry.clone(),
            redactor: cfg.redactor(),
            timeout: cfg.timeout,
        })
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// A header value that reqwest marks sensitive (kept out of its own debug output).
    pub fn secret_header(&self, prefix: &str, key: &Secret) -> Result<HeaderValue, LlmError> {
        let mut v = HeaderValue::from_str(&format!("{prefix}{}", key.expose())).map_err(|_| {
            LlmError::Config("the API key holds characters not allowed in an HTTP header".into())
        })?;
        v.set_sensitive(true);
        Ok(v)
    }

    /// POSTs `body` to `url`, retrying per the policy; the parsed JSON of the first 2xx reply.
    pub fn post_json(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<Value, LlmError> {
        let attempts = self.policy.max_attempts();
        let mut rng = rand::thread_rng();
        let mut attempt = 0;
        loop {
            match self.attempt(url, headers, body) {
                Ok(v) => return Ok(v),
                Err(e) if e.is_retryable() && attempt + 1 < attempts => {
                    std::thread::sleep(self.policy.delay(attempt, e.retry_after(), &mut rng));
                    attempt += 1;
                }
                Err(e) if attempt > 0 => {
                    return Err(LlmError::Exhausted {
                        attempts: attempt + 1,
                        last: Box::new(e),
                    })
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// One GET of a small JSON document (a server's properties), no retries, with a short
    /// time limit: what it answers is a convenience, never worth a long wait.
    pub fn get_json_once(&self, url: &str, headers: &HeaderMap) -> Result<Value, LlmError> {
        self.read_json(
            url,
            self.client
                .get(url)
                .headers(headers.clone())
                .timeout(PROBE_TIMEOUT.min(self.timeout)),
        )
    }

    /// One POST without retries and with the short probe time limit.
    pub fn post_json_once(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<Value, LlmError> {
        self.read_json(
            url,
            self.client
                .post(url)
                .headers(headers.clone())
                .json(body)
                .timeout(PROBE_TIMEOUT.min(self.timeout)),
        )
    }

    fn attempt(&self, url: &str, headers: &HeaderMap, body: &Value) -> Result<Value, LlmError> {
        self.read_json(
            url,
            self.client.post(url).headers(headers.clone()).json(body),
        )
    }

    fn read_json(
        &self,
        url: &str,
        request: reqwest::blocking::RequestBuilder,
    ) -> Result<Value, LlmError> {
        let started = Instant::now();
        let resp = request.send().map_err(|e| self.reqwest_error(url, e))?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let bytes = self.read_body(url, resp, started)?;
        let text = String::from_utf8_lossy(&bytes);
        if !status.is_success() {
            return Err(LlmError::Http {
                url: self.redactor.redact(url),
                status: status.as_u16(),
                body: self.excerpt(&text),
                retry_after,
            });
        }
        if bytes.len() as u64 > MAX_BODY_BYTES {
            return Err(self.bad_response(url, "reply larger than 16 MiB", &text));
        }
        serde_json::from_str(&text)
            .map_err(|e| self.bad_response(url, &format!("not JSON: {e}"), &text))
    }

    fn read_body(
        &self,
        url: &str,
        resp: reqwest::blocking::Response,
        started: Instant,
    ) -> Result<Vec<u8>, LlmError> {
        let mut bytes = Vec::new();
        match resp.take(MAX_BODY_BYTES + 1).read_to_end(&mut bytes) {
            Ok(_) => Ok(bytes),
            Err(e)
                if e.kind() == std::io::ErrorKind::TimedOut
                    || started.elapsed() >= self.timeout =>
            {
                Err(LlmError::Timeout {
                    url: self.redactor.redact(url),
                    after: self.timeout,
                })
            }
            Err(e) => Err(LlmError::Transport {
                url: self.redactor.redact(url),
                message: self
                    .redactor
                    .redact(&format!("reading the reply: {}", chain(&e))),
            }),
        }
    }

    fn reqwest_error(&self, url: &str, e: reqwest::Error) -> LlmError {
        if e.is_timeout() {
            return LlmError::Timeout {
                url: self.redactor.redact(url),
                after: self.timeout,
            };
        }
        LlmError::Transport {
            url: self.redactor.redact(url),
            message: self.redactor.redact(&chain(&e.without_url())),
        }
    }

    pub fn bad_response(&self, url: &str, reason: &str, body: &str) -> LlmError {
        LlmError::BadResponse {
            url: self.redactor.redact(url),
            reason: self.redactor.redact(reason),
            excerpt: self.excerpt(body),
        }
    }

    /// The start of a body, redacted, on one line.
    pub fn excerpt(&self, body: &str) -> String {
        let clean = self.redactor.redact(body);
        let mut out: String = clean.chars().take(EXCERPT_CHARS).collect();
        if clean.chars().nth(EXCERPT_CHARS).is_some() {
            out.push_str("...");
        }
        out.replace(['\n', '\r'], " ")
    }
}

/// An error and its sources on one line: reqwest's top message alone ("error sending
/// request") hides the useful part ("connection refused").
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

/// Appends `suffix` to a base URL unless the URL already ends with it (users paste either the
/// base or the full endpoint).
pub fn endpoint_url(base: &str, full_suffix: &str, after_v1: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    if base.ends_with(full_suffix) {
        base.to_string()
    } else if base.ends_with("/v1") && !after_v1.is_empty() {
        format!("{base}{after_v1}")
    } else {
        format!("{base}{full_suffix}")
    }
}

/// The server's root for endpoints outside the API's path (`/props`, `/api/show`): the base
/// URL without a trailing API path (`/v1/chat/completions`, `/v1`, `/api/chat`).
pub fn server_root(base: &str) -> String {
    let mut root = base.trim().trim_end_matches('/').to_string();
    for suffix in ["/chat/completions", "/api/chat", "/messages", "/v1"] {
        if let Some(r) = root.strip_suffix(suffix) {
            root = r.trim_end_matches('/').to_string();
        }
    }
    root
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_roots() {
        for base in [
            "http://h:1",
            "http://h:1/",
            "http://h:1/v1",
            "http://h:1/v1/chat/completions",
            "http://h:1/api/chat",
            "http://h:1/v1/messages",
        ] {
            assert_eq!(server_root(base), "http://h:1", "{base}");
        }
        assert_eq!(server_root("http://h/proxy/v1"), "http://h/proxy");
    }

    #[test]
    fn endpoint_urls() {
        let f = |b| endpoint_url(b, "/v1/chat/completions", "/chat/completions");
        assert_eq!(f("http://h:1/v1"), "http://h:1/v1/chat/completions");
        assert_eq!(f("http://h:1/v1/"), "http://h:1/v1/chat/completions");
        assert_eq!(f("http://h:1"), "http://h:1/v1/chat/completions");
        assert_eq!(
            f("http://h:1/v1/chat/completions"),
            "http://h:1/v1/chat/completions"
        );
        assert_eq!(
            endpoint_url("http://h:11434", "/api/chat", ""),
            "http://h:11434/api/chat"
        );
        assert_eq!(
            endpoint_url("http://h/api/chat", "/api/chat", ""),
            "http://h/api/chat"
        );
    }
}
