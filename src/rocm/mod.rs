//! ROCm's C libraries (the HIP runtime, hiprtc, hipBLASLt), loaded at run time, so the binary
//! starts on machines without ROCm.
//!
//! Layers, bottom up: [`sys`] (raw tables of function pointers resolved with `libloading`),
//! [`result`] (status codes to `Result`), [`rtc`] (hiprtc compiles in-process). Like an
//! external binding crate, this sits below both of its users: `compile::amd` compiles with
//! hiprtc and `device::hip` runs kernels and hipBLASLt; neither imports the other for them.

pub mod result;
pub mod rtc;
pub mod sys;
