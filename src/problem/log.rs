//! TEMPORARY interface shim until the log parser lands.
use super::GemmProblem;
use std::path::PathBuf;
pub enum Severity {
    Warning,
    Error,
}
pub struct LogIssue {
    pub source: String,
    pub line: usize,
    pub severity: Severity,
    pub message: String,
}
pub struct LogEntry {
    pub problem: GemmProblem,
    pub call_count: u64,
    pub first_line: usize,
    pub source: String,
}
pub struct ParsedLog {
    pub entries: Vec<LogEntry>,
    pub issues: Vec<LogIssue>,
}
pub fn parse_files(_p: &[PathBuf]) -> anyhow::Result<ParsedLog> {
    Ok(ParsedLog {
        entries: vec![],
        issues: vec![],
    })
}
