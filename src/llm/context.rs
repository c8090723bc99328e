//! How many tokens the model's context holds: asked of the server where it can say.
//!
//! The search sizes its prompts and replies so that the prompt plus `max_tokens` fits the
//! context (a llama.cpp server started with `-c 8192` rejects or truncates anything longer).
//! `--llm-context` wins when given; otherwise each transport asks its server once:
//! llama.cpp's `GET /props` (`default_generation_settings.n_ctx`), vLLM's `GET /v1/models`
//! (`max_model_len`), Ollama's `POST /api/show` (`num_ctx` in the model's parameters, else
//! `<arch>.context_length` in its model info). Hosted APIs whose windows are documented and
//! large get them from [`documented_context`]. A server that says nothing leaves it `None`,
//! and the caller assumes a conservative size and says so.

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::config::Provider;
use super::http::{server_root, HttpTransport};

/// llama.cpp: the context of a slot, from `/props`.
pub fn llamacpp_props(http: &HttpTransport, base_url: &str, headers: &HeaderMap) -> Option<u32> {
    let v = http
        .get_json_once(&format!("{}/props", server_root(base_url)), headers)
        .ok()?;
    v.pointer("/default_generation_settings/n_ctx")
        .or_else(|| v.get("n_ctx"))
        .and_then(as_tokens)
}

/// vLLM (and other OpenAI-compatible servers that report it): `max_model_len` of the model in
/// `/v1/models` (the one named `model`, or the only one listed).
pub fn openai_models(
    http: &HttpTransport,
    base_url: &str,
    headers: &HeaderMap,
    model: &str,
) -> Option<u32> {
    let v = http
        .get_json_once(&format!("{}/v1/models", server_root(base_url)), headers)
        .ok()?;
    let models = v.get("data")?.as_array()?;
    let entry = models
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
        .or_else(|| (models.len() == 1).then(|| &models[0]))?;
    entry.get("max_model_len").and_then(as_tokens)
}

/// Ollama: the model's `num_ctx` parameter, else its trained context length.
pub fn ollama_show(
    http: &HttpTransport,
    base_url: &str,
    headers: &HeaderMap,
    model: &str,
) -> Option<u32> {
    let v = http
        .post_json_once(
            &format!("{}/api/show", server_root(base_url)),
            headers,
            &serde_json::json!({ "model": model }),
        )
        .ok()?;
    let from_params = v.get("parameters").and_then(Value::as_str).and_then(|p| {
        p.lines().find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some("num_ctx"))
                .then(|| words.next()?.parse::<u32>().ok())
                .flatten()
        })
    });
    from_params.or_else(|| {
        v.get("model_info")?
            .as_object()?
            .iter()
            .find(|(k, _)| k.ends_with(".context_length"))
            .and_then(|(_, n)| as_tokens(n))
    })
}

/// The documented window of hosted APIs whose every current model has at least this much.
pub fn documented_context(provider: Provider, base_url: &str) -> Option<u32> {
    let host = reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default();
    match provider {
        Provider::Anthropic if host.ends_with("anthropic.com") => Some(200_000),
        Provider::OpenAi if host == "api.openai.com" => Some(128_000),
        _ => None,
    }
}

fn as_tokens(v: &Value) -> Option<u32> {
    v.as_u64()
        .filter(|n| *n > 0)
        .map(|n| n.min(u32::MAX as u64) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_windows_only_for_their_hosts() {
        assert_eq!(
            documented_context(Provider::Anthropic, "https://api.anthropic.com"),
            Some(200_000)
        );
        assert_eq!(
            documented_context(Provider::OpenAi, "https://api.openai.com/v1"),
            Some(128_000)
        );
        assert_eq!(
            documented_context(Provider::OpenAi, "http://127.0.0.1:8080/v1"),
            None
        );
        assert_eq!(
            documented_context(Provider::Anthropic, "http://proxy:1"),
            None
        );
    }
}
