//! hiprtc: compiles HIP C++ source to a code object in-process.
//!
//! Flow: source text + options -> program (RAII, destroyed on drop) -> compile -> log and,
//! on success, the code object bytes that `hipModuleLoadData` accepts. A rejected source is
//! a normal outcome ([`RtcOutput::code`] is `None`, the log says why); only a broken library
//! is an error. The library is loaded once per process and shared between threads: hiprtc
//! programs are independent, so concurrent compiles are allowed.

use std::ffi::{c_char, c_int, CString};
use std::sync::{Arc, OnceLock};

use super::result::{check_rtc, HipError};
use super::sys::{RtcApi, RtcProgram};

/// Loads hiprtc once per process.
pub fn rtc() -> Result<Arc<RtcApi>, HipError> {
    static RTC: OnceLock<Result<Arc<RtcApi>, String>> = OnceLock::new();
    RTC.get_or_init(|| RtcApi::load().map(Arc::new))
        .clone()
        .map_err(HipError::Load)
}

/// `major.minor` of the loaded hiprtc.
pub fn version(api: &RtcApi) -> Result<String, HipError> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: valid out-pointers.
    check_rtc(api, "hiprtcVersion", unsafe {
        (api.version)(&mut major, &mut minor)
    })?;
    Ok(format!("{major}.{minor}"))
}

/// What one compile produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RtcOutput {
    /// The code object, or `None` when the source was rejected.
    pub code: Option<Vec<u8>>,
    /// The compiler's messages (warnings on success, errors on failure).
    pub log: String,
}

/// A hiprtc program; destroyed on drop.
struct Program<'a> {
    api: &'a RtcApi,
    raw: RtcProgram,
}

impl Drop for Program<'_> {
    fn drop(&mut self) {
        // SAFETY: created once, destroyed once.
        unsafe { (self.api.destroy_program)(&mut self.raw) };
    }
}

impl Program<'_> {
    fn log(&self) -> Result<String, HipError> {
        let mut size = 0usize;
        // SAFETY: valid program and out-pointer.
        check_rtc(self.api, "hiprtcGetProgramLogSize", unsafe {
            (self.api.get_program_log_size)(self.raw, &mut size)
        })?;
        if size == 0 {
            return Ok(String::new());
        }
        let mut buf = vec![0u8; size];
        // SAFETY: the buffer has the size hiprtc asked for.
        check_rtc(self.api, "hiprtcGetProgramLog", unsafe {
            (self.api.get_program_log)(self.raw, buf.as_mut_ptr().cast::<c_char>())
        })?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        Ok(String::from_utf8_lossy(&buf[..end]).trim_end().to_string())
    }

    fn code(&self) -> Result<Vec<u8>, HipError> {
        let mut size = 0usize;
        // SAFETY: valid program and out-pointer.
        check_rtc(self.api, "hiprtcGetCodeSize", unsafe {
            (self.api.get_code_size)(self.raw, &mut size)
        })?;
        let mut buf = vec![0u8; size];
        // SAFETY: the buffer has the size hiprtc reported.
        check_rtc(self.api, "hiprtcGetCode", unsafe {
            (self.api.get_code)(self.raw, buf.as_mut_ptr().cast::<c_char>())
        })?;
        Ok(buf)
    }
}

/// Compiles `source` (named `name` in messages) with `options`, e.g.
/// `["--offload-arch=gfx942", "-O3"]`.
pub fn compile(
    api: &RtcApi,
    source: &str,
    name: &str,
    options: &[String],
) -> Result<RtcOutput, HipError> {
    let nul = |what: &str| HipError::Invalid(format!("{what} contains a NUL byte"));
    let csrc = CString::new(source).map_err(|_| nul("kernel source"))?;
    let cname = CString::new(name).map_err(|_| nul("program name"))?;
    let copts = options
        .iter()
        .map(|o| CString::new(o.as_str()).map_err(|_| nul("compile option")))
        .collect::<Result<Vec<_>, _>>()?;
    let opt_ptrs: Vec<*const c_char> = copts.iter().map(|o| o.as_ptr()).collect();

    let mut raw: RtcProgram = std::ptr::null_mut();
    // SAFETY: NUL-terminated strings that outlive the call; no extra headers.
    check_rtc(api, "hiprtcCreateProgram", unsafe {
        (api.create_program)(
            &mut raw,
            csrc.as_ptr(),
            cname.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    })?;
    let program = Program { api, raw };
    // SAFETY: the option pointers live until the call returns.
    let status =
        unsafe { (api.compile_program)(program.raw, opt_ptrs.len() as c_int, opt_ptrs.as_ptr()) };
    let log = program.log()?;
    if status != 0 {
        // A compile error is the source's fault: report it with the log, not as an error.
        let head = check_rtc(api, "hiprtcCompileProgram", status)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        return Ok(RtcOutput {
            code: None,
            log: if log.is_empty() { head } else { log },
        });
    }
    Ok(RtcOutput {
        code: Some(program.code()?),
        log,
    })
}
