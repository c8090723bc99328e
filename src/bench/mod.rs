//! Benchmarking: the bench session (validate, compile, verify, time, record), the default
//! config set, bounded sweeps, timing statistics, verification rules, the CPU reference and
//! the results-store interface.

pub mod defaults;
pub mod reference;
pub mod results;
pub mod session;
pub mod stats;
pub mod sweep;
pub mod verify;
