pub mod fake_http;
pub mod kernels;
