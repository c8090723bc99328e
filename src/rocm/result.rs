//! Status codes to `Result`: the layer between the raw tables in [`super::sys`] and the safe
//! wrappers of the HIP backend (`device::hip::safe`).
//!
//! Every call into HIP, hiprtc or hipBLASLt goes through one of the `check_*` functions,
//! which attach the name of the call and the library's own message. [`HipError::is_sticky`]
//! says which failures leave the process's device context unusable, so the backend can mark
//! itself poisoned and the worker can hand over to a fresh process.

use std::ffi::{c_char, CStr};

use thiserror::Error;

use super::sys::{self, BlasStatus, HipApi, HipStatus, RtcApi, RtcStatus};

/// Errors of the HIP layer (runtime, hiprtc, hipBLASLt, library loading).
#[derive(Debug, Clone, Error, PartialEq)]
pub enum HipError {
    /// A library or one of its symbols could not be loaded.
    #[error("{0}")]
    Load(String),
    /// The HIP runtime returned an error.
    #[error("{call}: {message} (hipError {code})")]
    Runtime {
        call: &'static str,
        code: HipStatus,
        message: String,
    },
    /// hiprtc returned an error (the compile log is attached when there is one).
    #[error("{call}: {message} (hiprtcResult {code})")]
    Rtc {
        call: &'static str,
        code: RtcStatus,
        message: String,
    },
    /// hipBLASLt returned an error.
    #[error("{call}: {} (hipblasStatus {code})", blas_status_name(*.code))]
    BlasLt {
        call: &'static str,
        code: BlasStatus,
    },
    /// An event did not complete before the deadline (a hung kernel).
    #[error("no completion after {after_s:.1} s")]
    Timeout { after_s: f64 },
    /// A value we were asked to pass does not fit the C API.
    #[error("{0}")]
    Invalid(String),
}

impl HipError {
    /// Whether the failure leaves the device context unusable for later work in this process.
    /// HIP, like CUDA, makes memory faults and kernel aborts sticky; a timed-out kernel is
    /// still running and would corrupt every later measurement.
    pub fn is_sticky(&self) -> bool {
        match self {
            HipError::Runtime { code, .. } => matches!(
                *code,
                sys::HIP_ERROR_ILLEGAL_ADDRESS
                    | sys::HIP_ERROR_LAUNCH_FAILURE
                    | sys::HIP_ERROR_ASSERT
                    | sys::HIP_ERROR_LAUNCH_TIMEOUT
            ),
            HipError::Timeout { .. } => true,
            _ => false,
        }
    }

    /// The runtime status, if this is a runtime error.
    pub fn code(&self) -> Option<HipStatus> {
        match self {
            HipError::Runtime { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// Reads a C string the library owns; `None` for a null pointer.
fn c_str(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the libraries return pointers to static NUL-terminated strings.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Converts a HIP runtime status.
pub fn check(api: &HipApi, call: &'static str, code: HipStatus) -> Result<(), HipError> {
    if code == sys::HIP_SUCCESS {
        return Ok(());
    }
    // SAFETY: hipGetErrorString accepts any value and returns a static string.
    let message =
        c_str(unsafe { (api.get_error_string)(code) }).unwrap_or_else(|| "unknown error".into());
    Err(HipError::Runtime {
        call,
        code,
        message,
    })
}

/// Converts a hiprtc status.
pub fn check_rtc(api: &RtcApi, call: &'static str, code: RtcStatus) -> Result<(), HipError> {
    if code == 0 {
        return Ok(());
    }
    // SAFETY: hiprtcGetErrorString accepts any value and returns a static string.
    let message =
        c_str(unsafe { (api.get_error_string)(code) }).unwrap_or_else(|| "unknown error".into());
    Err(HipError::Rtc {
        call,
        code,
        message,
    })
}

/// Converts a hipBLASLt status.
pub fn check_blas(call: &'static str, code: BlasStatus) -> Result<(), HipError> {
    if code == 0 {
        Ok(())
    } else {
        Err(HipError::BlasLt { call, code })
    }
}

/// `hipblasStatus_t` names (hipblas-common.h); hipBLASLt has no string function.
pub fn blas_status_name(code: BlasStatus) -> &'static str {
    match code {
        0 => "success",
        1 => "not initialized",
        2 => "allocation failed",
        3 => "invalid value",
        4 => "mapping error",
        5 => "execution failed",
        6 => "internal error",
        7 => "not supported",
        8 => "architecture mismatch",
        9 => "handle is null",
        10 => "invalid enum",
        _ => "unknown status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_faults_and_timeouts_are_sticky_but_oom_is_not() {
        let rt = |code| HipError::Runtime {
            call: "x",
            code,
            message: String::new(),
        };
        assert!(rt(sys::HIP_ERROR_ILLEGAL_ADDRESS).is_sticky());
        assert!(rt(sys::HIP_ERROR_LAUNCH_FAILURE).is_sticky());
        assert!(!rt(sys::HIP_ERROR_OUT_OF_MEMORY).is_sticky());
        assert!(!rt(sys::HIP_ERROR_LAUNCH_OUT_OF_RESOURCES).is_sticky());
        assert!(HipError::Timeout { after_s: 1.0 }.is_sticky());
        assert!(!HipError::BlasLt { call: "x", code: 7 }.is_sticky());
    }

    #[test]
    fn blas_errors_name_the_status() {
        let e = check_blas("hipblasLtMatmul", 7).unwrap_err();
        assert_eq!(
            e.to_string(),
            "hipblasLtMatmul: not supported (hipblasStatus 7)"
        );
        assert!(check_blas("x", 0).is_ok());
    }
}
