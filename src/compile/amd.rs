//! PLACEHOLDER: hipcc / hiprtc drivers.
