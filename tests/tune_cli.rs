//! End-to-end tests of `gemmtune tune` on the sim backend: a plain strategy, usage errors, and
//! the LLM strategy against fake OpenAI-compatible servers (garbage replies fall back to the
//! pattern search or fail with `--fallback error`; partly valid replies are counted; the key
//! never reaches the saved prompts).

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::fake_http::*;

const KEY: &str = "sk-tune-test-planted-9f8e7d6c5b4a";

fn gemmtune(args: &[&str], home: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gemmtune"))
        .args(args)
        .env("GEMMTUNE_CACHE_DIR", home.join("kernels"))
        .env("XDG_CACHE_HOME", home)
        .env("GEMMTUNE_TUNE_TEST_KEY", KEY)
        .output()
        .expect("binary runs")
}

fn result(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap()
}

fn chat_reply(text: &str) -> Canned {
    ok(json!({
        "id": "x", "object": "chat.completion", "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10}
    }))
}

fn files_contain(dir: &Path, needle: &str) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        let p = e.path();
        if p.is_dir() {
            files_contain(&p, needle)
        } else {
            std::fs::read(&p)
                .map(|b| String::from_utf8_lossy(&b).contains(needle))
                .unwrap_or(false)
        }
    })
}

#[test]
fn pattern_tune_on_sim_finds_a_verified_winner() {
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("run");
    let o = gemmtune(
        &[
            "tune",
            "--backend",
            "sim",
            "--max-evals",
            "40",
            "--out",
            out.to_str().unwrap(),
        ],
        home.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = result(&out);
    assert_eq!(r["strategy"], "pattern");
    let winner = r["winner"].as_str().unwrap();
    gemmtune::space::KernelConfig::parse(winner).unwrap();
    assert!(r["evaluations"].as_u64().unwrap() <= 40);
    assert!(r["vendor_median_us"].as_f64().unwrap() > 0.0);
    // Three leaders re-timed in three rounds, the vendor library timed in each of them; the
    // winner's time is the median of its rounds.
    let retimed = r["retimed"].as_array().unwrap();
    assert_eq!(retimed.len(), 3);
    assert_eq!(retimed[0]["config"].as_str().unwrap(), winner);
    let rounds: Vec<f64> = retimed[0]["round_medians_us"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(rounds.len(), 3);
    let mut sorted = rounds.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(r["winner_median_us"].as_f64().unwrap(), sorted[1]);
    assert_eq!(r["vendor_round_medians_us"].as_array().unwrap().len(), 3);
    let svg = std::fs::read_to_string(out.join("convergence.svg")).unwrap();
    assert!(svg.contains("<polyline"));
}

#[test]
fn llm_strategy_without_an_endpoint_is_a_usage_error() {
    let home = tempfile::tempdir().unwrap();
    let o = gemmtune(
        &["tune", "--backend", "sim", "--strategy", "llm"],
        home.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--llm-url"));
    let o = gemmtune(
        &[
            "tune",
            "--backend",
            "sim",
            "--strategy",
            "simulated-annealing",
        ],
        home.path(),
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn garbage_llm_replies_fall_back_and_error_mode_fails() {
    let home = tempfile::tempdir().unwrap();
    let server = FakeServer::start(
        50,
        Box::new(|_, _| chat_reply("I would simply use bigger tiles, they are faster!")),
    );
    let out = home.path().join("run");
    let url = format!("{}/v1", server.url);
    let o = gemmtune(
        &[
            "tune",
            "--backend",
            "sim",
            "--llm-url",
            &url,
            "--llm-model",
            "fake",
            "--llm-key-env",
            "GEMMTUNE_TUNE_TEST_KEY",
            "--max-evals",
            "40",
            "--max-rounds",
            "3",
            "--out",
            out.to_str().unwrap(),
        ],
        home.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = result(&out);
    // Every round fell back, so the summary does not call it an LLM search.
    assert_eq!(r["strategy"], "pattern", "{r}");
    assert_eq!(r["strategy_requested"], "llm");
    let llm = &r["llm"];
    assert_eq!(llm["from_llm"], 0, "{llm}");
    assert!(llm["rounds"].as_u64().unwrap() >= 1);
    assert_eq!(llm["fallback_rounds"], llm["rounds"], "{llm}");
    assert_eq!(llm["input_tokens"], 10 * llm["requests"].as_u64().unwrap());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("strategy llm"), "{text}");
    assert!(text.contains("strategy pattern ("), "{text}");
    assert!(
        r["winner"].is_string(),
        "the fallback still finds a winner: {r}"
    );
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("the pattern search proposes"),
        "{warnings}"
    );
    // The same figures are in the database, one row per round.
    let db = gemmtune::store::Store::open(home.path().join("gemmtune/results.sqlite")).unwrap();
    let rows = db.llm_rounds(None).unwrap();
    assert_eq!(rows.len() as u64, llm["rounds"].as_u64().unwrap());
    assert!(rows.iter().all(|r| r.fell_back && r.from_llm == 0));
    assert!(server.hits() >= 1);
    // Prompts were saved for audit, without the key.
    assert!(out.join("llm").exists());
    assert!(
        !files_contain(&out, KEY),
        "the key leaked into the run directory"
    );

    let out2 = home.path().join("run2");
    let o = gemmtune(
        &[
            "tune",
            "--backend",
            "sim",
            "--llm-url",
            &url,
            "--llm-model",
            "fake",
            "--fallback",
            "error",
            "--max-evals",
            "40",
            "--out",
            out2.to_str().unwrap(),
        ],
        home.path(),
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn partly_valid_llm_replies_are_validated_and_counted() {
    let home = tempfile::tempdir().unwrap();
    let good = "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU2R_WGM8_GRVW8_SVW4_SU0";
    let reply = format!(
        "Here you go:\n```json\n{{\"configs\": [\"{good}\", \"MT999x1x1_garbage\", {{\"MacroTile0\": 128, \"MatrixInstruction\": \"32x32x8\"}},]}}\n```"
    );
    let server = FakeServer::start(50, Box::new(move |_, _| chat_reply(&reply)));
    let out = home.path().join("run");
    let url = format!("{}/v1", server.url);
    let o = gemmtune(
        &[
            "tune",
            "--backend",
            "sim",
            "--llm-url",
            &url,
            "--llm-model",
            "fake",
            "--max-evals",
            "30",
            "--max-rounds",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--json",
        ],
        home.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = result(&out);
    assert!(r["invalid_suggestions"].as_u64().unwrap() >= 2, "{r}");
    assert!(r["evaluations"].as_u64().unwrap() >= 1);
}

/// `--max-evals` is spent when no `--max-rounds` is given: 300 in rounds of 32 needs ten
/// rounds, not the five the default allows.
#[test]
fn max_evals_is_not_cut_by_the_default_round_limit() {
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("run");
    let o = gemmtune(
        &[
            "tune",
            "--backend",
            "sim",
            "--m",
            "4096",
            "--n",
            "128",
            "--k",
            "4096",
            "--strategy",
            "genetic",
            "--max-evals",
            "300",
            "--patience",
            "100",
            "--retime",
            "1",
            "--retime-rounds",
            "1",
            "--iters",
            "3",
            "--out",
            out.to_str().unwrap(),
            "--db",
            home.path().join("r.sqlite").to_str().unwrap(),
            "-q",
        ],
        home.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = result(&out);
    assert!(r["rounds"].as_u64().unwrap() > 5, "{}", r["rounds"]);
    assert!(
        r["evaluations"].as_u64().unwrap() > 160,
        "{}",
        r["evaluations"]
    );
}

/// A recorded sweep of another problem is refused before anything runs.
#[test]
fn replay_of_another_problem_is_a_usage_error_up_front() {
    let home = tempfile::tempdir().unwrap();
    let dataset = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/square_4096_tn_bf16.jsonl"
    );
    let o = gemmtune(
        &[
            "tune",
            "--backend",
            "replay",
            "--dataset",
            dataset,
            "--m",
            "1024",
            "--n",
            "64",
            "--k",
            "1024",
            "--out",
            home.path().join("run").to_str().unwrap(),
        ],
        home.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("was recorded for 4096x4096x4096"), "{err}");
    assert!(!err.contains("round"), "{err}");
}

/// `sweep` records its provenance in the header; `eval-strategies` compares strategies on
/// several datasets (learners leave-one-shape-out) and writes the markdown page with the
/// command that made it.
#[test]
fn sweeps_carry_provenance_and_eval_strategies_writes_the_comparison() {
    let home = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (m, n) in [(2048, 256), (4096, 128), (1024, 512)] {
        let path = home.path().join(format!("s{m}x{n}.jsonl"));
        let (ms, ns) = (m.to_string(), n.to_string());
        let o = gemmtune(
            &[
                "sweep",
                "--backend",
                "sim",
                "-q",
                "--m",
                &ms,
                "--n",
                &ns,
                "--k",
                "4096",
                "--fix",
                "MI=16x8x16",
                "--fix",
                "MT0=64,128",
                "--fix",
                "MT1=64,128",
                "--fix",
                "DepthU=64",
                "--fix",
                "PGR=2,3",
                "--fix",
                "SW=0",
                "--out",
                path.to_str().unwrap(),
            ],
            home.path(),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        paths.push(path);
    }
    let header: Value = {
        let text = std::fs::read_to_string(&paths[0]).unwrap();
        let d = gemmtune::device::replay::Dataset::parse(&text, "s").unwrap();
        serde_json::to_value(&d.header).unwrap()
    };
    let prov = &header["provenance"];
    assert!(
        prov["command"]
            .as_str()
            .unwrap()
            .contains("sweep --backend sim"),
        "{prov}"
    );
    assert!(prov["recorded_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(header["device"]["name"], "sim:H200");

    let md = home.path().join("search.md");
    let mut args: Vec<&str> = vec!["eval-strategies"];
    args.extend(paths.iter().map(|p| p.to_str().unwrap()));
    args.extend([
        "--seeds",
        "3",
        "--strategies",
        "default,pattern",
        "--budgets",
        "16",
        "--markdown",
        md.to_str().unwrap(),
        "--json",
    ]);
    let o = gemmtune(&args, home.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r.as_array().unwrap().len(), 3);
    for d in r.as_array().unwrap() {
        assert_eq!(d["learned_from_shapes"], 2, "leave one shape out: {d}");
        assert_eq!(d["strategies"][0]["strategy"], "default");
        assert_eq!(
            d["strategies"][0]["evals_to_2pct"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
    }
    let page = std::fs::read_to_string(&md).unwrap();
    assert!(page.contains("gemmtune eval-strategies "), "{page}");
    assert!(page.contains(
        "| dataset | device | recorded | configs | default vs best | default | pattern |"
    ));
    assert!(page.contains("| s2048x256 | sim:H200 |"), "{page}");
    // One dataset alone: no corpus, and the default is the pattern search.
    let o = gemmtune(
        &[
            "eval-strategies",
            paths[0].to_str().unwrap(),
            "--seeds",
            "2",
            "--strategies",
            "default",
            "--json",
        ],
        home.path(),
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r[0]["learned_from_shapes"], 0);
}
