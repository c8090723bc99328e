//! The lines of the logs that could not be read, kept with the report.
//!
//! A line meant as a GEMM entry that the parser cannot turn into a problem (a data type such
//! as `i8_r` it does not know, a truncated entry, an invalid size) becomes an error
//! [`LogIssue`] while the rest of the log is tuned. So that the GEMM it held is never left out
//! silently, the errors flow from [`super::tune::run`] into every output: the *Lines not
//! read* section of `summary.md` ([`markdown`]), `unread_lines` in the JSON outcome, the
//! count in the totals the CLI prints ([`count`], [`phrase`], [`lines`]) and
//! `unread_lines.csv` ([`write`]), which `merge` reads back from each shard ([`read`]) and
//! joins without listing a line twice ([`join`]): every shard parses the same logs.

use std::collections::HashSet;
use std::path::Path;

use super::record::{read_table, write_table};
use super::WorkloadError;
use crate::problem::log::{LogIssue, ParsedLog, Severity};

/// Line numbers listed per reason in the summary and on the terminal; the CSV has them all
/// (a bench log repeats the command line of every call, so one GEMM can be thousands).
const SHOWN: usize = 10;

/// The errors of a parsed log: the lines whose GEMMs are not in the report.
pub fn of(parsed: &ParsedLog) -> Vec<LogIssue> {
    parsed.errors().cloned().collect()
}

/// Distinct lines among the issues (a grouped GEMM's line can fail for several members).
pub fn count(unread: &[LogIssue]) -> usize {
    unread
        .iter()
        .map(|i| (i.source.as_str(), i.line))
        .collect::<HashSet<_>>()
        .len()
}

/// `1 log line not read`, `2 log lines not read`.
pub fn phrase(unread: &[LogIssue]) -> String {
    match count(unread) {
        1 => "1 log line not read".into(),
        n => format!("{n} log lines not read"),
    }
}

/// Adds the issues of `more` that `into` does not hold yet, in their order.
pub fn join(into: &mut Vec<LogIssue>, more: Vec<LogIssue>) {
    let key = |i: &LogIssue| (i.source.clone(), i.line, i.message.clone());
    let mut seen: HashSet<_> = into.iter().map(key).collect();
    for i in more {
        if seen.insert(key(&i)) {
            into.push(i);
        }
    }
}

/// One line per reason and file, `file:3: reason` or `file lines 3, 9, 12: reason`, with at
/// most [`SHOWN`] line numbers each.
pub fn lines(unread: &[LogIssue]) -> Vec<String> {
    let mut groups: Vec<(&str, &str, Vec<usize>)> = Vec::new();
    for i in unread {
        match groups
            .iter_mut()
            .find(|(s, m, _)| *s == i.source && *m == i.message)
        {
            Some(g) if g.2.last() == Some(&i.line) => {}
            Some(g) => g.2.push(i.line),
            None => groups.push((&i.source, &i.message, vec![i.line])),
        }
    }
    groups
        .into_iter()
        .map(|(source, message, numbers)| {
            if let [one] = numbers[..] {
                return format!("{source}:{one}: {message}");
            }
            let mut shown: Vec<String> = numbers.iter().take(SHOWN).map(usize::to_string).collect();
            if numbers.len() > SHOWN {
                shown.push(format!("and {} more", numbers.len() - SHOWN));
            }
            format!("{source} lines {}: {message}", shown.join(", "))
        })
        .collect()
}

/// The *Lines not read* section of `summary.md`; empty when every line was read.
pub fn markdown(unread: &[LogIssue], csv: &str) -> String {
    if unread.is_empty() {
        return String::new();
    }
    let n = count(unread);
    let mut out = if n == 1 {
        format!("## Lines not read\n\n1 line of the logs could not be read, so its GEMM is in none of the numbers above (`{csv}` lists it):\n\n")
    } else {
        format!("## Lines not read\n\n{n} lines of the logs could not be read, so their GEMMs are in none of the numbers above (`{csv}` lists each one):\n\n")
    };
    for l in lines(unread) {
        out.push_str(&format!("- {}\n", l.replace('\n', " ")));
    }
    out.push('\n');
    out
}

const COLUMNS: [&str; 3] = ["source", "line", "message"];

/// Writes `unread_lines.csv` (a header alone when every line was read, so that a merge can
/// tell a clean log from a directory written before this file existed).
pub fn write(path: &Path, unread: &[LogIssue]) -> Result<(), WorkloadError> {
    let rows: Vec<Vec<String>> = unread
        .iter()
        .map(|i| vec![i.source.clone(), i.line.to_string(), i.message.clone()])
        .collect();
    write_table(path, &COLUMNS, &rows)
}

/// Reads a file written by [`write`].
pub fn read(path: &Path) -> Result<Vec<LogIssue>, WorkloadError> {
    read_table(path, |row| {
        Ok(LogIssue {
            source: row.text("source")?.to_string(),
            line: row.parse("line")?,
            severity: Severity::Error,
            message: row.text("message")?.to_string(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue(source: &str, line: usize, message: &str) -> LogIssue {
        LogIssue {
            source: source.into(),
            line,
            severity: Severity::Error,
            message: message.into(),
        }
    }

    #[test]
    fn lines_group_by_reason_and_count_each_line_once() {
        let mut unread: Vec<LogIssue> = (1..=12)
            .map(|l| issue("a.log", l, "unknown data type `i8_r`"))
            .collect();
        unread.push(issue("a.log", 20, "missing M"));
        unread.push(issue("a.log", 20, "invalid GEMM: lda=1"));
        assert_eq!(count(&unread), 13);
        assert_eq!(phrase(&unread[..1]), "1 log line not read");
        let l = lines(&unread);
        assert_eq!(l.len(), 3);
        assert_eq!(
            l[0],
            "a.log lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, and 2 more: unknown data type `i8_r`"
        );
        assert_eq!(l[1], "a.log:20: missing M");
        let md = markdown(&unread, "u.csv");
        assert!(md.starts_with("## Lines not read\n\n13 lines"), "{md}");
        assert_eq!(markdown(&[], "u.csv"), "");
    }

    #[test]
    fn shards_joined_list_each_line_once_and_round_trip_through_csv() {
        let dir = tempfile::tempdir().unwrap();
        let first = vec![issue("a, \"b\".log", 3, "bad, \"quoted\"")];
        let mut all = first.clone();
        join(&mut all, vec![first[0].clone(), issue("c.log", 1, "x")]);
        assert_eq!(all.len(), 2);
        let path = dir.path().join("unread.csv");
        write(&path, &all).unwrap();
        assert_eq!(read(&path).unwrap(), all);
        write(&path, &[]).unwrap();
        assert!(read(&path).unwrap().is_empty());
    }
}
