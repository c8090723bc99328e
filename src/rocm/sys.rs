//! Raw declarations of the ROCm C APIs we call, resolved at run time with `libloading`.
//!
//! Nothing here is linked at build time, so the binary starts on machines without ROCm.
//! Each library is described by one table of function pointers ([`HipApi`], [`RtcApi`],
//! [`BlasLtApi`]) that owns the `Library` it came from: the pointers stay valid for as long
//! as the table lives. Only the entry points gemmtune uses are declared, with the ROCm 6
//! signatures; where ROCm 5 differs, the comment says so. The layer above ([`super::result`])
//! turns the status codes into `Result`s; nothing in this file checks them.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::path::PathBuf;

use libloading::Library;

/// `hipError_t`; 0 is success. Values are the same in ROCm 5 and 6.
pub type HipStatus = c_int;
pub type HipDeviceId = c_int;
pub type HipModule = *mut c_void;
pub type HipFunction = *mut c_void;
pub type HipEvent = *mut c_void;
pub type HipStream = *mut c_void;

pub const HIP_SUCCESS: HipStatus = 0;
pub const HIP_ERROR_OUT_OF_MEMORY: HipStatus = 2;
pub const HIP_ERROR_NO_DEVICE: HipStatus = 100;
pub const HIP_ERROR_NOT_READY: HipStatus = 600;
pub const HIP_ERROR_ILLEGAL_ADDRESS: HipStatus = 700;
pub const HIP_ERROR_LAUNCH_OUT_OF_RESOURCES: HipStatus = 701;
pub const HIP_ERROR_LAUNCH_TIMEOUT: HipStatus = 702;
pub const HIP_ERROR_ASSERT: HipStatus = 710;
pub const HIP_ERROR_LAUNCH_FAILURE: HipStatus = 719;

/// `hipMemcpyKind`.
pub const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
pub const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;
pub const HIP_MEMCPY_DEVICE_TO_DEVICE: c_int = 3;

/// `hipDeviceAttribute_t` values. The CUDA-compatible block (0..) kept its numbering from
/// ROCm 5.x to 6.x for every attribute used here (6.0 renamed a few unused slots only).
pub const HIP_ATTR_CLOCK_RATE_KHZ: c_int = 5;
pub const HIP_ATTR_L2_CACHE_SIZE: c_int = 19;
pub const HIP_ATTR_MAX_THREADS_PER_BLOCK: c_int = 56;
pub const HIP_ATTR_MULTIPROCESSOR_COUNT: c_int = 63;
pub const HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK: c_int = 74;
pub const HIP_ATTR_WARP_SIZE: c_int = 87;

/// Byte offset of `char gcnArchName[256]` in `hipDeviceProp_t`. The struct changed in
/// ROCm 6.0: the runtime exports `hipGetDevicePropertiesR0600` for the new layout (1472
/// bytes) and keeps `hipGetDeviceProperties` for the ROCm 5 layout (792 bytes). ROCm 6 also
/// dropped the `hipDeviceAttributeGcnArchName` attribute, so the properties call is the only
/// portable way to read the target name (`gfx942:sramecc+:xnack-`).
pub const GCN_ARCH_NAME_OFFSET_R0600: usize = 1160;
pub const GCN_ARCH_NAME_OFFSET_R0500: usize = 396;
/// A buffer larger than either layout, so a layout we did not foresee cannot overrun it.
pub const DEVICE_PROP_BUFFER_BYTES: usize = 4096;

/// `hiprtcResult`; 0 is success.
pub type RtcStatus = c_int;
pub type RtcProgram = *mut c_void;

/// `hipblasStatus_t`; 0 is success.
pub type BlasStatus = c_int;
pub type BlasLtHandle = *mut c_void;
pub type BlasLtMatmulDesc = *mut c_void;
pub type BlasLtMatrixLayout = *mut c_void;
pub type BlasLtPreference = *mut c_void;

/// `hipblasOperation_t`.
pub const HIPBLAS_OP_N: i32 = 111;
pub const HIPBLAS_OP_T: i32 = 112;
/// `hipblasComputeType_t::HIPBLAS_COMPUTE_32F` (hipBLASLt 0.8+, ROCm 6.2+).
pub const HIPBLAS_COMPUTE_32F: c_int = 2;
/// `hipblasLtComputeType_t::HIPBLASLT_COMPUTE_F32` (hipBLASLt 0.6/0.7, ROCm 6.0/6.1).
pub const HIPBLASLT_COMPUTE_F32_LEGACY: c_int = 300;
/// hipBLASLt version (`major * 100000 + minor * 100 + patch`) from which the compute type
/// is `hipblasComputeType_t`.
pub const HIPBLASLT_VERSION_COMPUTE_TYPE_SWITCH: c_int = 800;

/// `hipDataType`.
pub const HIP_R_32F: c_int = 0;
pub const HIP_R_16F: c_int = 2;
pub const HIP_R_16BF: c_int = 14;
pub const HIP_R_8F_E4M3: c_int = 28;
pub const HIP_R_8F_E5M2: c_int = 29;
pub const HIP_R_8F_E4M3_FNUZ: c_int = 1000;
pub const HIP_R_8F_E5M2_FNUZ: c_int = 1001;

/// `hipblasLtMatmulDescAttributes_t`.
pub const HIPBLASLT_MATMUL_DESC_TRANSA: c_int = 0;
pub const HIPBLASLT_MATMUL_DESC_TRANSB: c_int = 1;
/// `hipblasLtMatrixLayoutAttribute_t`.
pub const HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT: c_int = 0;
pub const HIPBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: c_int = 1;
/// `hipblasLtMatmulPreferenceAttributes_t`.
pub const HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: c_int = 1;

/// `hipblasLtMatmulAlgo_t`: 16 opaque bytes plus the algorithm's workspace bound.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct BlasLtMatmulAlgo {
    pub data: [u8; 16],
    pub max_workspace_bytes: usize,
}

/// `hipblasLtMatmulHeuristicResult_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct BlasLtHeuristicResult {
    pub algo: BlasLtMatmulAlgo,
    pub workspace_size: usize,
    pub state: BlasStatus,
    pub waves_count: f32,
    pub reserved: [c_int; 4],
}

/// The HIP runtime's versioned names, newest first: a system with only the runtime package
/// (no `-dev` symlink) has just these. ROCm 7 ships `.so.7`, ROCm 6 `.so.6`, Debian's ROCm
/// 5.2 `.so.5`.
pub const AMDHIP64_SONAMES: &[&str] = &["libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"];
/// hiprtc's versioned names (a library of its own from ROCm 6 on).
pub const HIPRTC_SONAMES: &[&str] = &["libhiprtc.so.7", "libhiprtc.so.6"];

/// Finds and opens the first loadable candidate; the error lists everything tried.
pub fn open_first(candidates: &[PathBuf]) -> Result<Library, String> {
    let mut tried = Vec::new();
    for c in candidates {
        // SAFETY: loading a ROCm library runs its initialisers, which only register the
        // runtime; we do not call anything until the symbols are resolved.
        match unsafe { Library::new(c) } {
            Ok(lib) => return Ok(lib),
            Err(e) => tried.push(format!("{}: {e}", c.display())),
        }
    }
    Err(format!("none could be loaded ({})", tried.join("; ")))
}

/// Candidate paths for a ROCm library: `$ROCM_PATH/lib`, `$HIP_PATH/lib`, `/opt/rocm/lib`,
/// then the plain names for the dynamic loader's search path (Debian ships ROCm 5 in
/// `/usr/lib/x86_64-linux-gnu`, where only the versioned names may exist).
pub fn candidates(file: &str, sonames: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for var in ["ROCM_PATH", "HIP_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            out.push(PathBuf::from(root).join("lib").join(file));
        }
    }
    out.push(PathBuf::from("/opt/rocm/lib").join(file));
    out.push(PathBuf::from(file));
    out.extend(sonames.iter().map(PathBuf::from));
    out
}

/// Resolves one symbol as a function pointer of type `T`.
///
/// # Safety
/// `T` must be the C signature of `name` in this library.
unsafe fn sym<T: Copy>(lib: &Library, name: &str) -> Result<T, String> {
    let mut cname = name.as_bytes().to_vec();
    cname.push(0);
    lib.get::<T>(&cname)
        .map(|s| *s)
        .map_err(|e| format!("symbol {name}: {e}"))
}

/// Like [`sym`], for entry points that only some versions export.
unsafe fn sym_opt<T: Copy>(lib: &Library, name: &str) -> Option<T> {
    sym(lib, name).ok()
}

/// The HIP runtime (`libamdhip64`).
pub struct HipApi {
    pub init: unsafe extern "C" fn(c_uint) -> HipStatus,
    pub get_device_count: unsafe extern "C" fn(*mut c_int) -> HipStatus,
    pub set_device: unsafe extern "C" fn(HipDeviceId) -> HipStatus,
    pub device_get_name: unsafe extern "C" fn(*mut c_char, c_int, HipDeviceId) -> HipStatus,
    pub device_get_attribute: unsafe extern "C" fn(*mut c_int, c_int, HipDeviceId) -> HipStatus,
    pub device_total_mem: unsafe extern "C" fn(*mut usize, HipDeviceId) -> HipStatus,
    /// ROCm 6 layout; absent from ROCm 5 runtimes.
    pub get_device_properties_r0600:
        Option<unsafe extern "C" fn(*mut c_void, HipDeviceId) -> HipStatus>,
    /// ROCm 5 layout (ROCm 6 keeps the symbol for binaries built against 5).
    pub get_device_properties: unsafe extern "C" fn(*mut c_void, HipDeviceId) -> HipStatus,
    pub driver_get_version: unsafe extern "C" fn(*mut c_int) -> HipStatus,
    pub runtime_get_version: unsafe extern "C" fn(*mut c_int) -> HipStatus,
    pub malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipStatus,
    pub free: unsafe extern "C" fn(*mut c_void) -> HipStatus,
    pub memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> HipStatus,
    pub memset: unsafe extern "C" fn(*mut c_void, c_int, usize) -> HipStatus,
    pub memset_d16: unsafe extern "C" fn(*mut c_void, u16, usize) -> HipStatus,
    pub memset_d32: unsafe extern "C" fn(*mut c_void, c_int, usize) -> HipStatus,
    pub module_load_data: unsafe extern "C" fn(*mut HipModule, *const c_void) -> HipStatus,
    pub module_unload: unsafe extern "C" fn(HipModule) -> HipStatus,
    pub module_get_function:
        unsafe extern "C" fn(*mut HipFunction, HipModule, *const c_char) -> HipStatus,
    #[allow(clippy::type_complexity)]
    pub module_launch_kernel: unsafe extern "C" fn(
        HipFunction,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        HipStream,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> HipStatus,
    pub event_create: unsafe extern "C" fn(*mut HipEvent) -> HipStatus,
    pub event_destroy: unsafe extern "C" fn(HipEvent) -> HipStatus,
    pub event_record: unsafe extern "C" fn(HipEvent, HipStream) -> HipStatus,
    pub event_query: unsafe extern "C" fn(HipEvent) -> HipStatus,
    pub event_synchronize: unsafe extern "C" fn(HipEvent) -> HipStatus,
    pub event_elapsed_time: unsafe extern "C" fn(*mut f32, HipEvent, HipEvent) -> HipStatus,
    pub stream_synchronize: unsafe extern "C" fn(HipStream) -> HipStatus,
    pub get_error_string: unsafe extern "C" fn(HipStatus) -> *const c_char,
    pub get_last_error: unsafe extern "C" fn() -> HipStatus,
    _lib: Library,
}

impl HipApi {
    pub fn load() -> Result<HipApi, String> {
        let lib = open_first(&candidates("libamdhip64.so", AMDHIP64_SONAMES))
            .map_err(|e| format!("libamdhip64.so: {e}"))?;
        // SAFETY: every signature below is the one in hip_runtime_api.h (ROCm 5.2 and 6.x).
        unsafe {
            Ok(HipApi {
                init: sym(&lib, "hipInit")?,
                get_device_count: sym(&lib, "hipGetDeviceCount")?,
                set_device: sym(&lib, "hipSetDevice")?,
                device_get_name: sym(&lib, "hipDeviceGetName")?,
                device_get_attribute: sym(&lib, "hipDeviceGetAttribute")?,
                device_total_mem: sym(&lib, "hipDeviceTotalMem")?,
                get_device_properties_r0600: sym_opt(&lib, "hipGetDevicePropertiesR0600"),
                get_device_properties: sym(&lib, "hipGetDeviceProperties")?,
                driver_get_version: sym(&lib, "hipDriverGetVersion")?,
                runtime_get_version: sym(&lib, "hipRuntimeGetVersion")?,
                malloc: sym(&lib, "hipMalloc")?,
                free: sym(&lib, "hipFree")?,
                memcpy: sym(&lib, "hipMemcpy")?,
                memset: sym(&lib, "hipMemset")?,
                memset_d16: sym(&lib, "hipMemsetD16")?,
                memset_d32: sym(&lib, "hipMemsetD32")?,
                module_load_data: sym(&lib, "hipModuleLoadData")?,
                module_unload: sym(&lib, "hipModuleUnload")?,
                module_get_function: sym(&lib, "hipModuleGetFunction")?,
                module_launch_kernel: sym(&lib, "hipModuleLaunchKernel")?,
                event_create: sym(&lib, "hipEventCreate")?,
                event_destroy: sym(&lib, "hipEventDestroy")?,
                event_record: sym(&lib, "hipEventRecord")?,
                event_query: sym(&lib, "hipEventQuery")?,
                event_synchronize: sym(&lib, "hipEventSynchronize")?,
                event_elapsed_time: sym(&lib, "hipEventElapsedTime")?,
                stream_synchronize: sym(&lib, "hipStreamSynchronize")?,
                get_error_string: sym(&lib, "hipGetErrorString")?,
                get_last_error: sym(&lib, "hipGetLastError")?,
                _lib: lib,
            })
        }
    }
}

/// hiprtc. ROCm 6 and 7 ship it as `libhiprtc.so`; ROCm 5 exports the same symbols from
/// `libamdhip64.so` itself, which is therefore the fallback.
pub struct RtcApi {
    #[allow(clippy::type_complexity)]
    pub create_program: unsafe extern "C" fn(
        *mut RtcProgram,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> RtcStatus,
    pub compile_program: unsafe extern "C" fn(RtcProgram, c_int, *const *const c_char) -> RtcStatus,
    pub get_program_log_size: unsafe extern "C" fn(RtcProgram, *mut usize) -> RtcStatus,
    pub get_program_log: unsafe extern "C" fn(RtcProgram, *mut c_char) -> RtcStatus,
    pub get_code_size: unsafe extern "C" fn(RtcProgram, *mut usize) -> RtcStatus,
    pub get_code: unsafe extern "C" fn(RtcProgram, *mut c_char) -> RtcStatus,
    pub destroy_program: unsafe extern "C" fn(*mut RtcProgram) -> RtcStatus,
    pub version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> RtcStatus,
    pub get_error_string: unsafe extern "C" fn(RtcStatus) -> *const c_char,
    _lib: Library,
}

impl RtcApi {
    pub fn load() -> Result<RtcApi, String> {
        let mut cands = candidates("libhiprtc.so", HIPRTC_SONAMES);
        cands.extend(candidates("libamdhip64.so", AMDHIP64_SONAMES));
        let mut errors = Vec::new();
        for c in cands {
            let lib = match open_first(std::slice::from_ref(&c)) {
                Ok(lib) => lib,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            // SAFETY: signatures as in hiprtc.h (unchanged from ROCm 5.2 to 6.x).
            let table = unsafe {
                (|| -> Result<RtcApi, String> {
                    Ok(RtcApi {
                        create_program: sym(&lib, "hiprtcCreateProgram")?,
                        compile_program: sym(&lib, "hiprtcCompileProgram")?,
                        get_program_log_size: sym(&lib, "hiprtcGetProgramLogSize")?,
                        get_program_log: sym(&lib, "hiprtcGetProgramLog")?,
                        get_code_size: sym(&lib, "hiprtcGetCodeSize")?,
                        get_code: sym(&lib, "hiprtcGetCode")?,
                        destroy_program: sym(&lib, "hiprtcDestroyProgram")?,
                        version: sym(&lib, "hiprtcVersion")?,
                        get_error_string: sym(&lib, "hiprtcGetErrorString")?,
                        _lib: lib,
                    })
                })()
            };
            match table {
                Ok(t) => return Ok(t),
                Err(e) => errors.push(format!("{}: {e}", c.display())),
            }
        }
        Err(format!("hiprtc: {}", errors.join("; ")))
    }
}

/// hipBLASLt (`libhipblaslt.so`, ROCm 6.0+; not packaged for ROCm 5.2).
pub struct BlasLtApi {
    pub create: unsafe extern "C" fn(*mut BlasLtHandle) -> BlasStatus,
    pub destroy: unsafe extern "C" fn(BlasLtHandle) -> BlasStatus,
    pub get_version: unsafe extern "C" fn(BlasLtHandle, *mut c_int) -> BlasStatus,
    pub matmul_desc_create: unsafe extern "C" fn(*mut BlasLtMatmulDesc, c_int, c_int) -> BlasStatus,
    pub matmul_desc_destroy: unsafe extern "C" fn(BlasLtMatmulDesc) -> BlasStatus,
    pub matmul_desc_set_attribute:
        unsafe extern "C" fn(BlasLtMatmulDesc, c_int, *const c_void, usize) -> BlasStatus,
    pub matrix_layout_create:
        unsafe extern "C" fn(*mut BlasLtMatrixLayout, c_int, u64, u64, i64) -> BlasStatus,
    pub matrix_layout_destroy: unsafe extern "C" fn(BlasLtMatrixLayout) -> BlasStatus,
    pub matrix_layout_set_attribute:
        unsafe extern "C" fn(BlasLtMatrixLayout, c_int, *const c_void, usize) -> BlasStatus,
    pub preference_create: unsafe extern "C" fn(*mut BlasLtPreference) -> BlasStatus,
    pub preference_destroy: unsafe extern "C" fn(BlasLtPreference) -> BlasStatus,
    pub preference_set_attribute:
        unsafe extern "C" fn(BlasLtPreference, c_int, *const c_void, usize) -> BlasStatus,
    #[allow(clippy::type_complexity)]
    pub algo_get_heuristic: unsafe extern "C" fn(
        BlasLtHandle,
        BlasLtMatmulDesc,
        BlasLtMatrixLayout,
        BlasLtMatrixLayout,
        BlasLtMatrixLayout,
        BlasLtMatrixLayout,
        BlasLtPreference,
        c_int,
        *mut BlasLtHeuristicResult,
        *mut c_int,
    ) -> BlasStatus,
    #[allow(clippy::type_complexity)]
    pub matmul: unsafe extern "C" fn(
        BlasLtHandle,
        BlasLtMatmulDesc,
        *const c_void,
        *const c_void,
        BlasLtMatrixLayout,
        *const c_void,
        BlasLtMatrixLayout,
        *const c_void,
        *const c_void,
        BlasLtMatrixLayout,
        *mut c_void,
        BlasLtMatrixLayout,
        *const BlasLtMatmulAlgo,
        *mut c_void,
        usize,
        HipStream,
    ) -> BlasStatus,
    _lib: Library,
}

impl BlasLtApi {
    pub fn load() -> Result<BlasLtApi, String> {
        let lib = open_first(&candidates(
            "libhipblaslt.so",
            &["libhipblaslt.so.0", "libhipblaslt.so.1"],
        ))
        .map_err(|e| format!("libhipblaslt.so: {e}"))?;
        // SAFETY: signatures as in hipblaslt.h (ROCm 6.x).
        unsafe {
            Ok(BlasLtApi {
                create: sym(&lib, "hipblasLtCreate")?,
                destroy: sym(&lib, "hipblasLtDestroy")?,
                get_version: sym(&lib, "hipblasLtGetVersion")?,
                matmul_desc_create: sym(&lib, "hipblasLtMatmulDescCreate")?,
                matmul_desc_destroy: sym(&lib, "hipblasLtMatmulDescDestroy")?,
                matmul_desc_set_attribute: sym(&lib, "hipblasLtMatmulDescSetAttribute")?,
                matrix_layout_create: sym(&lib, "hipblasLtMatrixLayoutCreate")?,
                matrix_layout_destroy: sym(&lib, "hipblasLtMatrixLayoutDestroy")?,
                matrix_layout_set_attribute: sym(&lib, "hipblasLtMatrixLayoutSetAttribute")?,
                preference_create: sym(&lib, "hipblasLtMatmulPreferenceCreate")?,
                preference_destroy: sym(&lib, "hipblasLtMatmulPreferenceDestroy")?,
                preference_set_attribute: sym(&lib, "hipblasLtMatmulPreferenceSetAttribute")?,
                algo_get_heuristic: sym(&lib, "hipblasLtMatmulAlgoGetHeuristic")?,
                matmul: sym(&lib, "hipblasLtMatmul")?,
                _lib: lib,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_structs_have_the_c_sizes() {
        // hipblaslt.h: uint8_t[16] + size_t; then size_t, int, float, int[4].
        assert_eq!(std::mem::size_of::<BlasLtMatmulAlgo>(), 24);
        assert_eq!(
            std::mem::size_of::<BlasLtHeuristicResult>(),
            24 + 8 + 4 + 4 + 16
        );
    }

    #[test]
    fn candidates_try_rocm_path_first_then_sonames() {
        let c = candidates("libx.so", &["libx.so.6"]);
        assert_eq!(c.last().unwrap(), &PathBuf::from("libx.so.6"));
        assert!(c.contains(&PathBuf::from("/opt/rocm/lib/libx.so")));
    }

    #[test]
    fn rocm_7_sonames_are_tried_first() {
        let hip = candidates("libamdhip64.so", AMDHIP64_SONAMES);
        let names: Vec<String> = hip.iter().map(|p| p.display().to_string()).collect();
        let at = |n: &str| names.iter().position(|x| x == n).unwrap_or(usize::MAX);
        assert!(at("libamdhip64.so.7") < at("libamdhip64.so.6"), "{names:?}");
        assert!(at("libamdhip64.so.6") < at("libamdhip64.so.5"), "{names:?}");
        let rtc = candidates("libhiprtc.so", HIPRTC_SONAMES);
        assert!(rtc.contains(&PathBuf::from("libhiprtc.so.7")), "{rtc:?}");
    }

    #[test]
    fn a_missing_library_is_an_error_naming_what_was_tried() {
        let err = match open_first(&[PathBuf::from("/nonexistent/libnothing.so")]) {
            Err(e) => e,
            Ok(_) => panic!("a missing library loaded"),
        };
        assert!(err.contains("/nonexistent/libnothing.so"), "{err}");
    }
}
