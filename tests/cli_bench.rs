//! End-to-end tests of `gemmtune bench` on the sim backend: output formats, exit codes, and
//! fault isolation (planted crashing, hanging, faulting, wrong and uncompilable kernels).

use std::process::{Command, Output};

fn gemmtune(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_gemmtune"))
        .args(args)
        .env("GEMMTUNE_CACHE_DIR", dir.path().join("cache"))
        .env("XDG_CACHE_HOME", dir.path())
        .output()
        .expect("binary runs");
    drop(dir);
    out
}

/// `gemmtune bench --backend sim --json` followed by `args`.
fn sim_bench_json(args: &[&str]) -> Output {
    let mut all = vec!["bench", "--backend", "sim", "--json"];
    all.extend_from_slice(args);
    gemmtune(&all)
}

/// Asserts that the command exited 0, showing its stderr otherwise.
fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

const A: &str = "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0";
const B: &str = "MT64x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0";
const C: &str = "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU2R_WGM8_GRVW8_SVW4_SU0";

#[test]
fn seed_bench_on_sim_reports_every_config_and_the_vendor() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("out.csv");
    let out = gemmtune(&[
        "bench",
        "--backend",
        "sim",
        "--m",
        "16032",
        "--n",
        "109",
        "--k",
        "16384",
        "--json",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_ok(&out);
    let j = json(&out);
    let configs = j["configs"].as_array().unwrap();
    assert!(configs.len() >= 4);
    assert_eq!(j["vendor"]["name"], "vendor:cublaslt");
    let winner = j["summary"]["winner"].as_str().unwrap();
    assert!(configs.iter().any(|c| c["name"] == winner));
    assert!(j["summary"]["speedup_vs_vendor"].as_f64().unwrap() > 0.0);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("problem,device,kernel,status"));
    assert_eq!(text.lines().count(), configs.len() + 2);
}

#[test]
fn human_table_names_the_winner() {
    let out = gemmtune(&["bench", "--backend", "sim", "--config", A, "--config", B]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    // A kernel, or the vendor library with the fastest kernel named beside it.
    assert!(
        s.contains("winner: MT") || s.contains("the fastest kernel, MT"),
        "{s}"
    );
    assert!(s.contains("vendor:cublaslt"), "{s}");
}

/// Each planted failure costs one config; the run completes and the others are measured.
#[test]
fn planted_failures_are_isolated_per_config() {
    for (kind, status) in [
        ("crash", "launch_failed"),
        ("hang", "timeout"),
        ("oob", "launch_failed"),
        ("wrong", "wrong_result"),
        ("compile", "compile_failed"),
    ] {
        let plant = format!("MT64x112=={kind}").replacen("==", "=", 1);
        let out = sim_bench_json(&[
            "--timeout",
            "2",
            "--plant",
            &plant,
            "--config",
            A,
            "--config",
            B,
            "--config",
            C,
        ]);
        assert!(
            out.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let j = json(&out);
        let rows = j["configs"].as_array().unwrap();
        let bad = rows.iter().find(|r| r["name"] == B).unwrap();
        assert_eq!(bad["outcome"]["status"], status, "{kind}: {bad}");
        for good in [A, C] {
            let r = rows.iter().find(|r| r["name"] == good).unwrap();
            assert_eq!(r["outcome"]["status"], "timed", "{kind}: {r}");
        }
        assert_ne!(j["summary"]["winner"], B, "a failed kernel cannot win");
        assert_eq!(j["vendor"]["outcome"]["status"], "timed", "{kind}");
    }
}

#[test]
fn a_wrong_kernel_is_never_the_winner_even_if_fastest() {
    // C is the fastest config in the model; plant it wrong.
    let out = sim_bench_json(&["--plant", "GSU2R=wrong", "--config", A, "--config", C]);
    let j = json(&out);
    assert_eq!(j["summary"]["winner"], A);
}

#[test]
fn usage_errors_exit_2_with_one_clear_line() {
    for args in [
        vec!["bench", "--backend", "sim", "--m", "0"],
        vec!["bench", "--backend", "sim", "--n", "-5"],
        vec!["bench", "--backend", "sim", "--a_type", "i8_r"],
        vec!["bench", "--backend", "sim", "--transA", "X"],
        vec!["bench", "--backend", "sim", "--lda", "3"],
        vec!["bench", "--backend", "sim", "--config", "MT12_bogus"],
        vec!["bench", "--bogus-flag"],
        vec!["frobnicate"],
    ] {
        let out = gemmtune(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.contains("error"), "{args:?}: {err}");
    }
}

#[test]
fn stream_k_configs_run_and_sweep_with_the_algorithm_fixed() {
    // By name, next to the same tile without a split.
    let sk = "MT128x112x64_MI64x8x16_WG8x1_PGR5_PLR0_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0";
    let plain = "MT128x112x64_MI64x8x16_WG8x1_PGR6_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0";
    let out = sim_bench_json(&["--config", sk, "--config", plain]);
    assert_ok(&out);
    let j = json(&out);
    for row in j["configs"].as_array().unwrap() {
        assert_eq!(row["outcome"]["status"], "timed", "{row}");
    }
    assert!(j["configs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["name"] == sk));
    // A sweep restricted to stream-K proposes nothing else; by name or number.
    for fix in ["GlobalSplitUAlgorithm=stream-k", "GSUAlgo=2"] {
        let out = sim_bench_json(&[
            "--m",
            "4096",
            "--n",
            "128",
            "--k",
            "4096",
            "--sweep",
            "--fix",
            fix,
            "--max-configs",
            "8",
            "--no-vendor",
        ]);
        assert_ok(&out);
        let rows = json(&out)["configs"].as_array().unwrap().clone();
        assert!(!rows.is_empty());
        for row in rows {
            let name = row["name"].as_str().unwrap();
            assert!(name.contains("S_WGM"), "{name} is not stream-K");
        }
    }
}

/// `--roofline PATH` writes the sweep's roofline chart and names the file: in the human
/// output on stdout, on stderr when stdout carries JSON.
#[test]
fn sweep_writes_the_roofline_chart() {
    let dir = tempfile::tempdir().unwrap();
    let svg_path = dir.path().join("roofline.svg");
    let path = svg_path.to_str().unwrap();
    let sweep = [
        "bench",
        "--backend",
        "sim",
        "--m",
        "4096",
        "--n",
        "128",
        "--k",
        "4096",
        "--sweep",
        "--max-configs",
        "8",
        "--roofline",
        path,
    ];
    let out = gemmtune(&sweep);
    assert_ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("roofline plot: {path}")),
        "{stdout}"
    );
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    for text in [
        "4096x128x4096",
        "roofline (",
        "kernels (",
        "vendor:cublaslt",
        "<polyline",
        "<circle",
    ] {
        assert!(svg.contains(text), "`{text}` missing: {svg}");
    }
    // With --json, stdout stays one JSON document (a small sweep: only the output differs).
    std::fs::remove_file(&svg_path).unwrap();
    let out = sim_bench_json(&[
        "--m",
        "256",
        "--n",
        "128",
        "--k",
        "256",
        "--sweep",
        "--max-configs",
        "2",
        "--retime",
        "0",
        "--roofline",
        path,
    ]);
    assert_ok(&out);
    json(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("roofline plot: {path}")));
    assert!(svg_path.exists());
}

#[test]
fn an_empty_sweep_is_a_usage_error_naming_the_pinned_parameters() {
    // ldd = 333 takes no 8-wide store, which the user fixes, and the sweep pins the minor
    // parameters (GRVW among them) to their defaults: nothing is left to sweep.
    let out = gemmtune(&[
        "bench",
        "--backend",
        "sim",
        "--m",
        "333",
        "--n",
        "109",
        "--k",
        "77",
        "--transA",
        "N",
        "--transB",
        "N",
        "--sweep",
        "--fix",
        "GSU=2",
        "--fix",
        "StoreVectorWidth=8",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no valid config") && err.contains("GlobalReadVectorWidth=8"),
        "{err}"
    );
}

#[test]
fn invalid_config_for_the_problem_is_a_failed_row_not_an_error() {
    // 32x32x8 is an AMD MFMA shape: invalid on the simulated H200.
    let bad = "MT128x128x64_MI32x32x8_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0";
    let out = sim_bench_json(&["--config", bad, "--config", A]);
    assert!(out.status.success());
    let j = json(&out);
    let row = &j["configs"][0];
    assert_eq!(row["outcome"]["status"], "invalid");
    assert!(row["outcome"]["reason"]
        .as_str()
        .unwrap()
        .contains("32x32x8"));
}

#[test]
fn no_gpu_with_auto_backend_names_the_sim_backend() {
    let out = gemmtune(&["bench", "--backend", "auto"]);
    if out.status.success() {
        // A machine with a GPU: nothing to check here.
        return;
    }
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--backend sim"), "{err}");
}

#[test]
fn invalid_hw_spec_file_is_a_clear_failure() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.toml");
    std::fs::write(&p, "name = \"X\"\nvendor = \"nvidia\"\n").unwrap();
    let out = gemmtune(&[
        "bench",
        "--backend",
        "sim",
        "--hw-spec",
        p.to_str().unwrap(),
    ]);
    // A spec the user named that cannot be used is a usage error.
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml"), "{err}");
}

#[test]
fn specs_lists_builtin_files() {
    let out = gemmtune(&["specs"]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for name in ["MI300X", "MI355X", "H100-SXM", "H200", "MI250X", "MI325X"] {
        assert!(s.contains(name), "{name} missing: {s}");
    }
}

#[test]
fn rerun_reuses_stored_results_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let db = db.to_str().unwrap();
    let args = [
        "bench",
        "--backend",
        "sim",
        "--json",
        "--db",
        db,
        "--retime",
        "0",
        "--config",
        A,
        "--config",
        B,
    ];
    let first = json(&gemmtune(&args));
    assert!(first["configs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["reused"] == false));
    let second = json(&gemmtune(&args));
    assert!(second["configs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["reused"] == true));
    assert_eq!(second["vendor"]["reused"], true);
    // The same numbers come back.
    assert_eq!(first["configs"][0]["stats"], second["configs"][0]["stats"]);
    let mut forced = args.to_vec();
    forced.push("--force");
    let third = json(&gemmtune(&forced));
    assert!(third["configs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["reused"] == false));
}

#[test]
fn corrupt_database_is_an_error_and_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("broken.sqlite");
    let garbage: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&db, &garbage).unwrap();
    let out = gemmtune(&["bench", "--backend", "sim", "--db", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken.sqlite"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), garbage);
}

/// The pids of the live (not zombie) children of `parent`, from /proc.
#[cfg(target_os = "linux")]
fn live_children(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces, so read after its `)`.
        let rest: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, r)| r.split_whitespace().collect())
            .unwrap_or_default();
        if rest.len() > 1 && rest[1] == parent.to_string() && rest[0] != "Z" {
            out.push(pid);
        }
    }
    out
}

#[cfg(target_os = "linux")]
fn is_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// A SIGKILLed parent cannot stop its worker; the worker must notice and end itself, even
/// while it is stuck in a kernel that never returns.
#[cfg(target_os = "linux")]
#[test]
fn a_worker_dies_with_its_killed_parent() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let mut parent = Command::new(env!("CARGO_BIN_EXE_gemmtune"))
        .args([
            "bench",
            "--backend",
            "sim",
            "--plant",
            "MT=hang",
            "--timeout",
            "600",
        ])
        .args(["--db", &dir.path().join("r.sqlite").display().to_string()])
        .env("GEMMTUNE_CACHE_DIR", dir.path().join("cache"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let worker = loop {
        if let Some(&w) = live_children(parent.id()).first() {
            break w;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no worker started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Let it reach the hanging kernel.
    std::thread::sleep(Duration::from_millis(500));
    assert!(is_alive(worker));
    parent.kill().unwrap();
    parent.wait().unwrap();
    let killed = Instant::now();
    while is_alive(worker) {
        assert!(
            killed.elapsed() < Duration::from_secs(20),
            "worker {worker} outlived its parent by 20 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_problem_no_kernel_can_run_is_an_error_not_an_empty_win() {
    let out = gemmtune(&[
        "bench",
        "--backend",
        "sim",
        "--m",
        "1024",
        "--n",
        "109",
        "--k",
        "1024",
        "--a_type",
        "f8_r",
        "--b_type",
        "f8_r",
        // 8-bit inputs run in layout TN only.
        "--transA",
        "N",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no kernel can be generated") && err.contains("8-bit"),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("winner"));
}

/// `sweep --out` writes JSON lines, as its help says: a header line, then one record per
/// config, each line a JSON document of its own.
#[test]
fn sweep_writes_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let out = gemmtune(&[
        "sweep",
        "--backend",
        "sim",
        "--m",
        "512",
        "--n",
        "64",
        "--k",
        "512",
        "--fix",
        "MT0=64,128",
        "--fix",
        "MT1=64",
        "--max-configs",
        "6",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert_ok(&out);
    // stderr is a pipe here: progress bars are not drawn into it.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("ETA") && !err.contains('\u{1b}'), "{err}");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines[0]["format"], "gemmtune-sweep");
    assert_eq!(lines.len(), 7, "{text}");
    assert!(lines[1..].iter().all(|r| r["config"].is_string()));
}

/// The global `--csv PATH` writes a table for every command that prints one, and is refused
/// by the others instead of being ignored.
#[test]
fn csv_is_written_by_every_command_with_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let csv = |name: &str| dir.path().join(name).display().to_string();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/llama3_8b_workload.log"
    );
    let dataset = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/square_4096_tn_bf16.jsonl"
    );
    let db = csv("r.sqlite");
    let runs: Vec<(&str, Vec<&str>)> = vec![
        ("log.csv", vec!["log", fixture]),
        (
            "tune.csv",
            vec![
                "tune",
                "--backend",
                "sim",
                "--db",
                &db,
                "--m",
                "512",
                "--n",
                "64",
                "--k",
                "512",
                "--max-evals",
                "6",
                "--retime",
                "1",
                "--retime-rounds",
                "1",
            ],
        ),
        (
            "eval.csv",
            vec![
                "eval-strategies",
                dataset,
                "--strategies",
                "random",
                "--seeds",
                "2",
                "--budgets",
                "5,10",
            ],
        ),
    ];
    for (name, args) in runs {
        let path = csv(name);
        let mut all = args.clone();
        all.extend(["-q", "--csv", &path]);
        let out = gemmtune(&all);
        assert_ok(&out);
        let mut r = csv::Reader::from_path(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(r.headers().unwrap().len() > 3, "{name}");
        assert!(r.records().count() > 0, "{name} has no rows");
    }
    let refused = gemmtune(&["specs", "--csv", &csv("specs.csv")]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--csv"));
}

/// An installed binary has no source tree: `--hw-spec` takes a built-in spec by name, in any
/// case; a name that is neither a file nor a built-in spec is a usage error.
#[test]
fn hw_spec_takes_built_in_names() {
    for name in ["mi300x", "MI300X"] {
        let out = sim_bench_json(&[
            "--hw-spec",
            name,
            "--m",
            "512",
            "--n",
            "64",
            "--k",
            "512",
            "--no-vendor",
        ]);
        assert_ok(&out);
        assert_eq!(json(&out)["hw_spec"], "MI300X");
    }
    let out = sim_bench_json(&["--hw-spec", "/nonexistent/spec.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/nonexistent/spec.toml") && err.contains("MI300X"),
        "{err}"
    );
}

#[test]
fn a_malformed_llm_url_is_a_usage_error() {
    let out = gemmtune(&[
        "tune",
        "--backend",
        "sim",
        "--llm-url",
        "ht!tp:/x",
        "--llm-model",
        "m",
        "--m",
        "64",
        "--n",
        "64",
        "--k",
        "64",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--llm-url"));
}

/// A kernel slower than the vendor library measured beside it is not called the winner.
#[test]
fn a_kernel_slower_than_the_vendor_is_not_the_winner() {
    // A large tile without split-K on a small skinny problem: a few workgroups on 132 SMs.
    let slow = "MT256x64x128_MI64x8x16_WG4x1_PGR2_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1";
    let out = gemmtune(&[
        "bench",
        "--backend",
        "sim",
        "--m",
        "1024",
        "--n",
        "109",
        "--k",
        "2048",
        "--config",
        slow,
    ]);
    assert_ok(&out);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("winner: the vendor library"), "{s}");
    assert!(s.contains(&format!("the fastest kernel, {slow}")), "{s}");
    assert!(s.lines().any(|l| l.starts_with("* vendor:")), "{s}");
    assert!(!s.lines().any(|l| l.starts_with("* MT")), "{s}");
}

/// An error whose wrapper repeats its cause is printed once.
#[test]
fn an_error_is_printed_once() {
    let out = gemmtune(&[
        "bench",
        "--backend",
        "sim",
        "--m",
        "200000",
        "--n",
        "200000",
        "--k",
        "100000",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("device memory").count(), 1, "{err}");
}

/// `source` prints the launch plan in words, not a debug dump.
#[test]
fn source_describes_its_launch_plan_in_words() {
    let out = gemmtune(&[
        "source", "--m", "256", "--n", "256", "--k", "256", "--config", C,
    ]);
    assert_ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("on a grid of") && err.contains("then "),
        "{err}"
    );
    assert!(
        !err.contains("LaunchPlan {") && !err.contains("Some("),
        "{err}"
    );
}

/// The `hipblaslt-bench` lines of a hipBLASLt log run as `gemmtune bench <their flags>`: the
/// flags without effect are named once, flags that would change the GEMM are refused by
/// name, and the results can be printed in hipblaslt-bench's CSV columns.
#[test]
fn hipblaslt_bench_lines_from_a_log_run_as_bench_flags() {
    let log = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/llama3_70b_tp8_mask32.log"
    ))
    .unwrap();
    let mut lines: Vec<&str> = log
        .lines()
        .filter_map(|l| l.split_once("hipblaslt-bench").map(|(_, rest)| rest))
        .collect();
    lines.sort_unstable();
    lines.dedup();
    assert!(lines.len() >= 3);
    for line in lines.iter().take(3) {
        let mut args = vec!["bench", "--backend", "sim", "--no-vendor", "--retime", "0"];
        args.extend(line.split_whitespace());
        let out = gemmtune(&args);
        assert_ok(&out);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.matches("no effect here").count(), 1, "{err}");
        assert!(
            err.contains("--api_method c") && err.contains("--solution_index"),
            "{err}"
        );
    }
    let mut args = vec!["bench", "--backend", "sim", "--hipblaslt-csv", "-q"];
    args.extend(lines[0].split_whitespace());
    let out = gemmtune(&args);
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let header = text.lines().next().unwrap();
    assert!(
        header.starts_with("transA,transB,grouped_gemm,batch_count,m,n,k"),
        "{header}"
    );
    assert!(
        header.contains("hipblaslt-Gflops,hipblaslt-GB/s,us"),
        "{header}"
    );
    assert!(
        text.lines().any(|l| l.ends_with("vendor:cublaslt")),
        "{text}"
    );

    for (flag, value) in [
        ("--bias_vector", None),
        ("--activation_type", Some("gelu")),
        // A vector scale (mode 2); a per-tensor one (mode 1) is part of the problem.
        ("--scaleA", Some("2")),
    ] {
        let mut args = vec!["bench", "--backend", "sim", flag];
        args.extend(value);
        let out = gemmtune(&args);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(flag) && err.contains("changes the GEMM"),
            "{err}"
        );
    }
}
