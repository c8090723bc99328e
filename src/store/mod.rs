//! PLACEHOLDER: results database.
