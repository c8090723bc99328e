//! `LlmConfig`: which API, where, which model, which key, and how patient to be.
//!
//! Built from the CLI's `--llm-*` options ([`LlmOptions`], flattenable into any clap command)
//! and the environment. The key never travels as a plain string: it is read from the named
//! environment variable into a [`Secret`], and the config hands out a [`Redactor`] that knows
//! it. A provider that needs a key and finds none is a [`LlmError::MissingKey`] naming the
//! variable.

use clap::Args;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::error::LlmError;
use super::retry::RetryPolicy;
use super::secret::{Redactor, Secret};

/// The wire formats gemmtune speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// `/v1/chat/completions`: OpenAI, vLLM, llama.cpp server, OpenRouter, LM Studio, ...
    OpenAi,
    /// llama.cpp's server: the OpenAI wire format with llama.cpp's own `json_schema` field and
    /// its `/props` (context size).
    LlamaCpp,
    /// Ollama's native `/api/chat`.
    Ollama,
    /// Anthropic's `/v1/messages`.
    Anthropic,
}

impl Provider {
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::LlamaCpp => "llamacpp",
            Provider::Ollama => "ollama",
            Provider::Anthropic => "anthropic",
        }
    }

    /// Where the provider listens when no `--llm-url` is given.
    pub fn default_url(self) -> &'static str {
        match self {
            Provider::OpenAi => "https://api.openai.com/v1",
            Provider::LlamaCpp => "http://127.0.0.1:8080",
            Provider::Ollama => "http://127.0.0.1:11434",
            Provider::Anthropic => "https://api.anthropic.com",
        }
    }

    /// Guesses the provider from a URL when `--llm-provider` is not given: Anthropic's host,
    /// Ollama's port or path; everything else is taken to speak the OpenAI format, which most
    /// self-hosted servers do.
    pub fn infer(url: &reqwest::Url) -> Provider {
        let host = url.host_str().unwrap_or("");
        if host.ends_with("anthropic.com") || url.path().ends_with("/messages") {
            Provider::Anthropic
        } else if url.port() == Some(11434) || url.path().ends_with("/api/chat") {
            Provider::Ollama
        } else {
            Provider::OpenAi
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Provider {
    type Err = LlmError;

    fn from_str(s: &str) -> Result<Self, LlmError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" | "vllm" | "openrouter" => Ok(Provider::OpenAi),
            "llamacpp" | "llama.cpp" | "llama-server" => Ok(Provider::LlamaCpp),
            "ollama" => Ok(Provider::Ollama),
            "anthropic" | "claude" => Ok(Provider::Anthropic),
            other => Err(LlmError::Config(format!(
                "unknown LLM provider {other:?} (expected openai, llamacpp, ollama or anthropic)"
            ))),
        }
    }
}

/// The `--llm-*` command-line options. Flatten into a clap command with
/// `#[command(flatten)] llm: LlmOptions`.
#[derive(Debug, Clone, Default, Args)]
pub struct LlmOptions {
    /// API format: openai (also vLLM, OpenRouter, LM Studio), llamacpp, ollama or anthropic.
    /// Guessed from --llm-url when left out (anything else is taken to speak openai).
    #[arg(long = "llm-provider", value_name = "NAME")]
    pub provider: Option<String>,
    /// Base URL of the LLM server, e.g. http://127.0.0.1:8080/v1.
    #[arg(long = "llm-url", value_name = "URL")]
    pub url: Option<String>,
    /// Model name as the server knows it.
    #[arg(long = "llm-model", value_name = "MODEL")]
    pub model: Option<String>,
    /// Environment variable holding the API key (default: OPENAI_API_KEY or ANTHROPIC_API_KEY
    /// for the hosted APIs).
    #[arg(long = "llm-key-env", value_name = "NAME")]
    pub key_env: Option<String>,
    /// Overall time limit of one request, in seconds.
    #[arg(long = "llm-timeout", value_name = "SECONDS")]
    pub timeout_s: Option<f64>,
    /// Time limit for opening the connection, in seconds.
    #[arg(long = "llm-connect-timeout", value_name = "SECONDS")]
    pub connect_timeout_s: Option<f64>,
    /// Retries on rate limits, server errors and broken connections.
    #[arg(long = "llm-retries", value_name = "N")]
    pub retries: Option<u32>,
    /// Longest reply, in tokens (default 2048; lowered where the prompt leaves less room in
    /// the context).
    #[arg(long = "llm-max-tokens", value_name = "N")]
    pub max_tokens: Option<u32>,
    /// The model's context window in tokens (prompt plus reply). Default: what the server
    /// says (llama.cpp, vLLM, Ollama), the documented window of the hosted APIs, else 8192.
    #[arg(long = "llm-context", value_name = "TOKENS")]
    pub context_tokens: Option<u32>,
}

impl LlmOptions {
    /// True when the user asked for an LLM at all (any endpoint option given).
    pub fn is_set(&self) -> bool {
        self.provider.is_some() || self.url.is_some() || self.model.is_some()
    }
}

/// Everything a transport needs. `Debug` shows no key.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    pub provider: Provider,
    /// Base URL as given (each transport appends its API path unless already present).
    pub url: String,
    pub model: String,
    /// The variable the key was read from, for messages.
    pub key_env: Option<String>,
    pub key: Option<Secret>,
    /// Overall limit for one attempt (connect, send, wait, read).
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub retry: RetryPolicy,
    /// `max_tokens` when the request leaves it open (Anthropic requires one).
    pub default_max_tokens: u32,
    /// The context window given with `--llm-context`; `None` asks the server.
    pub context_tokens: Option<u32>,
    /// Sent as `anthropic-version`.
    pub anthropic_version: String,
}

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

impl LlmConfig {
    /// A config with defaults for everything but the endpoint, and no key.
    pub fn new(provider: Provider, url: impl Into<String>, model: impl Into<String>) -> Self {
        LlmConfig {
            provider,
            url: url.into(),
            model: model.into(),
            key_env: None,
            key: None,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            retry: RetryPolicy::default(),
            default_max_tokens: 2048,
            context_tokens: None,
            anthropic_version: "2023-06-01".to_string(),
        }
    }

    /// From the CLI options and the process environment.
    pub fn from_options(opts: &LlmOptions) -> Result<Self, LlmError> {
        Self::from_options_with_env(opts, &|name| std::env::var(name).ok())
    }

    /// From the CLI options and an environment lookup (a function, so tests need not touch
    /// the process environment).
    pub fn from_options_with_env(
        opts: &LlmOptions,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, LlmError> {
        let given_provider: Option<Provider> =
            opts.provider.as_deref().map(str::parse).transpose()?;
        let url_text = match (&opts.url, given_provider) {
            (Some(u), _) => u.trim().to_string(),
            (None, Some(p)) => p.default_url().to_string(),
            (None, None) => {
                return Err(LlmError::Config(
                    "give --llm-url or --llm-provider to use an LLM".into(),
                ))
            }
        };
        let url = parse_url(&url_text)?;
        let provider = given_provider.unwrap_or_else(|| Provider::infer(&url));
        let model = match opts.model.as_deref().map(str::trim) {
            Some(m) if !m.is_empty() => m.to_string(),
            _ => {
                return Err(LlmError::Config(format!(
                    "--llm-model is required for {provider} at {url_text}"
                )))
            }
        };

        let mut cfg = LlmConfig::new(provider, url_text, model);
        if let Some(n) = opts.max_tokens {
            if n == 0 {
                return Err(LlmError::Config(
                    "--llm-max-tokens must be at least 1".into(),
                ));
            }
            cfg.default_max_tokens = n;
        }
        if let Some(n) = opts.context_tokens {
            if n < 512 {
                return Err(LlmError::Config(format!(
                    "--llm-context {n} is too small: the prompts need at least 512 tokens"
                )));
            }
            cfg.context_tokens = Some(n);
        }
        if let Some(t) = opts.timeout_s {
            cfg.timeout = seconds("--llm-timeout", t)?;
        }
        if let Some(t) = opts.connect_timeout_s {
            cfg.connect_timeout = seconds("--llm-connect-timeout", t)?;
        }
        if let Some(r) = opts.retries {
            cfg.retry.retries = r;
        }
        let (key_env, key) = resolve_key(provider, &url, opts.key_env.as_deref(), env)?;
        cfg.key_env = key_env;
        cfg.key = key;
        Ok(cfg)
    }

    /// A redactor that knows this config's key and the well-known key variables.
    pub fn redactor(&self) -> Redactor {
        let extra: Vec<&str> = self.key_env.iter().map(String::as_str).collect();
        let mut r = Redactor::from_env(&extra);
        if let Some(k) = &self.key {
            r.add(k.expose());
        }
        r
    }
}

fn parse_url(text: &str) -> Result<reqwest::Url, LlmError> {
    let url = reqwest::Url::parse(text)
        .map_err(|e| LlmError::Config(format!("--llm-url {text:?} is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(LlmError::Config(format!(
            "--llm-url {text:?} must be an http:// or https:// address"
        )));
    }
    Ok(url)
}

fn seconds(flag: &str, value: f64) -> Result<Duration, LlmError> {
    if value.is_finite() && value > 0.0 && value <= 86_400.0 {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(LlmError::Config(format!(
            "{flag} must be a number of seconds between 0 and 86400, got {value}"
        )))
    }
}

/// Which variable holds the key, and its value.
///
/// An explicit `--llm-key-env` must be set. Otherwise the hosted APIs need their usual
/// variable (Anthropic: `ANTHROPIC_API_KEY`; api.openai.com: `OPENAI_API_KEY`; openrouter.ai:
/// `OPENROUTER_API_KEY`, then `OPENAI_API_KEY`). A self-hosted OpenAI-compatible server or
/// Ollama gets no key unless one is named explicitly: sending the user's OpenAI key to an
/// arbitrary server would hand it to whoever runs that server.
fn resolve_key(
    provider: Provider,
    url: &reqwest::Url,
    key_env: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Option<String>, Option<Secret>), LlmError> {
    let lookup = |var: &str| env(var).filter(|v| !v.trim().is_empty());
    if let Some(var) = key_env {
        let var = var.trim();
        if var.is_empty() {
            return Err(LlmError::Config(
                "--llm-key-env needs a variable name".into(),
            ));
        }
        return match lookup(var) {
            Some(v) => Ok((Some(var.to_string()), Some(Secret::new(v.trim())))),
            None => Err(LlmError::MissingKey {
                provider: provider.to_string(),
                var: var.to_string(),
            }),
        };
    }
    let host = url.host_str().unwrap_or("");
    let candidates: &[&str] = match provider {
        Provider::Anthropic => &["ANTHROPIC_API_KEY"],
        Provider::OpenAi if host == "openrouter.ai" || host.ends_with(".openrouter.ai") => {
            &["OPENROUTER_API_KEY", "OPENAI_API_KEY"]
        }
        Provider::OpenAi if host == "api.openai.com" => &["OPENAI_API_KEY"],
        Provider::OpenAi | Provider::LlamaCpp | Provider::Ollama => &[],
    };
    if candidates.is_empty() {
        return Ok((None, None));
    }
    for var in candidates {
        if let Some(v) = lookup(var) {
            return Ok((Some(var.to_string()), Some(Secret::new(v.trim()))));
        }
    }
    Err(LlmError::MissingKey {
        provider: provider.to_string(),
        var: candidates[0].to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn opts(provider: Option<&str>, url: Option<&str>, model: Option<&str>) -> LlmOptions {
        LlmOptions {
            provider: provider.map(String::from),
            url: url.map(String::from),
            model: model.map(String::from),
            ..LlmOptions::default()
        }
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn infers_provider_from_url() {
        let e = env(&[]);
        let c = LlmConfig::from_options_with_env(
            &opts(None, Some("http://127.0.0.1:11434"), Some("m")),
            &e,
        )
        .unwrap();
        assert_eq!(c.provider, Provider::Ollama);
        let c = LlmConfig::from_options_with_env(
            &opts(None, Some("http://localhost:8080/v1"), Some("m")),
            &e,
        )
        .unwrap();
        assert_eq!(c.provider, Provider::OpenAi);
        assert!(c.key.is_none());
    }

    #[test]
    fn missing_key_names_the_variable() {
        let e = env(&[]);
        let err =
            LlmConfig::from_options_with_env(&opts(Some("anthropic"), None, Some("claude")), &e)
                .unwrap_err();
        assert!(matches!(&err, LlmError::MissingKey { var, .. } if var == "ANTHROPIC_API_KEY"));
        assert!(err.to_string().contains("ANTHROPIC_API_KEY"));

        let err = LlmConfig::from_options_with_env(&opts(Some("openai"), None, Some("gpt")), &e)
            .unwrap_err();
        assert!(err.to_string().contains("OPENAI_API_KEY"));

        let mut o = opts(None, Some("http://127.0.0.1:9/v1"), Some("m"));
        o.key_env = Some("MY_LLM_KEY".into());
        let err = LlmConfig::from_options_with_env(&o, &e).unwrap_err();
        assert!(err.to_string().contains("MY_LLM_KEY"));
    }

    #[test]
    fn key_is_read_but_never_printed() {
        let e = env(&[("ANTHROPIC_API_KEY", "sk-ant-planted-0123456789")]);
        let c =
            LlmConfig::from_options_with_env(&opts(Some("claude"), None, Some("c")), &e).unwrap();
        assert_eq!(
            c.key.as_ref().unwrap().expose(),
            "sk-ant-planted-0123456789"
        );
        assert!(!format!("{c:?}").contains("planted"));
        assert_eq!(c.key_env.as_deref(), Some("ANTHROPIC_API_KEY"));
        assert!(c
            .redactor()
            .redact("x sk-ant-planted-0123456789 y")
            .contains("[REDACTED]"));
    }

    #[test]
    fn local_openai_server_does_not_receive_the_openai_key() {
        let e = env(&[("OPENAI_API_KEY", "sk-openai-real-key")]);
        let c = LlmConfig::from_options_with_env(
            &opts(None, Some("http://10.1.2.3:8000/v1"), Some("m")),
            &e,
        )
        .unwrap();
        assert!(c.key.is_none());
    }

    #[test]
    fn rejects_bad_settings() {
        let e = env(&[]);
        assert!(matches!(
            LlmConfig::from_options_with_env(&opts(Some("bard"), None, Some("m")), &e),
            Err(LlmError::Config(_))
        ));
        assert!(
            LlmConfig::from_options_with_env(&opts(None, Some("ftp://x"), Some("m")), &e).is_err()
        );
        assert!(
            LlmConfig::from_options_with_env(&opts(None, Some("not a url"), Some("m")), &e)
                .is_err()
        );
        assert!(
            LlmConfig::from_options_with_env(&opts(None, Some("http://h:1"), None), &e).is_err()
        );
        assert!(LlmConfig::from_options_with_env(&opts(None, None, Some("m")), &e).is_err());
        let mut o = opts(None, Some("http://h:1"), Some("m"));
        o.timeout_s = Some(-1.0);
        assert!(LlmConfig::from_options_with_env(&o, &e).is_err());
        o.timeout_s = Some(f64::NAN);
        assert!(LlmConfig::from_options_with_env(&o, &e).is_err());
    }
}
