//! End-to-end tests of `gemmtune tune-log`, `merge`, `export` and `bench --solutions` on the
//! sim backend: the whole workflow on a fixture log, selection by share, bad input, sharding
//! three ways and merging, resuming after a SIGKILL, and several devices sharing one queue.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod common;
use common::fake_http::{ok as http_ok, FakeServer};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/llama3_8b_workload.log"
);

/// Small searches keep every run well under a few seconds.
const FAST: &[&str] = &["--max-evals", "12", "--iters", "5"];

fn cmd(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gemmtune"));
    c.env("GEMMTUNE_CACHE_DIR", home.join("kernels"))
        .env("XDG_CACHE_HOME", home);
    c
}

fn gemmtune(home: &Path, args: &[&str]) -> Output {
    cmd(home).args(args).output().expect("binary runs")
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_str(&ok(o)).expect("JSON on stdout")
}

/// `tune-log` on the sim backend with `extra`, and the fast settings unless `extra` sets them.
fn tune_log(home: &Path, logs: &[&Path], out: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<String> = vec!["--backend".into(), "sim".into(), "tune-log".into()];
    args.extend(logs.iter().map(|l| l.display().to_string()));
    args.extend(["--out".into(), out.display().to_string()]);
    if !extra.contains(&"--max-evals") {
        args.extend(FAST.iter().map(|s| s.to_string()));
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    gemmtune(home, &refs)
}

/// `merge --json` of the shard directories `shards` into `out`.
fn merge(home: &Path, shards: &[PathBuf], out: &Path) -> Output {
    let mut args = vec!["--json".to_string(), "merge".to_string()];
    args.extend(shards.iter().map(|s| s.display().to_string()));
    args.extend(["--out".to_string(), out.display().to_string()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    gemmtune(home, &refs)
}

/// CSV rows as column -> value maps.
fn csv_rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// The rows without the columns that legitimately differ between runs of the same work.
fn comparable(path: &Path, drop: &[&str]) -> Vec<BTreeMap<String, String>> {
    csv_rows(path)
        .into_iter()
        .map(|mut r| {
            for d in drop {
                r.remove(*d);
            }
            r
        })
        .collect()
}

fn yaml_line(m: i64, n: i64, k: i64, calls: u64, dtype: &str) -> String {
    format!(
        "- {{function: matmul, M: {m}, N: {n}, K: {k}, lda: {k}, ldb: {k}, ldc: {m}, ldd: {m}, stride_a: 0, stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.0, beta: 0.0, transA: T, transB: N, batch_count: 1, a_type: {dtype}, b_type: {dtype}, c_type: bf16_r, d_type: bf16_r, scale_type: f32_r, compute_type: c_f32_r, activation_type: none, call_count: {calls}}}\n"
    )
}

/// A log of `n` distinct bf16 GEMMs with varied shapes and call counts.
fn synthetic_log(dir: &Path, n: usize) -> PathBuf {
    let mut text = String::from("some program output\n");
    for i in 0..n as i64 {
        let m = 1024 * (1 + i % 7) + 64 * i;
        let nn = [8, 16, 64, 128, 256][(i % 5) as usize];
        let k = 2048 + 512 * (i % 4);
        text.push_str(&yaml_line(m, nn, k, 10 + i as u64, "bf16_r"));
    }
    let path = dir.join(format!("synthetic_{n}.log"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn workflow_end_to_end_on_the_fixture_log() {
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("run");
    // Modelled on an MI300X: Tensile, the export target, is AMD's tuner, and its configs
    // describe MFMA kernels (a Hopper wgmma kernel has no Tensile equivalent).
    let mi300x = concat!(env!("CARGO_MANIFEST_DIR"), "/hw_specs/mi300x.toml");
    let r = json(&tune_log(
        home.path(),
        &[Path::new(FIXTURE)],
        &out,
        &["--json", "--hw-spec", mi300x],
    ));
    for f in [
        "workload.csv",
        "raw_results.csv",
        "final_results.csv",
        "summary.md",
        "uplift.svg",
        "solutions.json",
        "manifest.json",
        "results.sqlite",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    // 11 distinct GEMMs: two seed lines, five decode (YAML) and four prefill (bench lines).
    let workload = csv_rows(&out.join("workload.csv"));
    assert_eq!(workload.len(), 11);
    let raw = csv_rows(&out.join("raw_results.csv"));
    assert_eq!(raw.len(), 11, "every GEMM is selected without --thr/--top");
    let kept: Vec<_> = raw.iter().filter(|r| r["status"] == "kept").collect();
    let fin = csv_rows(&out.join("final_results.csv"));
    assert_eq!(fin.len(), kept.len());
    assert!(
        !kept.is_empty(),
        "the sim model leaves some kernels faster than the vendor"
    );
    for r in &raw {
        let speedup: f64 = r["speedup"].parse().unwrap();
        assert_eq!(r["verified"], "true");
        // Kept exactly when at least 1% faster than the vendor library.
        assert_eq!(r["status"] == "kept", speedup >= 1.01, "{r:?}");
        gemmtune::space::KernelConfig::parse(&r["config"]).unwrap();
    }

    // The weighted uplift is the time the kept kernels save over the workload's GEMM time.
    let f = |r: &BTreeMap<String, String>, c: &str| r[c].parse::<f64>().unwrap();
    let total: f64 = workload.iter().map(|g| f(g, "total_us")).sum();
    let saved: f64 = kept
        .iter()
        .map(|r| f(r, "calls") * (f(r, "vendor_us") - f(r, "best_us")))
        .sum();
    let reported = r["summary"]["weighted_uplift"].as_f64().unwrap();
    assert!(
        (reported - saved / total).abs() < 1e-9,
        "{reported} vs {}",
        saved / total
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("**Weighted total uplift**"));
    assert!(summary.contains(&format!("{:.2}%", saved / total * 100.0)));
    assert!(summary.contains("**Average uplift**"));
    assert!(std::fs::read_to_string(out.join("uplift.svg"))
        .unwrap()
        .contains("<rect"));

    // The solutions file lists the kept kernels, and `bench --solutions` runs them.
    let sol: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("solutions.json")).unwrap())
            .unwrap();
    let sols = sol["solutions"].as_array().unwrap();
    assert_eq!(sols.len(), kept.len());
    let s = &sols[0];
    let p = &s["problem"];
    let (m, n, k) = (p["m"].to_string(), p["n"].to_string(), p["k"].to_string());
    let bench = ok(&gemmtune(
        home.path(),
        &[
            "--backend",
            "sim",
            "bench",
            "-m",
            &m,
            "-n",
            &n,
            "-k",
            &k,
            "--iters",
            "5",
            "--solutions",
            out.join("solutions.json").to_str().unwrap(),
        ],
    ));
    assert!(bench.contains(s["config"].as_str().unwrap()), "{bench}");
    let wrong = gemmtune(
        home.path(),
        &[
            "--backend",
            "sim",
            "bench",
            "-m",
            "100",
            "-n",
            "100",
            "-k",
            "100",
            "--solutions",
            out.join("solutions.json").to_str().unwrap(),
        ],
    );
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("has no solution for"));

    // Export: a Tensile config and an advice file per kept kernel.
    let export = home.path().join("export");
    ok(&gemmtune(
        home.path(),
        &[
            "export",
            out.to_str().unwrap(),
            "--out",
            export.to_str().unwrap(),
        ],
    ));
    let index = std::fs::read_to_string(export.join("index.md")).unwrap();
    let mut with_tensile = 0;
    for s in sols {
        let config = s["config"].as_str().unwrap();
        assert!(index.contains(config));
        let folder = std::fs::read_dir(&export)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&format!("{:03}_", s["id"].as_u64().unwrap()))
            })
            .expect("a folder per kept GEMM");
        // Kernels without a Tensile equivalent (GEMV, warpgroup, FMA) get their advice only;
        // export named them and why on stderr.
        let parsed = gemmtune::space::KernelConfig::parse(config).unwrap();
        if gemmtune::report::tensile::matrix_instruction(&parsed).is_err() {
            assert!(!folder.join("tensile_config.yaml").exists(), "{config}");
            assert!(folder.join("advice.md").exists(), "{config}");
            continue;
        }
        let yaml = std::fs::read_to_string(folder.join("tensile_config.yaml")).unwrap();
        with_tensile += 1;
        let (m, n, k) = (&s["problem"]["m"], &s["problem"]["n"], &s["problem"]["k"]);
        assert!(
            yaml.contains(&format!("- Exact: [{m}, {n}, 1, {k}]")),
            "{yaml}"
        );
        assert!(yaml.contains("ForkParameters:") && yaml.contains("OperationType: GEMM"));
        let advice = std::fs::read_to_string(folder.join("advice.md")).unwrap();
        assert!(
            advice.contains(config) && advice.contains("memory-bound"),
            "{advice}"
        );
        assert!(advice.contains("## What the measurements show"), "{advice}");
    }
    assert!(with_tensile > 0, "no kept kernel had a Tensile config");
}

#[test]
fn thr_and_top_select_by_share_of_gemm_time() {
    let home = tempfile::tempdir().unwrap();
    let all = home.path().join("all");
    let r = json(&tune_log(
        home.path(),
        &[Path::new(FIXTURE)],
        &all,
        &["--json", "--top", "2"],
    ));
    let mut ranked: Vec<(u64, f64)> = r["workload"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["id"].as_u64().unwrap(), g["share"].as_f64().unwrap()))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let raw: Vec<u64> = csv_rows(&all.join("raw_results.csv"))
        .iter()
        .map(|r| r["id"].parse().unwrap())
        .collect();
    let mut top2: Vec<u64> = ranked[..2].iter().map(|x| x.0).collect();
    top2.sort();
    assert_eq!(raw, top2);

    let thr = home.path().join("thr");
    let r = json(&tune_log(
        home.path(),
        &[Path::new(FIXTURE)],
        &thr,
        &["--json", "--thr", "0.1"],
    ));
    let want: Vec<u64> = {
        let mut v: Vec<u64> = ranked.iter().filter(|x| x.1 >= 0.1).map(|x| x.0).collect();
        v.sort();
        v
    };
    assert!(!want.is_empty() && want.len() < ranked.len());
    let got: Vec<u64> = r["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_u64().unwrap())
        .collect();
    assert_eq!(got, want);
    // Both filters apply together.
    let both = home.path().join("both");
    let r = json(&tune_log(
        home.path(),
        &[Path::new(FIXTURE)],
        &both,
        &["--json", "--thr", "0.1", "--top", "1"],
    ));
    assert_eq!(r["records"].as_array().unwrap().len(), 1);
}

#[test]
fn bad_input_is_reported_not_crashed_on() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();

    // An empty log and a log without matmul lines: a clear usage error.
    let empty = dir.join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let noise = dir.join("noise.log");
    std::fs::write(
        &noise,
        "loading weights\n- {function: softmax, n: 3}\nstep 1 done\n",
    )
    .unwrap();
    for log in [&empty, &noise] {
        let o = tune_log(dir, &[log.as_path()], &dir.join("o1"), &[]);
        assert_eq!(o.status.code(), Some(2), "{log:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("no matmul entries"), "{err}");
    }

    // Too large for the device, and 8-bit inputs in a layout no kernel family reads them in
    // (the warpgroup instruction takes them K-major only): skipped with a reason, the rest
    // tuned. 8-bit TN is tuned.
    let mixed = dir.join("mixed.log");
    let text = [
        yaml_line(4096, 64, 4096, 10, "bf16_r"),
        yaml_line(300_000, 300_000, 4096, 1, "bf16_r"),
        yaml_line(4096, 64, 4096, 10, "f8_r")
            .replace("lda: 4096", "lda: 4096, transA: N")
            .replace(", transA: T,", ","),
        yaml_line(4096, 64, 4096, 5, "f8_r"),
    ]
    .concat();
    std::fs::write(&mixed, text).unwrap();
    let out = dir.join("mixed");
    let r = json(&tune_log(dir, &[mixed.as_path()], &out, &["--json"]));
    let raw = csv_rows(&out.join("raw_results.csv"));
    assert_eq!(raw.len(), 4);
    let by_id = |id: &str| raw.iter().find(|r| r["id"] == id).unwrap();
    assert_ne!(by_id("0")["status"], "skipped");
    assert_eq!(by_id("1")["status"], "skipped");
    assert!(
        by_id("1")["reason"].contains("too large"),
        "{:?}",
        by_id("1")
    );
    assert_eq!(by_id("2")["status"], "skipped");
    assert!(
        by_id("2")["reason"].contains("unsupported types"),
        "{:?}",
        by_id("2")
    );
    assert_ne!(by_id("3")["status"], "skipped", "{:?}", by_id("3"));
    assert_eq!(r["summary"]["skipped"], 2);
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains("too large") && summary.contains("8-bit"),
        "{summary}"
    );

    // An output directory that cannot be created: refused before any work.
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = tune_log(dir, &[mixed.as_path()], &file.join("sub"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write to output directory"));

    // A device index that does not exist.
    let o = tune_log(
        dir,
        &[mixed.as_path()],
        &dir.join("o2"),
        &["--devices", "0,9"],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("device index 9 does not exist"), "{err}");
    let o = tune_log(
        dir,
        &[mixed.as_path()],
        &dir.join("o3"),
        &["--devices", "1,1"],
    );
    assert_eq!(o.status.code(), Some(2));

    // Bad flags.
    for bad in [&["--shard", "3/3"][..], &["--thr", "2"], &["--top", "0"]] {
        let o = tune_log(dir, &[mixed.as_path()], &dir.join("o4"), bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
}

/// A `hipblaslt-bench` line (HIPBLASLT_LOG_MASK=32) of an `m x n x k` TN GEMM in `types`
/// (`--a_type T --b_type T ...`), with `tail` appended.
fn bench_line(m: i64, n: i64, k: i64, types: &str, tail: &str) -> String {
    format!(
        "hipblaslt-bench --api_method c -m {m} -n {n} -k {k} --lda {k} --ldb {k} --ldc {m} --ldd {m} --stride_a 0 --stride_b 0 --stride_c 0 --stride_d 0 --alpha 1.000000 --beta 0.000000 --transA T --transB N --batch_count 1 {types}{tail}\n"
    )
}

#[test]
fn lines_not_read_and_untimed_epilogues_are_in_every_output() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    // Line 2 cannot be read (int8 is not a type gemmtune knows); line 3 asks for a fused bias
    // and GELU, which neither the vendor baseline nor the tuned kernel computes.
    let bf16 = "--a_type bf16_r --b_type bf16_r --c_type bf16_r --d_type bf16_r --scale_type f32_r --bias_type f32_r --compute_type c_f32_r";
    let log = dir.join("int8.log");
    let text = [
        "warming up\n".to_string(),
        bench_line(4096, 128, 4096, "--a_type i8_r --b_type i8_r --c_type i32_r --d_type i32_r --scale_type i32_r --bias_type f32_r --compute_type c_i32_r", ""),
        bench_line(4096, 128, 4096, bf16, " --bias_vector --activation_type gelu"),
        bench_line(2048, 64, 4096, bf16, ""),
    ]
    .concat();
    std::fs::write(&log, text).unwrap();
    let where_ = format!("{}:2", log.display());

    let out = dir.join("run");
    let r = json(&tune_log(dir, &[&log], &out, &["--json"]));
    // The readable GEMMs are tuned as usual.
    assert_eq!(r["summary"]["gemms"], 2);
    assert_eq!(r["summary"]["tuned"], 2, "{r}");
    assert_eq!(r["summary"]["lines_not_read"], 1);
    let unread = r["unread_lines"].as_array().unwrap();
    assert_eq!(unread.len(), 1, "{unread:?}");
    assert_eq!(unread[0]["line"], 2);
    assert_eq!(unread[0]["source"], log.display().to_string());
    assert!(
        unread[0]["message"]
            .as_str()
            .unwrap()
            .contains("unknown data type `i8_r`"),
        "{unread:?}"
    );
    assert_eq!(r["records"][0]["log_fields"]["bias_vector"], "true");
    assert_eq!(r["records"][0]["log_fields"]["activation_type"], "gelu");
    assert_eq!(r["records"][1]["log_fields"], json!({}));

    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("- 1 log line not read"), "{summary}");
    assert!(summary.contains("## Lines not read"), "{summary}");
    assert!(
        summary.contains(&format!("- {where_}: unknown data type `i8_r`")),
        "{summary}"
    );
    let note = "[1] #0: activation_type=gelu, bias_vector (bias_type=f32_r): timed as the plain GEMM, by the vendor library and the tuned kernel alike";
    assert!(
        summary.contains("4096x128x4096 TN bf16_r [1] |"),
        "{summary}"
    );
    assert!(summary.contains(note), "{summary}");
    assert!(!summary.contains("[2]"), "only #0 has a note: {summary}");
    let rows = csv_rows(&out.join("unread_lines.csv"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["line"], "2");
    let raw = csv_rows(&out.join("raw_results.csv"));
    assert!(raw[0]["log_fields"].contains("gelu") && raw[1]["log_fields"].is_empty());

    // The totals printed at the end count the line and say why; the table carries the note.
    let text = ok(&tune_log(dir, &[&log], &dir.join("text"), &[]));
    assert!(
        text.contains("1 log line not read:")
            && text.contains(&format!("  {where_}: unknown data type `i8_r`")),
        "{text}"
    );
    assert!(text.contains(note), "{text}");

    // Two shards parse the same log: the merged report lists the line once and keeps the note.
    let shards: Vec<PathBuf> = (0..2).map(|i| dir.join(format!("shard{i}"))).collect();
    for (i, s) in shards.iter().enumerate() {
        ok(&tune_log(dir, &[&log], s, &["--shard", &format!("{i}/2")]));
    }
    let merged = dir.join("merged");
    let m = json(&merge(dir, &shards, &merged));
    assert_eq!(m["unread_lines"], r["unread_lines"]);
    assert_eq!(m["summary"]["lines_not_read"], 1);
    assert!(m["warnings"].as_array().unwrap().is_empty(), "{m}");
    let summary = std::fs::read_to_string(merged.join("summary.md")).unwrap();
    assert_eq!(summary.matches(&where_).count(), 1, "{summary}");
    assert!(summary.contains(note), "{summary}");
    assert_eq!(csv_rows(&merged.join("unread_lines.csv")).len(), 1);
}

/// Columns that depend on the run rather than the work: wall time, and the counts of
/// measured versus reused results.
const RUN_COLUMNS: &[&str] = &["tune_s", "measured", "reused"];

#[test]
fn three_shards_merged_equal_the_unsharded_run() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let whole = dir.join("whole");
    ok(&tune_log(dir, &[Path::new(FIXTURE)], &whole, &[]));
    let mut shards = Vec::new();
    for i in 0..3 {
        let out = dir.join(format!("shard{i}"));
        ok(&tune_log(
            dir,
            &[Path::new(FIXTURE)],
            &out,
            &["--shard", &format!("{i}/3")],
        ));
        // Each shard tunes only its slice: ids with id % 3 == i.
        let ids: Vec<u64> = csv_rows(&out.join("raw_results.csv"))
            .iter()
            .map(|r| r["id"].parse().unwrap())
            .collect();
        assert!(!ids.is_empty() && ids.iter().all(|id| id % 3 == i));
        shards.push(out);
    }
    let merged = dir.join("merged");
    let m = json(&merge(dir, &shards, &merged));
    assert!(m["measurements_copied"].as_u64().unwrap() > 0);
    assert!(m["warnings"].as_array().unwrap().is_empty());

    for f in ["raw_results.csv", "final_results.csv"] {
        assert_eq!(
            comparable(&merged.join(f), RUN_COLUMNS),
            comparable(&whole.join(f), RUN_COLUMNS),
            "{f} differs"
        );
    }
    let headline = |p: &Path| {
        std::fs::read_to_string(p.join("summary.md"))
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("**"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(headline(&merged), headline(&whole));
    assert_eq!(
        std::fs::read_to_string(merged.join("solutions.json")).unwrap(),
        std::fs::read_to_string(whole.join("solutions.json")).unwrap()
    );

    // The merged database holds the shards' measurements: merging again copies nothing, and
    // export finds what it needs there.
    let again = json(&merge(dir, &shards, &merged));
    assert_eq!(again["measurements_copied"], 0);
    ok(&gemmtune(
        dir,
        &["export", merged.to_str().unwrap(), "--advice"],
    ));

    // A missing shard is a warning; a shard given twice is an error.
    let o = merge(dir, &shards[..2], &dir.join("partial"));
    let w = json(&o)["warnings"].to_string();
    assert!(w.contains("shard 2/3 is missing"), "{w}");
    let o = gemmtune(
        dir,
        &[
            "merge",
            shards[0].to_str().unwrap(),
            shards[0].to_str().unwrap(),
            "--out",
            dir.join("twice").to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("given twice"));
}

fn measurement_count(db: &Path) -> u64 {
    gemmtune::store::Store::open(db)
        .unwrap()
        .measurement_count()
        .unwrap()
}

#[test]
fn a_killed_run_resumes_and_loses_nothing() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    // Enough GEMMs that the run is still going when the first one is checkpointed.
    let log = synthetic_log(dir, 40);
    let out = dir.join("run");
    let settings = ["--max-evals", "48", "--iters", "20"];
    let mut args = vec![
        "--backend".to_string(),
        "sim".into(),
        "-q".into(),
        "tune-log".into(),
        log.display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(settings.iter().map(|s| s.to_string()));
    let mut child = cmd(dir)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let gemms = out.join("gemms");
    let start = Instant::now();
    loop {
        let done = std::fs::read_dir(&gemms)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                    .count()
            })
            .unwrap_or(0);
        if done >= 1 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "tune-log ended before the first GEMM was checkpointed"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no GEMM finished in 60 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL: no chance to clean up.
    child.wait().unwrap();
    assert!(
        !out.join("summary.md").exists(),
        "the run finished before it could be killed; give it more work"
    );
    let checkpointed = std::fs::read_dir(&gemms)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .count();
    let db = out.join("results.sqlite");
    let before = measurement_count(&db);
    assert!(before > 0);

    // The same command again completes, taking the finished GEMMs from their checkpoints
    // and every stored measurement from the database.
    let mut again = args.clone();
    again.push("--json".into());
    let refs: Vec<&str> = again.iter().map(String::as_str).collect();
    let r = json(&gemmtune(dir, &refs));
    assert!(r["resumed"].as_u64().unwrap() >= checkpointed as u64);
    assert_eq!(r["summary"]["tuned"], 40);
    assert!(measurement_count(&db) >= before, "measurements were lost");

    // And it reports exactly what an uninterrupted run reports, having measured less.
    let clean = dir.join("clean");
    let mut fresh: Vec<String> = args.clone();
    let pos = fresh
        .iter()
        .position(|a| *a == out.display().to_string())
        .unwrap();
    fresh[pos] = clean.display().to_string();
    fresh.push("--json".into());
    let refs: Vec<&str> = fresh.iter().map(String::as_str).collect();
    let c = json(&gemmtune(dir, &refs));
    for f in ["raw_results.csv", "final_results.csv"] {
        assert_eq!(
            comparable(&out.join(f), RUN_COLUMNS),
            comparable(&clean.join(f), RUN_COLUMNS),
            "{f} differs after resuming"
        );
    }
    assert!(
        r["measured"].as_u64().unwrap() < c["measured"].as_u64().unwrap(),
        "the resumed run measured {} results, a fresh run {}",
        r["measured"],
        c["measured"]
    );
}

#[test]
fn several_devices_share_one_queue() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let log = synthetic_log(dir, 16);
    for devices in ["0,1,2,3", "0,1,2,3,4,5,6,7"] {
        let out = dir.join(format!("d{}", devices.len()));
        let r = json(&tune_log(
            dir,
            &[log.as_path()],
            &out,
            &[
                "--json",
                "--devices",
                devices,
                "--max-evals",
                "48",
                "--iters",
                "50",
            ],
        ));
        let want: Vec<String> = devices.split(',').map(str::to_string).collect();
        // Which device tuned which GEMM is in the results.
        let mut used: Vec<String> = csv_rows(&out.join("raw_results.csv"))
            .iter()
            .map(|r| r["device"].clone())
            .collect();
        assert_eq!(used.len(), 16);
        used.sort();
        used.dedup();
        assert_eq!(used, want, "every device tunes at least one GEMM");
        let per: u64 = r["per_device"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(per, 16);
    }
}

#[test]
fn export_advice_is_written_by_the_llm_when_one_is_configured() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let out = dir.join("run");
    ok(&tune_log(dir, &[Path::new(FIXTURE)], &out, &[]));
    let kept = csv_rows(&out.join("final_results.csv")).len();
    assert!(kept > 0);
    let words = "The split of K keeps every SM busy while the operand streams from HBM once.";
    let server = FakeServer::start(
        kept,
        Box::new(move |_, _| {
            http_ok(json!({
                "id": "x", "object": "chat.completion", "model": "fake",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": words}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10}
            }))
        }),
    );
    let url = format!("{}/v1", server.url);
    let export = dir.join("export");
    let o = cmd(dir)
        .env("GEMMTUNE_EXPORT_TEST_KEY", "sk-export-test")
        .args([
            "export",
            out.to_str().unwrap(),
            "--advice",
            "--out",
            export.to_str().unwrap(),
            "--llm-url",
            &url,
            "--llm-model",
            "fake",
            "--llm-key-env",
            "GEMMTUNE_EXPORT_TEST_KEY",
        ])
        .output()
        .unwrap();
    ok(&o);
    assert_eq!(server.hits(), kept);
    // The model was given the measured facts, and its words come first with the facts below.
    let prompt = server.requests()[0].body.to_string();
    assert!(prompt.contains("What limits this GEMM"), "{prompt}");
    let advice: Vec<String> = std::fs::read_dir(&export)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir() && e.path().join("advice.md").exists())
        .map(|e| std::fs::read_to_string(e.path().join("advice.md")).unwrap())
        .collect();
    assert_eq!(advice.len(), kept);
    for a in &advice {
        assert!(a.starts_with(words), "{a}");
        assert!(
            a.contains("Written by fake") && a.contains("## Measured facts"),
            "{a}"
        );
    }
    // --advice alone writes no Tensile config.
    assert!(!std::fs::read_dir(&export)
        .unwrap()
        .flatten()
        .any(|e| e.path().join("tensile_config.yaml").exists()));
}

#[test]
fn force_tunes_every_gemm_again() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let log = synthetic_log(dir, 3);
    let out = dir.join("run");
    let first = json(&tune_log(dir, &[&log], &out, &["--json"]));
    assert_eq!(first["summary"]["tuned"], 3);
    let again = json(&tune_log(dir, &[&log], &out, &["--json"]));
    assert_eq!(again["resumed"], 3, "a plain rerun resumes");
    let forced = json(&tune_log(dir, &[&log], &out, &["--json", "--force"]));
    assert_eq!(forced["resumed"], 0, "--force resumed finished GEMMs");
    assert_eq!(forced["summary"]["tuned"], 3);
    assert!(forced["measured"].as_u64().unwrap() > 0, "{forced}");
    assert_eq!(forced["reused"], 0, "--force reused stored results");
}

#[test]
fn a_second_run_on_the_same_output_directory_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let log = synthetic_log(dir, 40);
    let out = dir.join("run");
    let mut first = cmd(dir)
        .args(["--backend", "sim", "-q", "tune-log"])
        .arg(&log)
        .arg("--out")
        .arg(&out)
        .args(["--max-evals", "48", "--iters", "20"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The first run holds the lock once it has written its manifest.
    let start = Instant::now();
    while !out.join("manifest.json").exists() {
        assert!(
            first.try_wait().unwrap().is_none(),
            "the first run ended early"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no manifest in 60 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let second = tune_log(dir, &[&log], &out, &[]);
    let running = first.try_wait().unwrap().is_none();
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(
        running,
        "the first run finished before the second started; give it more work"
    );
    assert_eq!(second.status.code(), Some(1));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains("another gemmtune run") && err.contains(&out.display().to_string()),
        "{err}"
    );
}

/// Hopper winners are warpgroup kernels, which Tensile cannot express: `export --tensile`
/// names each and why, and fails, instead of saying "exported" over an empty folder.
#[test]
fn export_says_which_kernels_have_no_tensile_config() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let log = synthetic_log(dir, 3);
    let out = dir.join("run");
    ok(&tune_log(dir, &[&log], &out, &["--min-uplift=-0.9"]));
    let sols: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("solutions.json")).unwrap())
            .unwrap();
    let kept = sols["solutions"].as_array().unwrap().len();
    assert!(kept > 0, "{sols}");
    let only = gemmtune(dir, &["export", out.to_str().unwrap(), "--tensile"]);
    assert_eq!(only.status.code(), Some(1), "{only:?}");
    let err = String::from_utf8_lossy(&only.stderr);
    assert_eq!(
        err.matches("no Tensile config for #").count(),
        kept,
        "{err}"
    );
    assert!(
        err.contains("warpgroup") && err.contains("nothing was exported"),
        "{err}"
    );
    // With the advice too, something is written: exit 0, and the count says 0 configs.
    let both = ok(&gemmtune(dir, &["export", out.to_str().unwrap()]));
    assert!(
        both.contains(&format!("exported 0 of {kept} Tensile configs")),
        "{both}"
    );
}

/// Every kind of GEMM the template covers, mixed in one log (every layout, e4m3 and an e5m2
/// mix with per-tensor scales, N past a tile, GEMV, small M with long K, strided batches large
/// and attention-sized, f32 and tf32): on Hopper, MI300X (gfx942) and MI355X (gfx950) each
/// gets a verified kernel and none is skipped. A kind of GEMM that loses its kernels on one of
/// them shows up here as a skipped line.
#[test]
fn a_mixed_log_leaves_no_gemm_without_a_kernel() {
    for spec in ["h100_sxm", "mi300x", "mi355x"] {
        mixed_log_on(spec);
    }
}

fn mixed_log_on(spec: &str) {
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("run");
    let log = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mixed_coverage.log"
    );
    let hw = format!("{}/hw_specs/{spec}.toml", env!("CARGO_MANIFEST_DIR"));
    let r = json(&tune_log(
        home.path(),
        &[Path::new(log)],
        &out,
        &[
            "--json",
            "--hw-spec",
            &hw,
            "--max-evals",
            "6",
            "--iters",
            "3",
        ],
    ));
    let raw = csv_rows(&out.join("raw_results.csv"));
    assert_eq!(raw.len(), 16, "{r}");
    for row in &raw {
        assert!(
            row["status"] == "kept" || row["status"] == "dropped",
            "{spec}: {} {}: {}",
            row["gemm"],
            row["status"],
            row["reason"]
        );
        assert_eq!(row["verified"], "true", "{row:?}");
    }
    // The log's types and layouts reached the tuner as written.
    let kinds: std::collections::BTreeSet<String> = raw
        .iter()
        .map(|r| {
            format!(
                "{}{} {} {} {}",
                r["transA"], r["transB"], r["a_type"], r["b_type"], r["compute_type"]
            )
        })
        .collect();
    for k in [
        "NN bf16_r bf16_r c_f32_r",
        "NT bf16_r bf16_r c_f32_r",
        "TT bf16_r bf16_r c_f32_r",
        "TN f8_r f8_r c_f32_r",
        "TN f8_r bf8_r c_f32_r",
        "TN f32_r f32_r c_f32_r",
        "TN f32_r f32_r c_xf32_r",
    ] {
        assert!(kinds.contains(k), "{spec}: {k} missing from {kinds:?}");
    }
    assert!(raw.iter().any(|r| r["batch_count"] == "32"));
    assert!(raw.iter().any(|r| r["N"] == "1"));
}
