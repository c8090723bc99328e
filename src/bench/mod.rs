//! Benchmarking: timing statistics, verification rules, and the bench pipeline.
pub mod reference;
pub mod stats;
pub mod verify;
