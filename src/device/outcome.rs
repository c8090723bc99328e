//! Per-config results. A failing kernel is data, not an error: each [`Outcome`] is stored in
//! the database and shown in reports; only the harness itself returns `Err`.

use serde::{Deserialize, Serialize};

pub use crate::measure::verify::Verification;

/// What happened to one config (or the vendor baseline) on the device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// Verified and timed; samples in microseconds, in launch order.
    Timed {
        samples_us: Vec<f64>,
        verification: Verification,
    },
    /// Rejected by the space's constraints before compiling.
    Invalid {
        reason: String,
    },
    CompileFailed {
        stderr: String,
    },
    /// The launch or the driver reported an error (illegal address, worker crash, ...).
    LaunchFailed {
        message: String,
    },
    /// No answer within the timeout; the worker was killed.
    Timeout {
        after_s: f64,
    },
    /// Ran, but the output does not match the reference.
    WrongResult {
        verification: Verification,
    },
}

impl Outcome {
    /// A timing that passed an exact check by the analytic model: what scripted evaluators,
    /// strategy benches and tests hand the search when no kernel ran.
    pub fn modelled(samples_us: Vec<f64>) -> Outcome {
        Outcome::Timed {
            samples_us,
            verification: Verification {
                max_abs_err: 0.0,
                max_rel_err: 0.0,
                rel_l2_err: 0.0,
                tolerance: 1e-2,
                passed: true,
                method: "model".into(),
            },
        }
    }

    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Timed { .. } => "ok",
            Outcome::Invalid { .. } => "invalid",
            Outcome::CompileFailed { .. } => "compile_failed",
            Outcome::LaunchFailed { .. } => "launch_failed",
            Outcome::Timeout { .. } => "timeout",
            Outcome::WrongResult { .. } => "wrong_result",
        }
    }

    pub fn samples(&self) -> Option<&[f64]> {
        match self {
            Outcome::Timed { samples_us, .. } => Some(samples_us),
            _ => None,
        }
    }

    pub fn verification(&self) -> Option<&Verification> {
        match self {
            Outcome::Timed { verification, .. } | Outcome::WrongResult { verification } => {
                Some(verification)
            }
            _ => None,
        }
    }

    /// One line for tables: why a config did not produce a time.
    pub fn reason(&self) -> String {
        let first_line = |s: &str| {
            s.lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string()
        };
        match self {
            Outcome::Timed { .. } => String::new(),
            Outcome::Invalid { reason } => reason.clone(),
            Outcome::CompileFailed { stderr } => first_line(stderr),
            Outcome::LaunchFailed { message } => first_line(message),
            Outcome::Timeout { after_s } => format!("no result after {after_s:.1} s"),
            Outcome::WrongResult { verification: v } => format!(
                "max abs err {:.3e}, rel L2 {:.3e} > tol {:.1e}",
                v.max_abs_err, v.rel_l2_err, v.tolerance
            ),
        }
    }
}
