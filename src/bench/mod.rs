//! Benchmarking: timing statistics, verification rules, and the bench pipeline.
pub mod stats;
pub mod verify;
pub mod reference;
