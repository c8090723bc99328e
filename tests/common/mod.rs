pub mod fake_http;
