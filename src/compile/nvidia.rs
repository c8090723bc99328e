//! PLACEHOLDER: NVRTC / nvcc drivers.
