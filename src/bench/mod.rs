//! Benchmarking: the bench session (validate, compile, verify, time, record), the default
//! config set, bounded sweeps and the results-store interface. Timing statistics,
//! verification rules and the CPU reference live in [`crate::measure`].

pub mod defaults;
pub mod results;
pub mod row;
pub mod session;
pub mod sweep;

// What a measurement is (timing statistics, verification rules, the CPU reference) lives
// below the devices that produce it; bench keeps the names it had for it.
pub use crate::measure::{reference, stats, verify};
