//! Benchmarking: the bench session (validate, compile, verify, time, record), the default
//! config set, timing statistics, verification rules and the results-store interface.

pub mod defaults;
pub mod results;
pub mod session;
pub mod stats;
pub mod sweep;
pub mod verify;
