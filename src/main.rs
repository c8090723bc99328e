//! The `gemmtune` binary: parse arguments, run, print the error chain, exit with 0 (ok),
//! 1 (failure) or 2 (usage error).

use clap::Parser;
use std::process::ExitCode;

use gemmtune::cli::{self, Cli, UsageError};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    match cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("gemmtune: error: {err}");
            // A wrapper that prints its source's text already said it: each line once.
            let mut said = err.to_string();
            for cause in err.chain().skip(1) {
                let text = cause.to_string();
                if !said.contains(&text) {
                    eprintln!("  caused by: {text}");
                }
                said = text;
            }
            if err.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
