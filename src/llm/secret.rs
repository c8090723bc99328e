//! API keys as a type that cannot leak by accident, and the redactor that scrubs them from text.
//!
//! A [`Secret`] prints as `***` in `Debug`; its value is only reachable through
//! [`Secret::expose`], which the transports call when they build a header. Every piece of text
//! that leaves the `llm` layer for a person or a file (error messages, echoed bodies, audit
//! files) goes through a [`Redactor`] that knows the secret values in use.

use std::fmt;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Environment variables that hold LLM keys by convention; their values are always redacted,
/// even when the configured provider does not use them, because a prompt or an echoing proxy
/// can still carry them.
pub const WELL_KNOWN_KEY_VARS: &[&str] =
    &["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"];

/// Values shorter than this are not treated as secrets: redacting "a" or "1" would shred
/// every message, and no real API key is that short.
const MIN_SECRET_LEN: usize = 6;

/// An API key. `Debug` never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value itself, for building an authentication header and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Replaces every occurrence of known secret values in a text.
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    pub fn new() -> Self {
        Redactor::default()
    }

    /// A redactor that knows the values of [`WELL_KNOWN_KEY_VARS`] (and `extra_vars`) in the
    /// current environment.
    pub fn from_env(extra_vars: &[&str]) -> Self {
        let mut r = Redactor::new();
        for var in WELL_KNOWN_KEY_VARS.iter().chain(extra_vars) {
            if let Ok(v) = std::env::var(var) {
                r.add(&v);
            }
        }
        r
    }

    /// Remembers one more secret value (ignored when too short to be a key).
    pub fn add(&mut self, value: &str) {
        let value = value.trim();
        if value.len() >= MIN_SECRET_LEN && !self.secrets.iter().any(|s| s == value) {
            self.secrets.push(value.to_string());
            // Longest first, so a key that contains another key is replaced whole.
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    pub fn with(mut self, secret: &Secret) -> Self {
        self.add(secret.expose());
        self
    }

    /// Merges the secrets another redactor knows.
    pub fn merge(&mut self, other: &Redactor) {
        for s in &other.secrets {
            self.add(s);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every known secret replaced by [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), REDACTED);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_value() {
        let s = Secret::new("sk-very-secret-123");
        assert!(!format!("{s:?}").contains("very-secret"));
        assert_eq!(s.expose(), "sk-very-secret-123");
    }

    #[test]
    fn redacts_every_occurrence_and_longest_first() {
        let r = Redactor::new()
            .with(&Secret::new("abcdef"))
            .with(&Secret::new("abcdef-longer"));
        let out = r.redact("key=abcdef-longer and abcdef, Bearer abcdef");
        assert_eq!(out, "key=[REDACTED] and [REDACTED], Bearer [REDACTED]");
    }

    #[test]
    fn short_values_are_not_secrets() {
        let r = Redactor::new().with(&Secret::new("ab"));
        assert!(r.is_empty());
        assert_eq!(r.redact("ab ab"), "ab ab");
    }
}
