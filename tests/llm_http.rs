//! The LLM transports against small fake HTTP servers on 127.0.0.1.
//!
//! Each fake server is a `TcpListener` in a thread that answers a bounded number of requests
//! from a handler (request index, captured request) -> canned response, records what it
//! received, and stops by itself after its last request or a deadline. Covered: the three wire
//! formats, JSON-mode fallback, 429-then-success, 5xx exhausting retries, no retry on other
//! 4xx, timeouts, refused connections, garbage bodies, the response cache, the audit log and
//! key redaction.

use gemmtune::llm::*;
use serde_json::{json, Value};
use std::net::TcpListener;
use std::time::Duration;

mod common;
use common::fake_http::*;

const KEY: &str = "sk-test-planted-0123456789abcdef";
fn config(provider: Provider, url: &str) -> LlmConfig {
    let mut c = LlmConfig::new(provider, url, "test-model");
    c.retry = RetryPolicy {
        retries: 2,
        base: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        max_retry_after: Duration::from_millis(200),
    };
    c.timeout = Duration::from_secs(10);
    c.connect_timeout = Duration::from_secs(2);
    c
}

fn with_key(mut c: LlmConfig) -> LlmConfig {
    c.key = Some(Secret::new(KEY));
    c.key_env = Some("GEMMTUNE_TEST_KEY".into());
    c
}

fn openai_reply(text: &str) -> Value {
    json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    })
}

fn request() -> ChatRequest {
    ChatRequest::new("You tune GEMM kernels.", "Propose one config.")
        .temperature(0.2)
        .max_tokens(64)
}

#[test]
fn openai_format_round_trip() {
    let server = FakeServer::start(1, Box::new(|_, _| ok(openai_reply("{\"MT0\": 128}"))));
    let client = OpenAiClient::new(with_key(config(
        Provider::OpenAi,
        &format!("{}/v1", server.url),
    )))
    .unwrap();
    let reply = client.chat(&request().json(true)).unwrap();
    assert_eq!(reply.text, "{\"MT0\": 128}");
    assert_eq!(
        reply.usage,
        Some(Usage {
            input_tokens: 11,
            output_tokens: 7
        })
    );
    assert!(!reply.from_cache);

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.headers["authorization"], format!("Bearer {KEY}"));
    assert_eq!(r.body["model"], "test-model");
    assert_eq!(
        r.body["messages"][0],
        json!({"role": "system", "content": "You tune GEMM kernels."})
    );
    assert_eq!(
        r.body["messages"][1],
        json!({"role": "user", "content": "Propose one config."})
    );
    assert_eq!(r.body["max_tokens"], 64);
    assert_eq!(r.body["response_format"], json!({"type": "json_object"}));
    assert!((r.body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
    assert_eq!(
        client.endpoint().url,
        format!("{}/v1/chat/completions", server.url)
    );
}

#[test]
fn openai_json_mode_rejected_is_retried_without_it_and_remembered() {
    let server = FakeServer::start(
        3,
        Box::new(|_, req| {
            if req.body.get("response_format").is_some() {
                status(
                    400,
                    r#"{"error": {"message": "Unrecognized request argument supplied: response_format"}}"#,
                )
            } else {
                ok(openai_reply("[1, 2]"))
            }
        }),
    );
    let client = OpenAiClient::new(config(Provider::OpenAi, &server.url)).unwrap();
    assert_eq!(client.chat(&request().json(true)).unwrap().text, "[1, 2]");
    assert_eq!(client.chat(&request().json(true)).unwrap().text, "[1, 2]");
    let reqs = server.requests();
    assert_eq!(
        reqs.len(),
        3,
        "one rejected try, one retry, then no more response_format"
    );
    assert!(reqs[0].body.get("response_format").is_some());
    assert!(reqs[1].body.get("response_format").is_none());
    assert!(reqs[2].body.get("response_format").is_none());
    assert!(
        !reqs[0].headers.contains_key("authorization"),
        "no key configured, none sent"
    );
}

#[test]
fn ollama_format_round_trip() {
    let server = FakeServer::start(
        1,
        Box::new(|_, _| {
            ok(json!({
                "model": "test-model", "done": true,
                "message": {"role": "assistant", "content": "{'MT0': 64}"},
                "prompt_eval_count": 20, "eval_count": 5
            }))
        }),
    );
    let client = connect(&config(Provider::Ollama, &server.url)).unwrap();
    let reply = client.chat(&request().json(true)).unwrap();
    assert_eq!(reply.text, "{'MT0': 64}");
    assert_eq!(
        reply.usage,
        Some(Usage {
            input_tokens: 20,
            output_tokens: 5
        })
    );
    assert_eq!(extract::json_values(&reply.text), vec![json!({"MT0": 64})]);
    let r = &server.requests()[0];
    assert_eq!(r.path, "/api/chat");
    assert_eq!(r.body["format"], "json");
    assert_eq!(r.body["stream"], false);
    assert_eq!(r.body["options"]["num_predict"], 64);
    assert_eq!(r.body["messages"][0]["role"], "system");
    assert_eq!(client.endpoint().provider, "ollama");
}

#[test]
fn anthropic_format_round_trip() {
    let server = FakeServer::start(
        1,
        Box::new(|_, _| {
            ok(json!({
                "id": "msg_1", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": "Here: "}, {"type": "text", "text": "{\"MT1\": 32}"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 30, "output_tokens": 9}
            }))
        }),
    );
    let client = connect(&with_key(config(Provider::Anthropic, &server.url))).unwrap();
    let reply = client.chat(&request()).unwrap();
    assert_eq!(reply.text, "Here: {\"MT1\": 32}");
    assert_eq!(
        reply.usage,
        Some(Usage {
            input_tokens: 30,
            output_tokens: 9
        })
    );
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.headers["x-api-key"], KEY);
    assert_eq!(r.headers["anthropic-version"], "2023-06-01");
    assert!(!r.headers.contains_key("authorization"));
    assert_eq!(r.body["system"], "You tune GEMM kernels.");
    assert_eq!(r.body["max_tokens"], 64);
    assert_eq!(
        r.body["messages"],
        json!([{"role": "user", "content": "Propose one config."}])
    );
}

#[test]
fn anthropic_without_key_is_a_clear_error_before_any_request() {
    let server = FakeServer::start(1, Box::new(|_, _| ok(json!({}))));
    let client = AnthropicClient::new(config(Provider::Anthropic, &server.url)).unwrap();
    let err = client.chat(&request()).unwrap_err();
    assert!(matches!(err, LlmError::MissingKey { .. }), "{err}");
    assert!(err.to_string().contains("ANTHROPIC_API_KEY"));
    assert_eq!(server.hits(), 0);
}

#[test]
fn rate_limit_then_success() {
    let server = FakeServer::start(
        2,
        Box::new(|i, _| {
            if i == 0 {
                Canned {
                    headers: vec![("Retry-After", "0.05".into())],
                    ..status(429, r#"{"error": "slow down"}"#)
                }
            } else {
                ok(openai_reply("fine"))
            }
        }),
    );
    let client = OpenAiClient::new(config(Provider::OpenAi, &server.url)).unwrap();
    assert_eq!(client.chat(&request()).unwrap().text, "fine");
    assert_eq!(server.hits(), 2);
}

#[test]
fn server_errors_exhaust_retries() {
    let server = FakeServer::start(3, Box::new(|_, _| status(500, "upstream exploded")));
    let client = OpenAiClient::new(config(Provider::OpenAi, &server.url)).unwrap();
    let err = client.chat(&request()).unwrap_err();
    assert!(
        matches!(err, LlmError::Exhausted { attempts: 3, .. }),
        "{err:?}"
    );
    assert!(
        matches!(err.root(), LlmError::Http { status: 500, body, .. } if body.contains("upstream exploded"))
    );
    assert_eq!(server.hits(), 3, "1 try + 2 retries");
}

#[test]
fn client_errors_are_not_retried() {
    let server = FakeServer::start(
        1,
        Box::new(|_, _| status(404, r#"{"error": "no such model"}"#)),
    );
    let client = OpenAiClient::new(config(Provider::OpenAi, &server.url)).unwrap();
    let err = client.chat(&request()).unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 404, .. }), "{err:?}");
    assert!(err.to_string().contains("no such model"));
    assert_eq!(server.hits(), 1);
}

#[test]
fn slow_server_times_out() {
    let server = FakeServer::start(
        1,
        Box::new(|_, _| Canned {
            delay: Duration::from_millis(1500),
            ..ok(openai_reply("too late"))
        }),
    );
    let mut cfg = config(Provider::OpenAi, &server.url);
    cfg.timeout = Duration::from_millis(200);
    cfg.retry = RetryPolicy::none();
    let client = OpenAiClient::new(cfg).unwrap();
    let err = client.chat(&request()).unwrap_err();
    assert!(matches!(err, LlmError::Timeout { .. }), "{err:?}");
}

#[test]
fn refused_connection_is_a_transport_error() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut cfg = config(Provider::OpenAi, &format!("http://127.0.0.1:{port}"));
    cfg.retry.retries = 1;
    let err = OpenAiClient::new(cfg)
        .unwrap()
        .chat(&request())
        .unwrap_err();
    assert!(matches!(err.root(), LlmError::Transport { .. }), "{err:?}");
    assert!(
        matches!(err, LlmError::Exhausted { attempts: 2, .. }),
        "transport errors are retried: {err:?}"
    );
}

#[test]
fn garbage_bodies_are_bad_responses() {
    let server = FakeServer::start(
        4,
        Box::new(|i, _| match i {
            0 => status(200, "<html>definitely not json"),
            1 => ok(json!({"choices": []})),
            2 => ok(json!({"error": {"message": "provider down"}})),
            _ => ok(json!({"choices": [{"message": {"content": null}}]})),
        }),
    );
    let mut cfg = config(Provider::OpenAi, &server.url);
    cfg.retry = RetryPolicy::none();
    let client = OpenAiClient::new(cfg).unwrap();
    for expect in ["not JSON", "no choices", "provider down", "not text"] {
        let err = client.chat(&request()).unwrap_err();
        assert!(matches!(err, LlmError::BadResponse { .. }), "{err:?}");
        assert!(
            err.to_string().contains(expect),
            "{err} should mention {expect}"
        );
    }
    assert_eq!(server.hits(), 4);

    let ollama = FakeServer::start(1, Box::new(|_, _| ok(json!({"message": 5}))));
    let err = connect(&config(Provider::Ollama, &ollama.url))
        .unwrap()
        .chat(&request())
        .unwrap_err();
    assert!(matches!(err, LlmError::BadResponse { .. }), "{err:?}");

    let anth = FakeServer::start(
        1,
        Box::new(|_, _| ok(json!({"type": "error", "error": {"type": "overloaded_error"}}))),
    );
    let err = connect(&with_key(config(Provider::Anthropic, &anth.url)))
        .unwrap()
        .chat(&request())
        .unwrap_err();
    assert!(err.to_string().contains("overloaded_error"), "{err}");
}

#[test]
fn cache_answers_a_repeated_request_without_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start(2, Box::new(|i, _| ok(openai_reply(&format!("answer {i}")))));
    let cfg = config(Provider::OpenAi, &server.url);
    {
        let client = CachedClient::new(
            OpenAiClient::new(cfg.clone()).unwrap(),
            ResponseCache::new(dir.path()),
        );
        let first = client.chat(&request()).unwrap();
        let second = client.chat(&request()).unwrap();
        assert_eq!(first.text, "answer 0");
        assert!(!first.from_cache);
        assert_eq!(second.text, "answer 0");
        assert!(second.from_cache);
        assert_eq!(second.usage, first.usage);
        assert_eq!(server.hits(), 1);
    }
    // A rerun (new client, same directory) is free too; a different prompt is not.
    let client = CachedClient::new(
        OpenAiClient::new(cfg).unwrap(),
        ResponseCache::new(dir.path()),
    );
    assert!(client.chat(&request()).unwrap().from_cache);
    let other = client.chat(&request().temperature(0.9)).unwrap();
    assert_eq!(other.text, "answer 1");
    assert_eq!(server.hits(), 2);
}

#[test]
fn failures_are_not_cached() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start(
        2,
        Box::new(|i, _| {
            if i == 0 {
                status(400, "bad")
            } else {
                ok(openai_reply("ok"))
            }
        }),
    );
    let client = CachedClient::new(
        OpenAiClient::new(config(Provider::OpenAi, &server.url)).unwrap(),
        ResponseCache::new(dir.path()),
    );
    assert!(client.chat(&request()).is_err());
    assert_eq!(client.chat(&request()).unwrap().text, "ok");
    assert_eq!(server.hits(), 2);
}

/// A server that echoes the request's headers back: in the error body of a 401, and inside
/// the reply text of a 200, as a careless proxy might.
fn echoing_server(n: usize) -> FakeServer {
    FakeServer::start(
        n,
        Box::new(|i, req| {
            let echo = format!("you sent: {} url-ish ?key={KEY}", req.raw_headers);
            if i == 0 {
                status(401, &json!({"error": echo}).to_string())
            } else {
                ok(openai_reply(&echo))
            }
        }),
    )
}

#[test]
fn key_never_appears_in_errors_or_debug_output() {
    let server = echoing_server(1);
    let cfg = with_key(config(Provider::OpenAi, &server.url));
    assert!(!format!("{cfg:?}").contains(KEY));
    let client = OpenAiClient::new(cfg).unwrap();
    assert!(!format!("{client:?}").contains(KEY));
    let err = client.chat(&request()).unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 401, .. }));
    let shown = format!("{err} / {err:?}");
    assert!(shown.contains("[REDACTED]"), "{shown}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(!shown.contains("0123456789abcdef"), "{shown}");
}

#[test]
fn audit_files_hold_every_prompt_and_reply_but_no_key() {
    // Planted in the environment the way a user would provide it.
    const VAR: &str = "GEMMTUNE_TEST_AUDIT_KEY";
    std::env::set_var(VAR, KEY);
    let server = echoing_server(2);
    let opts = LlmOptions {
        url: Some(format!("{}/v1", server.url)),
        model: Some("echo".into()),
        key_env: Some(VAR.into()),
        retries: Some(0),
        ..LlmOptions::default()
    };
    let cfg = LlmConfig::from_options(&opts).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::new(dir.path().join("llm"))
        .unwrap()
        .with_redactor(&cfg.redactor());
    let client = AuditedClient::new(connect(&cfg).unwrap(), log);

    assert!(client.chat(&request()).is_err());
    let reply = client
        .chat(&ChatRequest::new("sys", "second prompt"))
        .unwrap();
    assert!(reply.text.contains(KEY), "the server really echoed the key");

    let audit = dir.path().join("llm");
    let mut names: Vec<String> = std::fs::read_dir(&audit)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "001-meta.json",
            "001-reply.txt",
            "001-request.json",
            "002-meta.json",
            "002-reply.txt",
            "002-request.json"
        ]
    );
    let read = |n: &str| std::fs::read_to_string(audit.join(n)).unwrap();
    assert!(read("001-request.json").contains("Propose one config."));
    assert!(read("001-reply.txt").starts_with("error: "));
    assert!(read("002-request.json").contains("second prompt"));
    assert!(read("002-reply.txt").contains("[REDACTED]"));
    for n in &names {
        assert!(!read(n).contains(KEY), "{n} leaks the key");
    }

    // Reopening the directory continues the numbering.
    let log = AuditLog::new(&audit).unwrap();
    let seq = log
        .record_request(&client.endpoint(), &ChatRequest::new("s", "u"))
        .unwrap();
    assert_eq!(seq, 3);
}

#[test]
fn a_bad_request_does_not_switch_json_mode_off() {
    let server = FakeServer::start(
        4,
        Box::new(|_, _| status(400, r#"{"error": "context too long"}"#)),
    );
    let client = OpenAiClient::new(config(Provider::OpenAi, &server.url)).unwrap();
    let err = client.chat(&request().json(true)).unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 400, .. }), "{err:?}");
    assert!(client.chat(&request().json(true)).is_err());
    let reqs = server.requests();
    assert_eq!(
        reqs.len(),
        4,
        "each call: one try with the field, one without"
    );
    assert!(reqs[0].body.get("response_format").is_some());
    assert!(reqs[1].body.get("response_format").is_none());
    assert!(reqs[2].body.get("response_format").is_some());
    assert!(reqs[3].body.get("response_format").is_none());
}

// ---- Constrained replies: the reply's JSON schema in each API's form ----

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "reasoning": {"type": "string", "maxLength": 160},
            "config": {"type": "string", "enum": ["MT128x64x64_A", "MT64x64x64_B"]}
        },
        "required": ["reasoning", "config"],
        "additionalProperties": false
    })
}

fn schema_request() -> ChatRequest {
    request().schema("kernel_edit", schema()).seed(7)
}

#[test]
fn openai_sends_the_schema_as_strict_json_schema() {
    let server = FakeServer::start(1, Box::new(|_, _| ok(openai_reply("{}"))));
    let client = OpenAiClient::new(config(Provider::OpenAi, &server.url)).unwrap();
    let reply = client.chat(&schema_request()).unwrap();
    assert!(reply.notices.is_empty());
    let body = &server.requests()[0].body;
    let rf = &body["response_format"];
    assert_eq!(rf["type"], "json_schema");
    assert_eq!(rf["json_schema"]["name"], "kernel_edit");
    assert_eq!(rf["json_schema"]["strict"], true);
    let sent = &rf["json_schema"]["schema"];
    assert_eq!(
        sent["properties"]["config"],
        schema()["properties"]["config"]
    );
    // Strict mode takes no string lengths; everything else goes as given.
    assert_eq!(
        sent["properties"]["reasoning"],
        json!({"type": "string"}),
        "{sent}"
    );
    assert_eq!(sent["additionalProperties"], false);
    assert_eq!(body["seed"], 7);
    assert!(body.get("json_schema").is_none());
}

#[test]
fn llamacpp_sends_its_own_json_schema_field_and_reads_the_context_from_props() {
    let server = FakeServer::start(
        2,
        Box::new(|_, req| {
            if req.path == "/props" {
                ok(json!({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}))
            } else {
                ok(openai_reply("{}"))
            }
        }),
    );
    let client = connect(&config(Provider::LlamaCpp, &format!("{}/v1", server.url))).unwrap();
    assert_eq!(client.context_tokens(), Some(8192));
    assert_eq!(
        client.context_tokens(),
        Some(8192),
        "asked once, remembered"
    );
    client.chat(&schema_request()).unwrap();
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].path, "/props");
    let body = &reqs[1].body;
    assert_eq!(reqs[1].path, "/v1/chat/completions");
    assert_eq!(
        body["json_schema"],
        schema(),
        "llama.cpp keeps the length limits"
    );
    assert!(body.get("response_format").is_none());
    assert_eq!(client.endpoint().provider, "llamacpp");
}

#[test]
fn openai_compatible_servers_say_their_context_through_props_or_models() {
    // vLLM: no /props, a model list with max_model_len.
    let server = FakeServer::start(
        2,
        Box::new(|_, req| match req.path.as_str() {
            "/v1/models" => ok(json!({"object": "list", "data": [
                {"id": "other", "max_model_len": 4096},
                {"id": "test-model", "max_model_len": 32768}
            ]})),
            _ => status(404, "not found"),
        }),
    );
    let client =
        OpenAiClient::new(config(Provider::OpenAi, &format!("{}/v1", server.url))).unwrap();
    assert_eq!(client.context_tokens(), Some(32768));
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/props", "/v1/models"]);
    // A server that says nothing: unknown, and the port assumes a size and says so once.
    let server = FakeServer::start(
        4,
        Box::new(|_, req| match req.path.as_str() {
            "/v1/chat/completions" => ok(openai_reply("{\"a\": 1}")),
            _ => status(404, "not found"),
        }),
    );
    let client = OpenAiClient::new(config(Provider::OpenAi, &server.url)).unwrap();
    assert_eq!(client.context_tokens(), None);
    let port = gemmtune::llm::port::ClientPort::new(client);
    use gemmtune::search::LlmPort;
    assert_eq!(
        port.limits().context_tokens,
        gemmtune::llm::port::ASSUMED_CONTEXT_TOKENS
    );
    let ask = gemmtune::search::LlmRequest {
        system: "s".into(),
        user: "u".into(),
        ..Default::default()
    };
    let first = port.complete(&ask).unwrap();
    assert!(
        first.notices.iter().any(|n| n.contains("--llm-context")),
        "{:?}",
        first.notices
    );
    assert_eq!((first.input_tokens, first.output_tokens), (11, 7));
    assert!(port.complete(&ask).unwrap().notices.is_empty(), "said once");
    // --llm-context wins without asking anyone.
    let server = FakeServer::start(1, Box::new(|_, _| status(500, "unused")));
    let mut c = config(Provider::LlamaCpp, &server.url);
    c.context_tokens = Some(4096);
    assert_eq!(connect(&c).unwrap().context_tokens(), Some(4096));
    assert_eq!(server.hits(), 0);
}

#[test]
fn ollama_sends_the_schema_as_format_and_sizes_num_ctx_within_the_model() {
    let server = FakeServer::start(
        2,
        Box::new(|_, req| {
            if req.path == "/api/show" {
                ok(
                    json!({"parameters": "temperature 0.7", "model_info": {"general.architecture": "llama", "llama.context_length": 4096}}),
                )
            } else {
                ok(json!({"message": {"role": "assistant", "content": "{}"}, "done": true}))
            }
        }),
    );
    let client = connect(&config(Provider::Ollama, &server.url)).unwrap();
    assert_eq!(client.context_tokens(), Some(4096));
    let long = ChatRequest::new("s", "x".repeat(20_000))
        .max_tokens(64)
        .schema("kernel_edit", schema())
        .seed(3);
    client.chat(&long).unwrap();
    let reqs = server.requests();
    assert_eq!(reqs[0].path, "/api/show");
    assert_eq!(reqs[0].body["model"], "test-model");
    let body = &reqs[1].body;
    assert_eq!(body["format"], schema());
    assert_eq!(body["options"]["seed"], 3);
    assert_eq!(
        body["options"]["num_ctx"], 4096,
        "what the prompt needs, within the model's window"
    );
    // num_ctx from the model's parameters wins over its trained length.
    let server = FakeServer::start(
        1,
        Box::new(|_, _| {
            ok(
                json!({"parameters": "num_ctx 16384\nstop \"x\"", "model_info": {"llama.context_length": 131072}}),
            )
        }),
    );
    let client = connect(&config(Provider::Ollama, &server.url)).unwrap();
    assert_eq!(client.context_tokens(), Some(16384));
}

#[test]
fn anthropic_constrains_the_reply_with_a_forced_tool() {
    let server = FakeServer::start(
        1,
        Box::new(|_, _| {
            ok(json!({
                "type": "message", "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me pick."},
                    {"type": "tool_use", "id": "t1", "name": "kernel_edit",
                     "input": {"reasoning": "fits one wave", "config": "MT64x64x64_B"}}
                ],
                "usage": {"input_tokens": 40, "output_tokens": 12}
            }))
        }),
    );
    let client = connect(&with_key(config(Provider::Anthropic, &server.url))).unwrap();
    let reply = client.chat(&schema_request()).unwrap();
    let v: Value = serde_json::from_str(&reply.text).unwrap();
    assert_eq!(v["config"], "MT64x64x64_B", "the tool's input is the reply");
    let body = &server.requests()[0].body;
    assert_eq!(body["tools"][0]["name"], "kernel_edit");
    assert_eq!(body["tools"][0]["input_schema"], schema());
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "kernel_edit"})
    );
    assert_eq!(
        body["system"], "You tune GEMM kernels.",
        "the tool keeps the reply JSON; no instruction needed"
    );
    assert_eq!(
        client.context_tokens(),
        None,
        "a proxy URL has no documented window"
    );
}

/// Every transport: a server that refuses the schema (400) is asked again in plain JSON
/// mode, the change is said once, and later requests go without the schema.
#[test]
fn a_refused_schema_falls_back_to_plain_json_once_on_every_transport() {
    for provider in [
        Provider::OpenAi,
        Provider::LlamaCpp,
        Provider::Ollama,
        Provider::Anthropic,
    ] {
        let server = FakeServer::start(
            3,
            Box::new(move |_, req| {
                let b = &req.body;
                let constrained = b["response_format"]["type"] == "json_schema"
                    || b.get("json_schema").is_some()
                    || b["format"].is_object()
                    || b.get("tools").is_some();
                if constrained {
                    status(400, r#"{"error": "unknown field"}"#)
                } else if provider == Provider::Ollama {
                    ok(json!({"message": {"content": "{\"x\": 1}"}}))
                } else if provider == Provider::Anthropic {
                    ok(json!({"content": [{"type": "text", "text": "{\"x\": 1}"}]}))
                } else {
                    ok(openai_reply("{\"x\": 1}"))
                }
            }),
        );
        let client = connect(&with_key(config(provider, &server.url))).unwrap();
        let first = client.chat(&schema_request()).unwrap();
        assert_eq!(first.text, "{\"x\": 1}", "{provider}");
        assert_eq!(first.notices.len(), 1, "{provider}: {:?}", first.notices);
        assert!(
            first.notices[0].contains("refused a JSON schema"),
            "{provider}: {:?}",
            first.notices
        );
        let second = client.chat(&schema_request()).unwrap();
        assert!(second.notices.is_empty(), "{provider}: said once");
        let reqs = server.requests();
        assert_eq!(reqs.len(), 3, "{provider}: refused, plain, plain");
        let plain = &reqs[2].body;
        match provider {
            Provider::OpenAi | Provider::LlamaCpp => {
                assert_eq!(plain["response_format"], json!({"type": "json_object"}))
            }
            Provider::Ollama => assert_eq!(plain["format"], "json"),
            Provider::Anthropic => {
                assert!(plain["system"].as_str().unwrap().contains("JSON only"))
            }
        }
    }
}
