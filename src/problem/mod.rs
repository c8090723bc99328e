//! GEMM problems: what a user wants computed, independent of how.
//!
//! A [`GemmProblem`] comes from the `bench` command line or from a hipBLASLt log line
//! ([`log`]), is validated here, and then flows into the config space (constraints), the
//! device (buffer sizes), the database (problem key) and the reports (FLOPs, bytes).

mod dtype;
mod gemm;
pub mod log;

pub use dtype::{ComputeType, DataType};
pub use gemm::{GemmProblem, Trans};

use thiserror::Error;

/// Everything that can be wrong with a problem description.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ProblemError {
    #[error("unknown data type `{0}` (expected one of bf16_r, f16_r, f32_r, f8_r, bf8_r)")]
    UnknownDataType(String),
    #[error("unknown compute type `{0}` (expected c_f32_r, c_xf32_r or c_f16_r)")]
    UnknownComputeType(String),
    #[error("unknown transpose flag `{0}` (expected N or T)")]
    UnknownTrans(String),
    #[error("dimension {name} must be positive, got {value}")]
    NonPositiveDim { name: &'static str, value: i64 },
    #[error("leading dimension {name}={value} is smaller than the {rows} rows the matrix needs")]
    LeadingDimTooSmall {
        name: &'static str,
        value: i64,
        rows: i64,
    },
    #[error("batch stride {name}={value} is smaller than one matrix ({needed} elements) with batch_count={batch}")]
    StrideTooSmall {
        name: &'static str,
        value: i64,
        needed: i64,
        batch: i64,
    },
    #[error("{name} must be a finite number, got {value}")]
    NonFinite { name: &'static str, value: f64 },
    #[error("matrix {name} needs more bytes than a 64-bit size can hold")]
    SizeOverflow { name: &'static str },
    #[error("the problem needs {needed_gib:.2} GiB of device memory but the device has {have_gib:.2} GiB")]
    DoesNotFit { needed_gib: f64, have_gib: f64 },
    #[error("{0}")]
    Unsupported(String),
}
