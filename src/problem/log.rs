//! PLACEHOLDER: hipBLASLt log parsing.
