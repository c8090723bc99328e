//! gemmtune: tunes parameterised HIP GEMM kernels for the exact shapes a workload runs.
//!
//! Flow: a [`problem::GemmProblem`] (typed or parsed from a hipBLASLt log) defines a
//! [`space::Space`] of valid kernel configs for a GPU ([`hw::HwSpec`]); configs are turned
//! into source and compiled in parallel ([`compile`]), run, verified and timed on a
//! [`device::Device`] ([`bench`]), stored as they happen ([`store`]) and reported ([`report`]).
//! Compiling and running share what lies below both: [`target`] (what a device is and what
//! code is compiled for), [`plant`] (failures planted on purpose), [`measure`] (statistics,
//! verification, the CPU reference) and [`rocm`] (ROCm's libraries, loaded at run time).

pub mod bench;
pub mod cli;
pub mod compile;
pub mod device;
pub mod hw;
pub mod llm;
pub mod measure;
pub mod plant;
pub mod problem;
pub mod report;
pub mod rocm;
pub mod search;
pub mod space;
pub mod store;
pub mod target;
pub mod workload;
