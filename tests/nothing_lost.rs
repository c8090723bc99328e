//! Nothing lost, nothing silent, on the sim backend: the README's commands, bad input, a
//! SIGKILL in the middle of each long command and damaged databases. After every step the
//! results database passes `PRAGMA integrity_check` and keeps every row it had, and every
//! exit code is the README's (0 ok, 1 failure, 2 usage error).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use rusqlite::Connection;

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_gemmtune"));
        c.args(args)
            .env("GEMMTUNE_CACHE_DIR", self.path("kernels"))
            .env("XDG_CACHE_HOME", self.dir.path())
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("binary runs")
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.cmd(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn expect(o: &Output, want: i32, what: &str) {
    assert_eq!(
        code(o),
        want,
        "{what}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The measurement rows of a database that must pass SQLite's whole integrity check.
fn healthy_rows(db: &Path) -> i64 {
    let c = Connection::open(db).unwrap();
    let check: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok", "{}", db.display());
    c.query_row("SELECT count(*) FROM measurements", [], |r| r.get(0))
        .unwrap()
}

/// Rows in a database another process is writing (0 before it exists).
fn rows_now(db: &Path) -> i64 {
    Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| c.query_row("SELECT count(*) FROM measurements", [], |r| r.get(0)))
        .unwrap_or(0)
}

/// Starts `args`, waits until `progress()` reaches `at_least`, then SIGKILLs it; returns
/// what `progress()` said just before the kill.
fn kill_midway(home: &Home, args: &[&str], at_least: i64, progress: impl Fn() -> i64) -> i64 {
    let mut child = home.spawn(args);
    let start = Instant::now();
    loop {
        let now = progress();
        if now >= at_least {
            child.kill().unwrap();
            child.wait().unwrap();
            return now;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "{args:?} finished before it could be killed; give it more work"
        );
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{args:?}: no progress"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

const SHAPE: &[&str] = &["--m", "2048", "--n", "64", "--k", "2048"];

fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(extra).copied().collect()
}

#[test]
fn readme_commands_and_bad_input_keep_every_measurement() {
    let home = Home::new();
    let db = home.path("results.sqlite");
    let db_arg = db.to_str().unwrap().to_string();
    let g = ["--backend", "sim", "--db", db_arg.as_str(), "-q"];
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/llama3_8b_workload.log"
    );
    let mut rows = 0;
    let out_dir = home.path("results");
    let steps: Vec<(Vec<&str>, i32)> = vec![
        (with(&g, &["bench"]), 0),
        (
            with(
                &g,
                &[
                    "bench",
                    "--transA",
                    "N",
                    "--transB",
                    "N",
                    "--a_type",
                    "f16_r",
                    "--b_type",
                    "f16_r",
                    "--c_type",
                    "f16_r",
                    "--d_type",
                    "f16_r",
                    "--beta",
                    "1",
                    "--batch_count",
                    "4",
                    "--m",
                    "512",
                    "--n",
                    "512",
                    "--k",
                    "512",
                ],
            ),
            0,
        ),
        (
            with(
                &g,
                &with(
                    &[
                        "bench",
                        "--sweep",
                        "--fix",
                        "DepthU=32,64",
                        "--max-configs",
                        "20",
                    ],
                    SHAPE,
                ),
            ),
            0,
        ),
        (with(&g, &with(&["tune", "--max-evals", "16"], SHAPE)), 0),
        (with(&g, &["log", fixture]), 0),
        (
            with(
                &g,
                &[
                    "tune-log",
                    fixture,
                    "--max-evals",
                    "8",
                    "--out",
                    out_dir.to_str().unwrap(),
                ],
            ),
            0,
        ),
        (with(&g, &["specs"]), 0),
        // Bad input: usage errors, nothing written.
        (with(&g, &["bench", "--a_type", "q4_r"]), 2),
        (with(&g, &["bench", "--m", "-5"]), 2),
        (with(&g, &["bench", "--alpha", "nan"]), 2),
        (with(&g, &["bench", "--beta", "inf"]), 2),
        (with(&g, &["tune", "--max-evals", "0"]), 2),
        (with(&g, &["bench", "--hw-spec", "/no/such/spec.toml"]), 2),
        (
            with(&g, &["tune", "--llm-url", "not a url", "--llm-model", "m"]),
            2,
        ),
        (with(&g, &["bench", "--bias_vector"]), 2),
        (with(&g, &["source", "--config", "MT1x1"]), 2),
        (with(&g, &["specs", "--csv", "x.csv"]), 2),
        // Failures: exit 1, nothing lost.
        (
            // 8-bit inputs have kernels in layout TN only.
            with(
                &g,
                &[
                    "bench", "--a_type", "f8_r", "--b_type", "f8_r", "--transA", "N",
                ],
            ),
            1,
        ),
        (
            with(
                &g,
                &["bench", "--m", "200000", "--n", "200000", "--k", "100000"],
            ),
            1,
        ),
    ];
    for (args, want) in steps {
        let o = home.run(&args);
        expect(&o, want, &format!("{args:?}"));
        let now = healthy_rows(&db);
        assert!(now >= rows, "{args:?} lost rows: {rows} -> {now}");
        if want != 0 {
            assert_eq!(now, rows, "{args:?} failed but wrote rows");
        }
        rows = now;
    }
    assert!(rows > 0);
    let tune_log_db = out_dir.join("results.sqlite");
    if tune_log_db.exists() {
        healthy_rows(&tune_log_db);
    }
}

/// A SIGKILL in the middle of bench, tune, sweep and tune-log: the database stays whole with
/// every row written before the kill, the sweep file stays readable, and the same command run
/// again completes.
#[test]
fn a_kill_in_the_middle_of_each_long_command_loses_nothing() {
    let home = Home::new();
    let db = home.path("results.sqlite");
    let db_arg = db.to_str().unwrap().to_string();
    let g = ["--backend", "sim", "--db", db_arg.as_str(), "-q"];
    let run_dir = home.path("tune-run");
    let run_dir = run_dir.to_str().unwrap();
    let long: Vec<(&str, Vec<&str>)> = vec![
        (
            "bench",
            with(
                &g,
                &with(
                    &["bench", "--sweep", "--max-configs", "200", "--iters", "50"],
                    SHAPE,
                ),
            ),
        ),
        (
            "tune",
            with(
                &g,
                &with(
                    &[
                        "tune",
                        "--strategy",
                        "random",
                        "--max-evals",
                        "200",
                        "--iters",
                        "50",
                        "--out",
                        run_dir,
                    ],
                    SHAPE,
                ),
            ),
        ),
    ];
    for (name, args) in &long {
        let before = healthy_rows_or_zero(&db);
        let seen = kill_midway(&home, args, before + 5, || rows_now(&db));
        let after = healthy_rows(&db);
        assert!(
            after >= seen,
            "{name}: {seen} rows before the kill, {after} after"
        );
        let again = home.run(args);
        expect(&again, 0, &format!("{name} after a kill"));
        assert!(healthy_rows(&db) >= after, "{name}: the rerun lost rows");
    }

    // sweep writes its dataset as it goes: what it measured before the kill is readable.
    let file = home.path("sweep.jsonl");
    let sweep = with(
        &g,
        &with(
            &[
                "sweep",
                "--max-configs",
                "400",
                "--iters",
                "50",
                "--out",
                file.to_str().unwrap(),
            ],
            SHAPE,
        ),
    );
    kill_midway(&home, &sweep, 3, || {
        std::fs::read_to_string(&file)
            .map(|t| t.lines().count() as i64)
            .unwrap_or(0)
    });
    let partial = gemmtune::device::replay::Dataset::load(&file).expect("readable after a kill");
    assert!(!partial.is_empty());

    // tune-log resumes into the same directory.
    let out = home.path("workload");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/llama3_8b_workload.log"
    );
    let tl = with(
        &g,
        &[
            "tune-log",
            fixture,
            "--max-evals",
            "40",
            "--iters",
            "50",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let before = healthy_rows(&db);
    let seen = kill_midway(&home, &tl, before + 10, || rows_now(&db));
    assert!(healthy_rows(&db) >= seen);
    expect(&home.run(&tl), 0, "tune-log after a kill");
    healthy_rows(&db);
}

fn healthy_rows_or_zero(db: &Path) -> i64 {
    if db.exists() {
        healthy_rows(db)
    } else {
        0
    }
}

/// A database damaged on disk (a page overwritten in the middle, or a table dropped) is
/// refused by every command that writes to it: exit 1, its path and how to recover on
/// stderr, and the file left exactly as it was.
#[test]
fn a_damaged_database_is_refused_by_every_command_and_left_as_it_was() {
    let home = Home::new();
    let good = home.path("good.sqlite");
    let good_arg = good.to_str().unwrap().to_string();
    for k in ["1024", "2048", "4096", "8192"] {
        let o = home.run(&[
            "--backend",
            "sim",
            "--db",
            &good_arg,
            "-q",
            "bench",
            "--m",
            "1024",
            "--n",
            "109",
            "--k",
            k,
        ]);
        expect(&o, 0, "filling the database");
    }
    let rows = healthy_rows(&good);
    assert!(rows > 20);
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/llama3_8b_workload.log"
    );

    let overwritten = home.path("overwritten.sqlite");
    let mut bytes = std::fs::read(&good).unwrap();
    let middle = bytes.len() / 2 / 4096 * 4096;
    bytes[middle..middle + 4096].fill(0xab);
    std::fs::write(&overwritten, &bytes).unwrap();

    let dropped = home.path("dropped.sqlite");
    std::fs::copy(&good, &dropped).unwrap();
    Connection::open(&dropped)
        .unwrap()
        .execute_batch("DROP TABLE measurements")
        .unwrap();

    for damaged in [&overwritten, &dropped] {
        let before = std::fs::read(damaged).unwrap();
        let d = damaged.to_str().unwrap();
        let out = home.path("tl");
        for args in [
            vec!["bench"],
            vec!["tune", "--max-evals", "4"],
            vec![
                "tune-log",
                fixture,
                "--max-evals",
                "4",
                "--out",
                out.to_str().unwrap(),
            ],
        ] {
            let all = with(&["--backend", "sim", "--db", d], &args);
            let o = home.run(&all);
            expect(&o, 1, &format!("{all:?}"));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains(d) && err.contains("damaged"), "{err}");
            assert_eq!(
                std::fs::read(damaged).unwrap(),
                before,
                "{all:?} wrote to {d}"
            );
        }
    }
    assert_eq!(healthy_rows(&good), rows);
}
