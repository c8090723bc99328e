//! PLACEHOLDER: reports.
