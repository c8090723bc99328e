//! Progress bars for long work (sweeps, tuning rounds, compiles, `tune-log`), drawn with
//! `indicatif` on stderr: a count, the rate and the time left. They are shown only where a
//! person watches: not with `-q` or `--json`, and not when stderr is not a terminal (a log
//! file or a pipe gets the plain progress lines the commands print instead).

use std::io::IsTerminal;
use std::sync::Arc;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::args::GlobalOpts;
use crate::bench::session::CompileStep;
use crate::workload::tune::Step;

/// Where a command's bars go: a set of bars on stderr, or nowhere.
#[derive(Clone)]
pub struct Bars {
    multi: Option<MultiProgress>,
}

impl Bars {
    /// Bars when stderr is a terminal and the options do not ask for silence or JSON.
    pub fn new(g: &GlobalOpts) -> Bars {
        Self::shown_if(!g.quiet && !g.json && std::io::stderr().is_terminal())
    }

    /// Bars drawn on stderr when `shown`, none otherwise.
    pub fn shown_if(shown: bool) -> Bars {
        Bars {
            multi: shown.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr())),
        }
    }

    /// A bar of `len` steps named `what`; a hidden one when bars are off.
    pub fn bar(&self, len: u64, what: &str) -> ProgressBar {
        let Some(multi) = &self.multi else {
            return ProgressBar::hidden();
        };
        let style = ProgressStyle::with_template(
            "{prefix:>12} [{bar:30}] {pos}/{len} {rate:>8} ETA {eta:>4} {msg}",
        )
        .expect("the template is valid")
        .with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1}/s", state.per_sec());
            },
        )
        .progress_chars("=> ");
        multi.add(
            ProgressBar::new(len)
                .with_style(style)
                .with_prefix(what.to_string()),
        )
    }

    /// A compile bar fed by a bench session's compile steps (each batch adds its kernels).
    pub fn compiles(&self) -> Arc<dyn Fn(CompileStep) + Send + Sync> {
        let bar = self.bar(0, "compiling");
        Arc::new(move |step| match step {
            CompileStep::Started(n) => bar.inc_length(n as u64),
            CompileStep::Done => {
                bar.inc(1);
                if bar.position() >= bar.length().unwrap_or(0) {
                    bar.set_message("done");
                }
            }
        })
    }

    /// Bars for a `tune-log` run: the vendor baselines, then the GEMMs tuned.
    pub fn tune_log(&self) -> Arc<dyn Fn(Step) + Send + Sync> {
        let bars = self.clone();
        let current = std::sync::Mutex::new(ProgressBar::hidden());
        Arc::new(move |step| {
            let Ok(mut bar) = current.lock() else { return };
            match step {
                Step::Baselines(n) => *bar = bars.bar(n as u64, "baselines"),
                Step::Tuning(n) => {
                    bar.finish_and_clear();
                    *bar = bars.bar(n as u64, "GEMMs tuned");
                }
                Step::Done => {
                    bar.inc(1);
                    if bar.position() >= bar.length().unwrap_or(0) {
                        bar.finish_and_clear();
                    }
                }
            }
        })
    }

    /// Prints a line above the bars (or plainly on stderr when there are none).
    pub fn println(&self, text: &str) {
        match &self.multi {
            Some(m) => {
                let _ = m.println(text);
            }
            None => eprintln!("{text}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_bars_count_but_draw_nothing() {
        let bars = Bars::shown_if(false);
        assert!(bars.multi.is_none());
        let b = bars.bar(10, "compile");
        b.inc(3);
        assert!(b.is_hidden());
        assert_eq!(b.position(), 3);
    }

    #[test]
    fn quiet_and_json_hide_the_bars() {
        use clap::Parser;
        for flag in ["-q", "--json"] {
            let cli = crate::cli::Cli::try_parse_from(["gemmtune", flag, "specs"]).unwrap();
            assert!(Bars::new(&cli.global).multi.is_none(), "{flag}");
        }
    }
}
