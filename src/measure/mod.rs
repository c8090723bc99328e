//! What a measurement is and how it is judged: [`stats`] (timing samples to medians, spread
//! and the derived rates), [`verify`] (the tolerance of a problem's output and the
//! comparison that yields a [`verify::Verification`]) and [`mod@reference`] (the plain CPU GEMM
//! the GPU reference is checked against).
//!
//! It sits below `device/` (whose backends verify and time kernels with it), `store/`
//! (which keeps the statistics) and `bench/` (which reports them).

pub mod reference;
pub mod stats;
pub mod verify;
