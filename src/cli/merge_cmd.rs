//! `gemmtune merge DIR... --out DIR`: shard outputs into one report (see
//! [`crate::workload::merge`]).

use anyhow::Result;

use super::args::{GlobalOpts, MergeArgs};
use super::output::{note, print};
use super::tune_log_cmd::{cli_error, not_read};
use crate::workload::merge::{merge, MergeOptions};
use crate::workload::table::render_results;

pub fn run(g: &GlobalOpts, a: &MergeArgs) -> Result<()> {
    let outcome = merge(&MergeOptions {
        dirs: a.dirs.clone(),
        out: a.out.clone(),
        min_uplift: a.min_uplift,
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
    })
    .map_err(cli_error)?;
    for w in &outcome.warnings {
        note(g, &format!("gemmtune: warning: {w}"));
    }
    if g.json {
        return print(&format!("{}\n", serde_json::to_string_pretty(&outcome)?));
    }
    let s = &outcome.summary;
    let mut out = render_results(&outcome.records, outcome.min_uplift);
    out.push_str(&format!(
        "\nmerged {} directories: {} GEMMs, {} tuned: {} kept, {} dropped, {} skipped, {} failed; {} measurements copied into {}{}\n",
        a.dirs.len(),
        s.gemms,
        s.tuned,
        s.kept,
        s.dropped,
        s.skipped,
        s.failed,
        outcome.measurements_copied,
        a.out.join(crate::workload::merge::DB_FILE).display(),
        not_read(&outcome.unread_lines)
    ));
    out.push_str(&format!(
        "weighted total uplift: {:.2}% of the workload's GEMM time saved\nreport: {}\n",
        s.weighted_uplift * 100.0,
        a.out.join(crate::workload::outputs::SUMMARY_MD).display()
    ));
    print(&out)
}
