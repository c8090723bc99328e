//! The command-line front end: parses arguments, runs a command, prints its results.
//!
//! Errors flow up as `anyhow` chains; [`UsageError`] marks the ones caused by what the user
//! typed, which `main` turns into exit code 2 (everything else that fails is 1).

pub mod args;
mod bench_cmd;
pub mod bench_compat;
mod csv_out;
mod eval_cmd;
mod export_cmd;
mod log_cmd;
mod merge_cmd;
mod output;
mod progress;
mod search_args;
mod source_cmd;
mod specs_cmd;
mod sweep_cmd;
mod tune_cmd;
mod tune_log_cmd;

use anyhow::Result;

pub use args::Cli;
use args::Command;

/// An error in what the user typed (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    let tabled = matches!(
        cli.command,
        Command::Bench(_)
            | Command::Tune(_)
            | Command::Sweep(_)
            | Command::EvalStrategies(_)
            | Command::Log(_)
            | Command::TuneLog(_)
    );
    if cli.global.csv.is_some() && !tabled {
        return Err(UsageError(
            "--csv is for commands that print a table of results (bench, tune, sweep, log, tune-log, eval-strategies)".into(),
        )
        .into());
    }
    match cli.command {
        Command::Bench(ref a) => bench_cmd::run(&cli.global, a),
        Command::Tune(ref a) => tune_cmd::run(&cli.global, a),
        Command::Sweep(ref a) => sweep_cmd::run(&cli.global, a),
        Command::EvalStrategies(ref a) => eval_cmd::run(&cli.global, a),
        Command::Source(ref a) => source_cmd::run(&cli.global, a),
        Command::Specs => specs_cmd::run(&cli.global),
        Command::Log(ref a) => log_cmd::run(&cli.global, a),
        Command::TuneLog(ref a) => tune_log_cmd::run(&cli.global, a),
        Command::Merge(ref a) => merge_cmd::run(&cli.global, a),
        Command::Export(ref a) => export_cmd::run(&cli.global, a),
        Command::Worker => {
            crate::device::worker::serve()?;
            Ok(())
        }
    }
}
