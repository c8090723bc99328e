//! hipBLASLt log parsing: the GEMMs a real workload ran, with how often it ran each.
//!
//! Both formats hipBLASLt writes are read, mixed freely in one file:
//! - `HIPBLASLT_LOG_MASK=64/128` profile entries, `- {function: matmul, M: ..., call_count: N}`
//!   ([`yaml`]);
//! - `HIPBLASLT_LOG_MASK=32` bench command lines, `hipblaslt-bench -m ... -n ... -k ...`
//!   ([`bench`]), each counting as one call.
//!
//! Flow: each line is recognised by its shape, split into `key -> value` pairs borrowed from
//! the line, classified and turned into [`GemmProblem`]s ([`fields`]), defaulted and
//! validated, then merged by [`GemmProblem::key`] into one [`LogEntry`] per distinct problem
//! (first-seen order, call counts summed). Other program output interleaved with the log is
//! skipped silently; a line that is meant to be a GEMM entry but is broken becomes an
//! error [`LogIssue`] with its line number while the rest of the log still parses. Fields
//! the tuner does not use are never fatal: fused epilogues and unknown keys are kept in
//! [`LogEntry::extra`] and warned about once per key ([`extra_kind`] tells a report which
//! is which).
//!
//! hipBLASLt is column-major: a PyTorch `y = x @ W.T` with `x: [tokens, in]` and
//! `W: [out, in]` is logged as `M = out`, `N = tokens`, `K = in`, `transA = T`, `transB = N`.

mod bench;
mod fields;
pub use fields::BENCH_SCALES;
mod yaml;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::GemmProblem;

/// One distinct GEMM of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub problem: GemmProblem,
    /// Calls summed over every line with this problem.
    pub call_count: u64,
    /// 1-based line of the first occurrence in `source`.
    pub first_line: usize,
    /// The file (or label) of the first occurrence.
    pub source: String,
    /// Fields that matter to the workload but not to the tuned kernel: active fused
    /// epilogues and scaling (`activation_type: gelu`, `bias_vector: true`, ...) with their
    /// details, and unknown keys, verbatim. For merged lines the first value seen wins.
    pub extra: BTreeMap<String, String>,
}

impl LogEntry {
    /// Floating-point work of all calls together, to rank entries by their share of the run.
    pub fn total_flops(&self) -> f64 {
        self.problem.flops() * self.call_count as f64
    }
}

/// What a key kept in [`LogEntry::extra`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraKind {
    /// Changes what is computed beyond the plain GEMM: a fused epilogue, vector scaling, an
    /// amax output, a swizzled layout (`bias_vector`, `activation_type`, `use_e`, ...).
    Feature,
    /// Describes an active feature (`bias_type`, `activation_arg1`, ...).
    Detail,
    /// A field this parser does not know.
    Unknown,
}

/// Classifies a key of [`LogEntry::extra`], so that a report can say what each one means.
pub fn extra_kind(key: &str) -> ExtraKind {
    match fields::classify(key) {
        fields::KeyKind::Feature(_) => ExtraKind::Feature,
        fields::KeyKind::Detail => ExtraKind::Detail,
        _ => ExtraKind::Unknown,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// Something worth telling the user about one line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogIssue {
    pub source: String,
    pub line: usize,
    pub severity: Severity,
    pub message: String,
}

impl fmt::Display for LogIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(
            f,
            "{}:{}: {level}: {}",
            self.source, self.line, self.message
        )
    }
}

/// Everything read from one or more logs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ParsedLog {
    /// One entry per distinct problem, in first-seen order.
    pub entries: Vec<LogEntry>,
    pub issues: Vec<LogIssue>,
    pub lines_read: usize,
    /// Lines recognised as matmul entries of either format, broken ones included.
    pub gemm_lines: usize,
    /// Profile entries for functions other than `matmul`, skipped.
    pub other_function_lines: usize,
}

impl ParsedLog {
    pub fn errors(&self) -> impl Iterator<Item = &LogIssue> {
        self.issues.iter().filter(|i| i.severity == Severity::Error)
    }

    pub fn warnings(&self) -> impl Iterator<Item = &LogIssue> {
        self.issues
            .iter()
            .filter(|i| i.severity == Severity::Warning)
    }

    /// Calls of all entries together.
    pub fn total_calls(&self) -> u64 {
        self.entries.iter().map(|e| e.call_count).sum()
    }
}

/// Failures of the parser itself; problems inside a log are [`LogIssue`]s.
#[derive(Debug, Error)]
pub enum LogError {
    #[error("cannot read hipBLASLt log {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Parses one log held in memory; `source` names it in issues and entries.
pub fn parse_str(text: &str, source: &str) -> ParsedLog {
    let mut parser = LogParser::new();
    parser.feed(text, source);
    parser.finish()
}

/// Parses several log files into one result; the same problem in two files is one entry.
/// Bytes that are not UTF-8 (binary output interleaved with the log) are replaced, not fatal.
pub fn parse_files(paths: &[PathBuf]) -> Result<ParsedLog, LogError> {
    let mut parser = LogParser::new();
    for path in paths {
        let bytes = std::fs::read(path).map_err(|source| LogError::Io {
            path: path.clone(),
            source,
        })?;
        parser.feed(&String::from_utf8_lossy(&bytes), &display(path));
    }
    Ok(parser.finish())
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// Accumulates lines from any number of sources, merging problems as it goes.
#[derive(Debug, Default)]
pub struct LogParser {
    out: ParsedLog,
    /// Problem key -> index into `out.entries`.
    index: HashMap<String, usize>,
    /// Keys already warned about, so a key repeated on every line warns once.
    warned: HashSet<String>,
    /// Lines already merged, with the entries and calls they added: bench logs repeat the
    /// same command line for every call, and re-parsing it would add nothing.
    seen_lines: HashMap<String, Vec<(usize, u64)>>,
}

impl LogParser {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn feed(&mut self, text: &str, source: &str) {
        for (i, line) in text.lines().enumerate() {
            self.out.lines_read += 1;
            self.line(line, i + 1, source);
        }
    }

    pub fn finish(self) -> ParsedLog {
        self.out
    }

    fn line(&mut self, line: &str, number: usize, source: &str) {
        let trimmed = line.trim();
        if let Some(added) = self.seen_lines.get(trimmed) {
            self.out.gemm_lines += 1;
            for &(i, calls) in added {
                let entry = &mut self.out.entries[i];
                entry.call_count = entry.call_count.saturating_add(calls);
            }
            return;
        }
        let parsed = if yaml::is_entry(trimmed) {
            yaml::parse(trimmed)
        } else if let Some(args) = bench::invocation(trimmed) {
            bench::parse(args)
        } else {
            return;
        };
        let fields = match parsed {
            Ok(f) => f,
            Err(message) => {
                self.out.gemm_lines += 1;
                return self.issue(source, number, Severity::Error, message);
            }
        };
        if let Some(function) = fields.function {
            if function != "matmul" {
                self.out.other_function_lines += 1;
                return;
            }
        }
        self.out.gemm_lines += 1;
        let calls = match fields.call_count {
            None => 1,
            Some(text) => match text.parse::<u64>() {
                Ok(n) => n,
                Err(_) => {
                    let message = format!(
                        "bad value `{text}` for call_count: expected a non-negative integer"
                    );
                    return self.issue(source, number, Severity::Error, message);
                }
            },
        };
        let problems = match fields.build() {
            Ok(p) => p,
            Err(message) => return self.issue(source, number, Severity::Error, message),
        };

        let mut extra = BTreeMap::new();
        for &(key, value) in fields.features.iter().chain(fields.active_details()) {
            extra.insert(key.to_string(), value.to_string());
        }
        for &(key, value) in &fields.features {
            if self.warned.insert(key.to_string()) {
                let message = format!(
                    "fused `{key}: {value}` is not tuned: gemmtune tunes the plain GEMM and \
                     keeps the setting with the entry (warned once per key)"
                );
                self.issue(source, number, Severity::Warning, message);
            }
        }
        for &(key, value) in &fields.unknown {
            extra.insert(key.to_string(), value.to_string());
            if self.warned.insert(key.to_string()) {
                let message = format!(
                    "unknown field `{key}` kept with the entry and ignored for tuning \
                     (warned once per key)"
                );
                self.issue(source, number, Severity::Warning, message);
            }
        }

        // A line read in full is remembered with what it added, so its repeats (a log holds
        // the same call thousands of times) only add their calls.
        let mut added = Vec::new();
        let mut whole = true;
        for problem in problems {
            if let Err(e) = problem.validate() {
                self.issue(
                    source,
                    number,
                    Severity::Error,
                    format!("invalid GEMM: {e}"),
                );
                whole = false;
                continue;
            }
            added.push((self.merge(problem, calls, number, source, &extra), calls));
        }
        if whole {
            self.seen_lines.insert(trimmed.to_string(), added);
        }
    }

    fn merge(
        &mut self,
        problem: GemmProblem,
        calls: u64,
        number: usize,
        source: &str,
        extra: &BTreeMap<String, String>,
    ) -> usize {
        let key = problem.key();
        if let Some(&i) = self.index.get(&key) {
            let entry = &mut self.out.entries[i];
            entry.call_count = entry.call_count.saturating_add(calls);
            for (k, v) in extra {
                entry.extra.entry(k.clone()).or_insert_with(|| v.clone());
            }
            return i;
        }
        let i = self.out.entries.len();
        self.index.insert(key, i);
        self.out.entries.push(LogEntry {
            problem,
            call_count: calls,
            first_line: number,
            source: source.to_string(),
            extra: extra.clone(),
        });
        i
    }

    fn issue(&mut self, source: &str, line: usize, severity: Severity, message: String) {
        self.out.issues.push(LogIssue {
            source: source.to_string(),
            line,
            severity,
            message,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: &str = "- {function: matmul, M: 16032, N: 109, K: 16384, lda: 16384, ldb: 16384, ldc: 16032, ldd: 16032, stride_a: 0, stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.0, beta: 0.0, transA: T, transB: N, batch_count: 1, scaleA: 0, scaleB: 0, scaleAlpha_vector: false, gradient: false, use_e: false, bias_vector: false, bias_source: d, a_type: bf16_r, b_type: bf16_r, c_type: bf16_r, d_type: bf16_r, scale_type: f32_r, bias_type: f32_r, compute_type: c_f32_r, activation_type: none, flush: false, rotating: 512, cold_iters: 0, iters: 0, call_count: 1}";

    #[test]
    fn seed_line_is_the_seed_problem_without_extras() {
        let log = parse_str(SEED, "seed");
        assert!(log.issues.is_empty(), "{:?}", log.issues);
        assert_eq!(log.entries.len(), 1);
        let e = &log.entries[0];
        assert_eq!(e.problem, GemmProblem::new(16032, 109, 16384));
        assert!(e.extra.is_empty());
        assert_eq!((e.call_count, e.first_line), (1, 1));
    }

    #[test]
    fn both_formats_merge_into_one_entry() {
        let bench = GemmProblem::new(16032, 109, 16384).hipblaslt_bench_args();
        let text = format!(
            "{SEED}\nnoise\n{bench}\n{}",
            SEED.replace("call_count: 1", "call_count: 5")
        );
        let log = parse_str(&text, "mixed");
        assert_eq!(log.entries.len(), 1);
        assert_eq!(log.entries[0].call_count, 7);
        assert_eq!((log.lines_read, log.gemm_lines), (4, 3));
    }

    #[test]
    fn repeated_lines_count_and_repeated_errors_are_each_reported() {
        let good = "hipblaslt-bench -m 64 -n 8 -k 32 --transA T";
        let bad = "hipblaslt-bench -m 64 -n 8 -k 32 --lda 1";
        let log = parse_str(&[good, bad, good, bad, good].join("\n"), "r");
        assert_eq!(log.entries.len(), 1);
        assert_eq!(log.entries[0].call_count, 3);
        let lines: Vec<_> = log.errors().map(|e| e.line).collect();
        assert_eq!(lines, vec![2, 4]);
        assert_eq!(log.gemm_lines, 5);
    }

    #[test]
    fn per_tensor_scales_are_part_of_the_problem() {
        let line = SEED
            .replace("scaleA: 0, scaleB: 0", "scaleA: 1, scaleB: 1")
            .replace(
                "a_type: bf16_r, b_type: bf16_r",
                "a_type: f8_r, b_type: f8_r",
            );
        let log = parse_str(&line, "fp8");
        assert!(log.issues.is_empty(), "{:?}", log.issues);
        let p = &log.entries[0].problem;
        assert_eq!(
            (p.scale_a, p.scale_b, p.scale_c, p.scale_d),
            (0.5, 0.25, 1.0, 1.0)
        );
        assert!(log.entries[0].extra.is_empty());
        // The command-line form round-trips.
        let again = parse_str(&p.hipblaslt_bench_args(), "bench");
        assert_eq!(&again.entries[0].problem, p);
        // Vector or block scales change the epilogue's inputs: refused with the field's name.
        let vector = parse_str(&SEED.replace("scaleA: 0", "scaleA: 2"), "v");
        let err = vector.errors().next().unwrap();
        assert!(err.message.contains("scaleA mode `2`"), "{err}");
    }

    #[test]
    fn extra_keys_say_what_they_are() {
        let line = SEED
            .replace("bias_vector: false", "bias_vector: true")
            .replace("call_count: 1", "zz: 3, call_count: 1");
        let log = parse_str(&line, "bias");
        let kinds: Vec<_> = log.entries[0]
            .extra
            .keys()
            .map(|k| (k.as_str(), extra_kind(k)))
            .collect();
        assert_eq!(
            kinds,
            [
                ("bias_source", ExtraKind::Detail),
                ("bias_type", ExtraKind::Detail),
                ("bias_vector", ExtraKind::Feature),
                ("zz", ExtraKind::Unknown),
            ]
        );
    }

    #[test]
    fn invalid_problem_is_an_error_with_its_line() {
        let log = parse_str("x\nhipblaslt-bench -m 64 -n 8 -k 32 --lda 10", "f");
        let err = log.errors().next().unwrap();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("lda=10"), "{err}");
        assert!(log.entries.is_empty());
    }
}
