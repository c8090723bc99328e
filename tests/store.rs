//! The results database through its public API: outcomes stored whole, resume lookups,
//! report queries, migration from an older schema, refusing files that are not ours
//! without touching them, and several writers at once.

use std::path::Path;

use gemmtune::device::{Outcome, Verification};
use gemmtune::problem::GemmProblem;
use gemmtune::store::schema::{self, APPLICATION_ID, CURRENT_VERSION};
use gemmtune::store::{MeasurementExtra, MeasurementKey, NewRun, RunStatus, Store, StoreError};
use rusqlite::Connection;

fn key(problem: &GemmProblem, config: &str) -> MeasurementKey {
    MeasurementKey {
        device_name: "NVIDIA H200".into(),
        arch: "sm_90a".into(),
        driver_version: "580.65.06".into(),
        compiler_version: "nvrtc-13.0".into(),
        source_hash: "9f2c".into(),
        problem_key: problem.key(),
        config_name: config.into(),
    }
}

fn verification(err: f64, passed: bool) -> Verification {
    Verification {
        max_abs_err: err,
        max_rel_err: err / 2.0,
        rel_l2_err: err / 4.0,
        tolerance: 1e-2,
        passed,
        method: "gpu-reference".into(),
    }
}

fn timed(samples: &[f64]) -> Outcome {
    Outcome::Timed {
        samples_us: samples.to_vec(),
        verification: verification(1e-3, true),
    }
}

fn new_run(store: &mut Store) -> i64 {
    store
        .begin_run(&NewRun {
            command_line: "gemmtune tune -m 16032 -n 109 -k 16384".into(),
            strategy: Some("random".into()),
            device: Some("NVIDIA H200 sm_90a".into()),
        })
        .unwrap()
}

#[test]
fn every_outcome_variant_round_trips_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.sqlite")).unwrap();
    let run = new_run(&mut store);
    let p = GemmProblem::new(16032, 109, 16384);
    let outcomes = [
        timed(&[12.5, 11.0, 13.25]),
        Outcome::Invalid {
            reason: "MT256x256 needs 128 KiB of LDS".into(),
        },
        Outcome::CompileFailed {
            stderr: "error: too many resources\n  at line 3".into(),
        },
        Outcome::LaunchFailed {
            message: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
        },
        Outcome::Timeout { after_s: 30.0 },
        Outcome::WrongResult {
            verification: verification(0.5, false),
        },
        // A kernel writing NaNs: JSON has no NaN, the store must still give it back.
        Outcome::WrongResult {
            verification: Verification {
                max_abs_err: f64::NAN,
                max_rel_err: f64::INFINITY,
                ..verification(0.0, false)
            },
        },
    ];
    let extra = MeasurementExtra {
        compile_ms: Some(812.5),
        registers: Some(168),
        spill_bytes: Some(0),
        shared_bytes: Some(65536),
    };
    for (i, outcome) in outcomes.iter().enumerate() {
        let k = key(&p, &format!("cfg{i}"));
        let id = store.record(Some(run), &k, &p, outcome, &extra).unwrap();
        let back = store.lookup(&k).unwrap().expect("stored");
        assert_eq!(back.id, id);
        assert_eq!(back.run_id, Some(run));
        assert_eq!(back.key, k);
        assert_eq!(back.problem, p);
        assert_eq!(back.extra, extra);
        assert_eq!(back.status(), outcome.status());
        if i == outcomes.len() - 1 {
            let v = back.outcome.verification().unwrap();
            assert!(v.max_abs_err.is_nan());
            assert_eq!(v.max_rel_err, f64::INFINITY);
        } else {
            assert_eq!(&back.outcome, outcome);
        }
    }
    let timed_back = store.lookup(&key(&p, "cfg0")).unwrap().unwrap();
    let stats = timed_back.stats.unwrap();
    assert_eq!(
        (stats.min_us, stats.median_us, stats.samples),
        (11.0, 12.5, 3)
    );
    assert!(store
        .lookup(&key(&p, "cfg1"))
        .unwrap()
        .unwrap()
        .stats
        .is_none());
    assert_eq!(store.measurement_count().unwrap(), outcomes.len() as u64);
}

#[test]
fn lookup_matches_the_whole_key_and_returns_the_latest() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.sqlite")).unwrap();
    let p = GemmProblem::new(4096, 8, 4096);
    let k = key(&p, "MT64x16x128");
    assert!(store.lookup(&k).unwrap().is_none());
    store
        .record(None, &k, &p, &timed(&[5.0]), &MeasurementExtra::default())
        .unwrap();
    let latest = store
        .record(None, &k, &p, &timed(&[4.0]), &MeasurementExtra::default())
        .unwrap();
    let got = store.lookup(&k).unwrap().unwrap();
    assert_eq!(got.id, latest);
    assert_eq!(got.outcome.samples(), Some(&[4.0][..]));
    assert_eq!(got.run_id, None);

    // Any part of the key differing means "not measured yet".
    let variants: [fn(&mut MeasurementKey); 6] = [
        |k| k.device_name = "NVIDIA H100".into(),
        |k| k.arch = "sm_90".into(),
        |k| k.driver_version = "575.0".into(),
        |k| k.compiler_version = "nvrtc-12.8".into(),
        |k| k.source_hash = "other".into(),
        |k| k.config_name = "MT64x16x64".into(),
    ];
    for change in variants {
        let mut other = k.clone();
        change(&mut other);
        assert!(store.lookup(&other).unwrap().is_none(), "{other:?}");
    }
    let other_problem = GemmProblem::new(4096, 16, 4096);
    assert!(store
        .lookup(&key(&other_problem, "MT64x16x128"))
        .unwrap()
        .is_none());
}

#[test]
fn report_queries() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.sqlite")).unwrap();
    let run = new_run(&mut store);
    let p = GemmProblem::new(16032, 109, 16384);
    let q = GemmProblem::new(16032, 113, 16384);
    let none = MeasurementExtra::default();
    let vendor = MeasurementKey::vendor_config("cublaslt");
    for (config, samples) in [("A", 30.0), ("B", 20.0), ("C", 25.0), ("A", 10.0)] {
        store
            .record(Some(run), &key(&p, config), &p, &timed(&[samples]), &none)
            .unwrap();
    }
    store
        .record(
            Some(run),
            &key(&p, "D"),
            &p,
            &Outcome::Timeout { after_s: 1.0 },
            &none,
        )
        .unwrap();
    store
        .record(Some(run), &key(&p, &vendor), &p, &timed(&[5.0]), &none)
        .unwrap();
    store
        .record(Some(run), &key(&q, "E"), &q, &timed(&[1.0]), &none)
        .unwrap();
    let mut on_h100 = key(&p, "F");
    on_h100.device_name = "NVIDIA H100".into();
    store
        .record(Some(run), &on_h100, &p, &timed(&[0.5]), &none)
        .unwrap();

    let all = store
        .measurements_for_problem(&p.key(), "NVIDIA H200")
        .unwrap();
    assert_eq!(all.len(), 6);
    assert!(all.windows(2).all(|w| w[0].id < w[1].id));

    // A counts once, with its latest timing; the vendor row and failures are left out.
    let best = store.best(&p.key(), "NVIDIA H200", 10).unwrap();
    let names: Vec<_> = best.iter().map(|m| m.key.config_name.as_str()).collect();
    assert_eq!(names, vec!["A", "B", "C"]);
    assert_eq!(best[0].stats.unwrap().median_us, 10.0);
    assert_eq!(store.best(&p.key(), "NVIDIA H200", 2).unwrap().len(), 2);

    let v = store
        .latest_vendor(&p.key(), "NVIDIA H200")
        .unwrap()
        .unwrap();
    assert!(v.key.is_vendor());
    assert!(store
        .latest_vendor(&q.key(), "NVIDIA H200")
        .unwrap()
        .is_none());

    store.finish_run(run, RunStatus::Finished).unwrap();
    let second = new_run(&mut store);
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].status, Some(RunStatus::Finished));
    assert!(runs[0].finished_at_ms.unwrap() >= runs[0].started_at_ms);
    assert_eq!(runs[1].id, second);
    assert_eq!(runs[1].status, Some(RunStatus::Running));
    assert_eq!(runs[1].strategy.as_deref(), Some("random"));
    assert!(matches!(
        store.finish_run(999, RunStatus::Failed),
        Err(StoreError::NoSuchRun(999))
    ));
}

#[test]
fn open_creates_directories_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/c/results.sqlite");
    let p = GemmProblem::new(64, 64, 64);
    let k = key(&p, "X");
    {
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), CURRENT_VERSION);
        store
            .record(None, &k, &p, &timed(&[1.0]), &MeasurementExtra::default())
            .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert!(store.lookup(&k).unwrap().is_some());
    let mode: String = Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert!(Store::default_path()
        .map(|p| p.ends_with("gemmtune/results.sqlite"))
        .unwrap_or(true));
}

#[test]
fn a_v1_database_is_migrated_with_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    let p = GemmProblem::new(16032, 109, 16384);
    let k = key(&p, "MT128x112x64");
    let outcome = timed(&[7.0, 8.0]);
    {
        // What a first release wrote: schema v1, no resource columns.
        let mut conn = Connection::open(&path).unwrap();
        schema::migrate_to(&mut conn, 1).unwrap();
        conn.execute_batch(&format!(
            "INSERT INTO runs (id, started_at, command_line, status) VALUES (1, 1000, 'gemmtune tune', 'finished');
             INSERT INTO problems (id, key, json) VALUES (1, '{}', '{}');
             INSERT INTO configs (id, name) VALUES (1, '{}');
             INSERT INTO measurements (run_id, problem_id, config_id, device_name, arch,
                 driver_version, compiler_version, source_hash, status, samples_json,
                 min_us, median_us, mean_us, stddev_us, verification_json, outcome_json, recorded_at)
             VALUES (1, 1, 1, '{}', '{}', '{}', '{}', '{}', 'ok', '[7.0,8.0]', 7.0, 7.5, 7.5, 0.7,
                 NULL, '{}', 2000);",
            k.problem_key,
            serde_json::to_string(&p).unwrap(),
            k.config_name,
            k.device_name,
            k.arch,
            k.driver_version,
            k.compiler_version,
            k.source_hash,
            serde_json::to_string(&outcome).unwrap(),
        ))
        .unwrap();
        assert_eq!(schema::version(&conn).unwrap(), 1);
    }
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), CURRENT_VERSION);
    let old = store.lookup(&k).unwrap().expect("v1 row survives");
    assert_eq!(old.outcome, outcome);
    assert_eq!(old.problem, p);
    assert_eq!(old.run_id, Some(1));
    assert_eq!(old.recorded_at_ms, 2000);
    assert_eq!(old.extra, MeasurementExtra::default());
    assert_eq!(store.runs().unwrap()[0].command_line, "gemmtune tune");
    // New rows use the v2 columns.
    let extra = MeasurementExtra {
        registers: Some(96),
        ..Default::default()
    };
    store.record(None, &k, &p, &outcome, &extra).unwrap();
    assert_eq!(store.lookup(&k).unwrap().unwrap().extra, extra);
}

fn assert_refused_untouched(path: &Path, bytes: &[u8], check: impl Fn(&StoreError) -> bool) {
    let err = Store::open(path).unwrap_err();
    assert!(check(&err), "unexpected error: {err}");
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "error should name the file: {err}"
    );
    assert_eq!(std::fs::read(path).unwrap(), bytes, "file was modified");
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    for suffix in ["-wal", "-shm", "-journal"] {
        assert!(!path.with_file_name(format!("{name}{suffix}")).exists());
    }
}

#[test]
fn corrupt_files_are_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("text.sqlite", b"step,time_us\n1,12.5\n".to_vec()),
        (
            "random.sqlite",
            (0..4096u32)
                .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
                .collect(),
        ),
        ("short.sqlite", b"SQLite format 3\0\x10\x00".to_vec()),
    ];
    for (name, bytes) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        assert_refused_untouched(&path, &bytes, |e| {
            matches!(e, StoreError::NotADatabase { .. }) && e.to_string().contains("untouched")
        });
    }
}

#[test]
fn a_damaged_gemmtune_database_is_an_error_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.sqlite");
    {
        let mut store = Store::open(&path).unwrap();
        let p = GemmProblem::new(64, 64, 64);
        store
            .record(
                None,
                &key(&p, "X"),
                &p,
                &timed(&[1.0]),
                &MeasurementExtra::default(),
            )
            .unwrap();
    }
    // Keep the header (so it still says gemmtune) and scramble everything after it.
    let mut bytes = std::fs::read(&path).unwrap();
    for (i, b) in bytes.iter_mut().enumerate().skip(100) {
        *b = (i as u32).wrapping_mul(2654435761).to_be_bytes()[1];
    }
    std::fs::write(&path, &bytes).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err}");
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "file was modified");
}

/// A database of several pages with one page in the middle overwritten, as a disk or a
/// careless copy leaves it: refused before anything is written, with how to recover.
#[test]
fn a_page_overwritten_in_the_middle_is_refused_before_any_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    {
        let mut store = Store::open(&path).unwrap();
        for i in 0..400 {
            let p = GemmProblem::new(64 + i, 64, 64);
            store
                .record(
                    None,
                    &key(&p, &format!("kernel{i}")),
                    &p,
                    &timed(&[1.0, 2.0, 3.0]),
                    &MeasurementExtra::default(),
                )
                .unwrap();
        }
    }
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 16 * 4096, "{} bytes", bytes.len());
    let middle = bytes.len() / 2;
    bytes[middle..middle + 4096].fill(0xab);
    std::fs::write(&path, &bytes).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(
        text.contains("nothing was written") && text.contains(".recover"),
        "{text}"
    );
    assert!(!text.contains('\n'), "one line: {text}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "file was modified");
}

#[test]
fn a_dropped_table_is_refused_not_written_around() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    drop(Store::open(&path).unwrap());
    Connection::open(&path)
        .unwrap()
        .execute_batch("DROP TABLE measurements")
        .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::Damaged { .. }) && err.to_string().contains("`measurements`"),
        "{err}"
    );
}

#[test]
fn foreign_databases_are_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();

    let marked = dir.path().join("marked.sqlite");
    {
        let conn = Connection::open(&marked).unwrap();
        conn.execute_batch(
            "PRAGMA application_id = 1234; CREATE TABLE t (x); INSERT INTO t VALUES (1);",
        )
        .unwrap();
    }
    let bytes = std::fs::read(&marked).unwrap();
    assert_refused_untouched(&marked, &bytes, |e| {
        matches!(
            e,
            StoreError::Foreign {
                application_id: 1234,
                ..
            }
        )
    });

    let unmarked = dir.path().join("unmarked.sqlite");
    {
        let conn = Connection::open(&unmarked).unwrap();
        conn.execute_batch("CREATE TABLE measurements (x); INSERT INTO measurements VALUES (1);")
            .unwrap();
    }
    let bytes = std::fs::read(&unmarked).unwrap();
    assert_refused_untouched(&unmarked, &bytes, |e| {
        matches!(
            e,
            StoreError::Foreign {
                application_id: 0,
                ..
            }
        )
    });

    // An empty file (as `touch` leaves it) becomes a new database.
    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    Store::open(&empty).unwrap();
    let app: i64 = Connection::open(&empty)
        .unwrap()
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app as u32, APPLICATION_ID);
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.sqlite");
    drop(Store::open(&path).unwrap());
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", CURRENT_VERSION + 5)
        .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::TooNew { found, .. } if found == CURRENT_VERSION + 5),
        "{err}"
    );
}

#[test]
fn concurrent_writers_on_separate_connections() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.sqlite");
    const WRITERS: usize = 4;
    const EACH: usize = 50;
    // All writers open the brand-new file at the same moment: creation and migration
    // must be safe to race.
    let barrier = std::sync::Barrier::new(WRITERS);
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let (path, barrier) = (&path, &barrier);
            s.spawn(move || {
                barrier.wait();
                let mut store = Store::open(path).unwrap();
                let run = new_run(&mut store);
                let p = GemmProblem::new(1024, 8 * (1 + w as i64 % 2), 4096);
                for i in 0..EACH {
                    let k = key(&p, &format!("w{w}_c{i}"));
                    store
                        .record(
                            Some(run),
                            &k,
                            &p,
                            &timed(&[i as f64 + 1.0]),
                            &MeasurementExtra::default(),
                        )
                        .unwrap();
                }
                store.finish_run(run, RunStatus::Finished).unwrap();
            });
        }
    });
    let store = Store::open(&path).unwrap();
    assert_eq!(store.measurement_count().unwrap(), (WRITERS * EACH) as u64);
    assert_eq!(store.runs().unwrap().len(), WRITERS);
    let p = GemmProblem::new(1024, 8, 4096);
    assert_eq!(
        store
            .measurements_for_problem(&p.key(), "NVIDIA H200")
            .unwrap()
            .len(),
        EACH * WRITERS / 2
    );
}

#[test]
fn llm_rounds_and_the_corpus_read_back() {
    use gemmtune::store::LlmRoundRow;
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.sqlite")).unwrap();
    let run = new_run(&mut store);
    let p = GemmProblem::new(16032, 109, 16384);
    let rounds = vec![
        LlmRoundRow {
            round: 0,
            requests: 1,
            suggested: 8,
            valid: 8,
            from_llm: 6,
            filled: 2,
            fell_back: false,
            input_tokens: 3100,
            output_tokens: 700,
            wall_s: 12.5,
        },
        LlmRoundRow {
            round: 1,
            requests: 1,
            filled: 8,
            fell_back: true,
            wall_s: 30.0,
            ..Default::default()
        },
    ];
    store
        .record_llm_rounds(Some(run), &p.key(), "smollm2", &rounds)
        .unwrap();
    assert_eq!(store.llm_rounds(Some(run)).unwrap(), rounds);
    assert_eq!(store.llm_rounds(Some(run + 1)).unwrap(), vec![]);

    // The corpus: each config's latest measurement of each problem and device, failures as
    // `None`, vendor baselines left out.
    let q = GemmProblem::new(4096, 4096, 4096);
    let a = "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0";
    let b = "MT64x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0";
    let extra = MeasurementExtra::default();
    store
        .record(Some(run), &key(&p, a), &p, &timed(&[20.0]), &extra)
        .unwrap();
    store
        .record(Some(run), &key(&p, a), &p, &timed(&[10.0]), &extra)
        .unwrap();
    store
        .record(
            Some(run),
            &key(&p, b),
            &p,
            &Outcome::CompileFailed {
                stderr: "too many registers".into(),
            },
            &extra,
        )
        .unwrap();
    store
        .record(Some(run), &key(&q, a), &q, &timed(&[300.0]), &extra)
        .unwrap();
    store
        .record(
            Some(run),
            &key(&q, &MeasurementKey::vendor_config("cublaslt")),
            &q,
            &timed(&[250.0]),
            &extra,
        )
        .unwrap();
    let mut rows = store.corpus().unwrap();
    rows.sort_by(|x, y| (x.problem.m, &x.config_name).cmp(&(y.problem.m, &y.config_name)));
    let got: Vec<(i64, &str, Option<f64>)> = rows
        .iter()
        .map(|r| (r.problem.m, r.config_name.as_str(), r.median_us))
        .collect();
    assert_eq!(
        got,
        vec![
            (4096, a, Some(300.0)),
            (16032, a, Some(10.0)),
            (16032, b, None)
        ]
    );
    assert!(rows.iter().all(|r| r.device_name == "NVIDIA H200"));
}
