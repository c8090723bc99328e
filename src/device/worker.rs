//! PLACEHOLDER: worker process isolation.
