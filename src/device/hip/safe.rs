//! Safe RAII wrappers over the HIP runtime: the loaded runtime, one selected GPU, device
//! buffers, loaded code objects with their kernels, and events.
//!
//! Ownership mirrors the runtime's rules: every wrapper holds an `Arc` of the runtime table,
//! so the library cannot be unloaded while a buffer, module or event still exists; `Drop`
//! releases the object and ignores the status, because nothing useful can be done about a
//! failed free (and after a memory fault every call fails anyway). All work goes to the null
//! stream of the current device, which serialises it, so no call here needs its own stream.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::rocm::result::{check, HipError};
use crate::rocm::sys::{self, HipApi, HipEvent, HipFunction, HipModule};

/// Loads `libamdhip64` once per process; later calls share the table (or the load error).
pub fn runtime() -> Result<Arc<HipApi>, HipError> {
    static RUNTIME: OnceLock<Result<Arc<HipApi>, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| HipApi::load().map(Arc::new))
        .clone()
        .map_err(HipError::Load)
}

/// Initialises the runtime and counts the GPUs it sees.
pub fn device_count(api: &HipApi) -> Result<u32, HipError> {
    // SAFETY: plain C calls with valid out-pointers.
    check(api, "hipInit", unsafe { (api.init)(0) })?;
    let mut n: c_int = 0;
    check(api, "hipGetDeviceCount", unsafe {
        (api.get_device_count)(&mut n)
    })?;
    Ok(n.max(0) as u32)
}

/// One GPU, made current for this thread when opened.
pub struct Gpu {
    api: Arc<HipApi>,
    index: c_int,
}

impl Gpu {
    /// Selects device `index` (the caller has checked it against [`device_count`]).
    pub fn open(api: Arc<HipApi>, index: u32) -> Result<Gpu, HipError> {
        let index = c_int::try_from(index)
            .map_err(|_| HipError::Invalid(format!("device index {index} is too large")))?;
        // SAFETY: hipSetDevice takes a plain index.
        check(&api, "hipSetDevice", unsafe { (api.set_device)(index) })?;
        Ok(Gpu { api, index })
    }

    pub fn api(&self) -> &Arc<HipApi> {
        &self.api
    }

    /// The marketing name (`AMD Instinct MI300X`). Some ROCm releases report an empty
    /// string for unreleased parts; the caller falls back to the arch.
    pub fn name(&self) -> Result<String, HipError> {
        let mut buf = [0 as c_char; 256];
        // SAFETY: the buffer length is passed along.
        check(&self.api, "hipDeviceGetName", unsafe {
            (self.api.device_get_name)(buf.as_mut_ptr(), buf.len() as c_int, self.index)
        })?;
        // SAFETY: the runtime NUL-terminates within the given length; the last byte is 0.
        buf[255] = 0;
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .trim()
            .to_string())
    }

    /// One `hipDeviceAttribute_t` value.
    pub fn attribute(&self, attr: c_int) -> Result<i64, HipError> {
        let mut v: c_int = 0;
        // SAFETY: valid out-pointer; an unknown attribute is reported as an error.
        check(&self.api, "hipDeviceGetAttribute", unsafe {
            (self.api.device_get_attribute)(&mut v, attr, self.index)
        })?;
        Ok(v as i64)
    }

    pub fn total_memory(&self) -> Result<u64, HipError> {
        let mut v: usize = 0;
        // SAFETY: valid out-pointer.
        check(&self.api, "hipDeviceTotalMem", unsafe {
            (self.api.device_total_mem)(&mut v, self.index)
        })?;
        Ok(v as u64)
    }

    /// The compile target without feature suffixes: `gfx942` from `gfx942:sramecc+:xnack-`.
    pub fn arch(&self) -> Result<String, HipError> {
        // u64 elements give the buffer the struct's 8-byte alignment.
        let mut props = vec![0u64; sys::DEVICE_PROP_BUFFER_BYTES / 8];
        let (status, offset, call) = match self.api.get_device_properties_r0600 {
            // SAFETY: the buffer is larger than hipDeviceProp_tR0600 (1472 bytes).
            Some(f) => (
                unsafe { f(props.as_mut_ptr().cast(), self.index) },
                sys::GCN_ARCH_NAME_OFFSET_R0600,
                "hipGetDevicePropertiesR0600",
            ),
            // SAFETY: the buffer is larger than the ROCm 5 hipDeviceProp_t (792 bytes).
            None => (
                unsafe { (self.api.get_device_properties)(props.as_mut_ptr().cast(), self.index) },
                sys::GCN_ARCH_NAME_OFFSET_R0500,
                "hipGetDeviceProperties",
            ),
        };
        check(&self.api, call, status)?;
        // SAFETY: reinterpreting the u64 buffer as bytes, within its length.
        let bytes: &[u8] = unsafe {
            std::slice::from_raw_parts(props.as_ptr().cast::<u8>(), sys::DEVICE_PROP_BUFFER_BYTES)
        };
        parse_arch_name(&bytes[offset..offset + 256]).ok_or_else(|| {
            HipError::Invalid(format!(
                "{call} returned no gfx arch name (unknown hipDeviceProp_t layout?)"
            ))
        })
    }

    /// `hipDriverGetVersion` and `hipRuntimeGetVersion` as `major.minor.patch` strings.
    pub fn versions(&self) -> Result<(String, String), HipError> {
        let (mut d, mut r): (c_int, c_int) = (0, 0);
        // SAFETY: valid out-pointers.
        check(&self.api, "hipDriverGetVersion", unsafe {
            (self.api.driver_get_version)(&mut d)
        })?;
        check(&self.api, "hipRuntimeGetVersion", unsafe {
            (self.api.runtime_get_version)(&mut r)
        })?;
        Ok((format_hip_version(d), format_hip_version(r)))
    }

    pub fn alloc(&self, bytes: u64) -> Result<DeviceBuffer, HipError> {
        DeviceBuffer::new(self.api.clone(), bytes)
    }

    pub fn load_module(&self, code: &[u8]) -> Result<Module, HipError> {
        Module::load(self.api.clone(), code)
    }

    pub fn event(&self) -> Result<Event, HipError> {
        Event::new(self.api.clone())
    }

    /// Waits for all work on the null stream.
    pub fn synchronize(&self) -> Result<(), HipError> {
        // SAFETY: the null stream always exists.
        check(&self.api, "hipStreamSynchronize", unsafe {
            (self.api.stream_synchronize)(std::ptr::null_mut())
        })
    }

    /// Returns and clears the runtime's last error.
    pub fn take_last_error(&self) -> Result<(), HipError> {
        // SAFETY: no arguments.
        check(&self.api, "hipGetLastError", unsafe {
            (self.api.get_last_error)()
        })
    }
}

/// `gfx942` from the 256-byte `gcnArchName` field; `None` if it does not hold a gfx name.
pub fn parse_arch_name(field: &[u8]) -> Option<String> {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    let full = std::str::from_utf8(&field[..end]).ok()?;
    let base = full.split(':').next()?.trim();
    (base.starts_with("gfx")
        && base.len() > 3
        && base[3..].chars().all(|c| c.is_ascii_alphanumeric()))
    .then(|| base.to_string())
}

/// HIP encodes versions as `major * 10_000_000 + minor * 100_000 + patch`.
pub fn format_hip_version(v: c_int) -> String {
    let v = v.max(0);
    format!("{}.{}.{}", v / 10_000_000, (v / 100_000) % 100, v % 100_000)
}

/// Device memory; freed on drop.
pub struct DeviceBuffer {
    api: Arc<HipApi>,
    ptr: *mut c_void,
    bytes: u64,
}

impl DeviceBuffer {
    fn new(api: Arc<HipApi>, bytes: u64) -> Result<DeviceBuffer, HipError> {
        let size = usize::try_from(bytes.max(1))
            .map_err(|_| HipError::Invalid(format!("{bytes} bytes do not fit a size_t")))?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the size is non-zero.
        check(&api, "hipMalloc", unsafe { (api.malloc)(&mut ptr, size) })?;
        Ok(DeviceBuffer { api, ptr, bytes })
    }

    /// The device address, as the kernel argument block carries it.
    pub fn addr(&self) -> u64 {
        self.ptr as u64
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn as_ptr(&self) -> *mut c_void {
        self.ptr
    }

    fn check_len(&self, len: usize, what: &str) -> Result<(), HipError> {
        if len as u64 > self.bytes {
            return Err(HipError::Invalid(format!(
                "{what} of {len} bytes exceeds the {}-byte buffer",
                self.bytes
            )));
        }
        Ok(())
    }

    pub fn copy_from_host(&self, data: &[u8]) -> Result<(), HipError> {
        self.check_len(data.len(), "host-to-device copy")?;
        // SAFETY: both ranges are valid for `data.len()` bytes.
        check(&self.api, "hipMemcpy(HtoD)", unsafe {
            (self.api.memcpy)(
                self.ptr,
                data.as_ptr().cast(),
                data.len(),
                sys::HIP_MEMCPY_HOST_TO_DEVICE,
            )
        })
    }

    pub fn copy_to_host(&self, out: &mut [u8]) -> Result<(), HipError> {
        self.check_len(out.len(), "device-to-host copy")?;
        // SAFETY: both ranges are valid for `out.len()` bytes.
        check(&self.api, "hipMemcpy(DtoH)", unsafe {
            (self.api.memcpy)(
                out.as_mut_ptr().cast(),
                self.ptr,
                out.len(),
                sys::HIP_MEMCPY_DEVICE_TO_HOST,
            )
        })
    }

    /// Copies the first `bytes` of `src` into this buffer.
    pub fn copy_from_device(&self, src: &DeviceBuffer, bytes: u64) -> Result<(), HipError> {
        self.check_len(bytes as usize, "device-to-device copy")?;
        src.check_len(bytes as usize, "device-to-device copy")?;
        // SAFETY: both buffers hold at least `bytes`.
        check(&self.api, "hipMemcpy(DtoD)", unsafe {
            (self.api.memcpy)(
                self.ptr,
                src.ptr,
                bytes as usize,
                sys::HIP_MEMCPY_DEVICE_TO_DEVICE,
            )
        })
    }

    /// Sets every byte.
    pub fn fill_bytes(&self, value: u8) -> Result<(), HipError> {
        // SAFETY: the whole allocation.
        check(&self.api, "hipMemset", unsafe {
            (self.api.memset)(self.ptr, value as c_int, self.bytes as usize)
        })
    }

    /// Sets every 16-bit word (a NaN pattern for bf16/f16 outputs).
    pub fn fill_u16(&self, value: u16) -> Result<(), HipError> {
        // SAFETY: count is in 16-bit elements, within the allocation.
        check(&self.api, "hipMemsetD16", unsafe {
            (self.api.memset_d16)(self.ptr, value, (self.bytes / 2) as usize)
        })
    }

    /// Sets every 32-bit word (a NaN pattern for f32 outputs).
    pub fn fill_u32(&self, value: u32) -> Result<(), HipError> {
        // SAFETY: count is in 32-bit elements, within the allocation.
        check(&self.api, "hipMemsetD32", unsafe {
            (self.api.memset_d32)(self.ptr, value as c_int, (self.bytes / 4) as usize)
        })
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by hipMalloc and freed once.
        unsafe { (self.api.free)(self.ptr) };
    }
}

/// A loaded code object (hsaco or clang offload bundle); unloaded on drop.
pub struct Module {
    api: Arc<HipApi>,
    raw: HipModule,
}

impl Module {
    fn load(api: Arc<HipApi>, code: &[u8]) -> Result<Module, HipError> {
        if code.is_empty() {
            return Err(HipError::Invalid("empty code object".into()));
        }
        let mut raw = std::ptr::null_mut();
        // SAFETY: the runtime parses the ELF / bundle image and copies what it needs.
        check(&api, "hipModuleLoadData", unsafe {
            (api.module_load_data)(&mut raw, code.as_ptr().cast())
        })?;
        Ok(Module { api, raw })
    }

    /// The `extern "C"` kernel `name`.
    pub fn function(&self, name: &str) -> Result<Function<'_>, HipError> {
        let cname = CString::new(name)
            .map_err(|_| HipError::Invalid(format!("kernel name {name:?} contains NUL")))?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid module and NUL-terminated name.
        check(&self.api, "hipModuleGetFunction", unsafe {
            (self.api.module_get_function)(&mut raw, self.raw, cname.as_ptr())
        })?;
        Ok(Function {
            api: &self.api,
            raw,
            _module: PhantomData,
        })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: loaded once, unloaded once.
        unsafe { (self.api.module_unload)(self.raw) };
    }
}

/// A kernel of a loaded [`Module`]; cannot outlive it.
pub struct Function<'m> {
    api: &'m Arc<HipApi>,
    raw: HipFunction,
    _module: PhantomData<&'m Module>,
}

impl Function<'_> {
    /// Launches on the null stream with one by-value argument `T` (a `#[repr(C)]` block
    /// laid out like the kernel's parameter struct).
    pub fn launch<T: Copy>(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u32,
        arg: &T,
    ) -> Result<(), HipError> {
        let mut params: [*mut c_void; 1] = [(arg as *const T).cast_mut().cast()];
        // SAFETY: `params` holds one pointer to a live value of the kernel's argument type;
        // the runtime copies the argument before returning.
        check(self.api, "hipModuleLaunchKernel", unsafe {
            (self.api.module_launch_kernel)(
                self.raw,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                shared_bytes,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }
}

/// A timing event on the null stream; destroyed on drop.
pub struct Event {
    api: Arc<HipApi>,
    raw: HipEvent,
}

impl Event {
    fn new(api: Arc<HipApi>) -> Result<Event, HipError> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(&api, "hipEventCreate", unsafe {
            (api.event_create)(&mut raw)
        })?;
        Ok(Event { api, raw })
    }

    pub fn record(&self) -> Result<(), HipError> {
        // SAFETY: valid event, null stream.
        check(&self.api, "hipEventRecord", unsafe {
            (self.api.event_record)(self.raw, std::ptr::null_mut())
        })
    }

    /// Waits for the event by polling, so a hung kernel becomes [`HipError::Timeout`]
    /// instead of blocking the process forever.
    pub fn wait(&self, timeout: Duration) -> Result<(), HipError> {
        let start = Instant::now();
        let mut nap = Duration::from_micros(20);
        loop {
            // SAFETY: valid event.
            let status = unsafe { (self.api.event_query)(self.raw) };
            if status != sys::HIP_ERROR_NOT_READY {
                return check(&self.api, "hipEventQuery", status);
            }
            if start.elapsed() >= timeout {
                return Err(HipError::Timeout {
                    after_s: start.elapsed().as_secs_f64(),
                });
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(2));
        }
    }

    /// Milliseconds between two completed events.
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32, HipError> {
        let mut ms = 0f32;
        // SAFETY: both events were recorded and have completed.
        check(&start.api, "hipEventElapsedTime", unsafe {
            (start.api.event_elapsed_time)(&mut ms, start.raw, end.raw)
        })?;
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created once, destroyed once.
        unsafe { (self.api.event_destroy)(self.raw) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names_lose_their_feature_suffixes() {
        let mut field = [0u8; 256];
        let name = b"gfx942:sramecc+:xnack-";
        field[..name.len()].copy_from_slice(name);
        assert_eq!(parse_arch_name(&field).as_deref(), Some("gfx942"));
        assert_eq!(parse_arch_name(b"gfx90a\0junk").as_deref(), Some("gfx90a"));
        assert_eq!(parse_arch_name(&[0u8; 256]), None);
        assert_eq!(parse_arch_name(b"AMD Instinct\0"), None);
        assert_eq!(parse_arch_name(b"gfx\0"), None);
    }

    #[test]
    fn hip_versions_decode() {
        assert_eq!(format_hip_version(60_342_134), "6.3.42134");
        assert_eq!(format_hip_version(50_221_153), "5.2.21153");
    }
}
