//! Thin owners of CUDA driver objects (device memory, modules, events) over cudarc's `result`
//! layer, and the translation of driver status codes into messages and "sticky" faults.
//!
//! Raw device pointers are used instead of typed slices because every buffer here is an untyped
//! matrix whose element type is only known at run time, and kernels take them by address.

use std::ffi::{c_void, CString};

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys;

/// A driver error as text: `CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access ...`.
pub fn describe(e: &DriverError) -> String {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name}: {text}")
}

/// Errors after which the context is unusable (every later call fails the same way).
pub fn is_sticky(e: &DriverError) -> bool {
    use sys::cudaError_enum as E;
    matches!(
        e.0,
        E::CUDA_ERROR_ILLEGAL_ADDRESS
            | E::CUDA_ERROR_HARDWARE_STACK_ERROR
            | E::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | E::CUDA_ERROR_MISALIGNED_ADDRESS
            | E::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | E::CUDA_ERROR_INVALID_PC
            | E::CUDA_ERROR_LAUNCH_FAILED
            | E::CUDA_ERROR_ASSERT
    )
}

/// Device memory, freed on drop.
#[derive(Debug)]
pub struct DeviceBuffer {
    pub ptr: sys::CUdeviceptr,
    pub bytes: usize,
}

impl DeviceBuffer {
    pub fn new(bytes: usize) -> Result<Self, DriverError> {
        // SAFETY: plain allocation in the current context; at least 1 byte so the pointer is real.
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }?;
        Ok(DeviceBuffer { ptr, bytes })
    }

    pub fn memset_zero(&self, stream: sys::CUstream) -> Result<(), DriverError> {
        // SAFETY: the range is inside this allocation.
        unsafe { result::memset_d8_async(self.ptr, 0, self.bytes, stream) }
    }

    pub fn copy_to_host<T: Copy + Default>(&self, count: usize) -> Result<Vec<T>, DriverError> {
        let mut out = vec![T::default(); count];
        debug_assert!(count * std::mem::size_of::<T>() <= self.bytes);
        // SAFETY: `out` holds `count` elements and the device range is inside the allocation.
        unsafe { result::memcpy_dtoh_sync(&mut out, self.ptr) }?;
        Ok(out)
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by malloc_sync and freed once; a failure here (poisoned context)
        // cannot be acted upon.
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

/// A loaded code object (CUBIN), unloaded on drop.
#[derive(Debug)]
pub struct Module {
    handle: sys::CUmodule,
}

impl Module {
    pub fn load(image: &[u8]) -> Result<Self, DriverError> {
        // cuModuleLoadData reads an ELF image from memory; the buffer only needs to live for
        // the call, but it must be properly aligned, so copy into an 8-byte aligned one.
        let mut aligned = vec![0u64; image.len().div_ceil(8)];
        // SAFETY: `aligned` has at least image.len() bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                image.as_ptr(),
                aligned.as_mut_ptr() as *mut u8,
                image.len(),
            )
        };
        // SAFETY: the image is a complete CUBIN produced by our compilers.
        let handle = unsafe { result::module::load_data(aligned.as_ptr() as *const c_void) }?;
        Ok(Module { handle })
    }

    pub fn function(&self, name: &str) -> Result<sys::CUfunction, DriverError> {
        let c = CString::new(name)
            .map_err(|_| DriverError(sys::cudaError_enum::CUDA_ERROR_INVALID_VALUE))?;
        // SAFETY: the module is loaded and outlives the returned handle's uses (owned by self).
        unsafe { result::module::get_function(self.handle, c) }
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: loaded once, unloaded once.
        let _ = unsafe { result::module::unload(self.handle) };
    }
}

/// A CUDA event for timing, destroyed on drop.
#[derive(Debug)]
pub struct Event {
    pub handle: sys::CUevent,
}

impl Event {
    pub fn new() -> Result<Self, DriverError> {
        let handle = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)?;
        Ok(Event { handle })
    }

    pub fn record(&self, stream: sys::CUstream) -> Result<(), DriverError> {
        // SAFETY: both handles are live.
        unsafe { result::event::record(self.handle, stream) }
    }

    /// Milliseconds from `self` to `end` (both recorded and completed).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32, DriverError> {
        // SAFETY: both events are live.
        unsafe { result::event::elapsed(self.handle, end.handle) }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created once, destroyed once.
        let _ = unsafe { result::event::destroy(self.handle) };
    }
}

/// Launches `f` with arguments given as pointers to their values (the driver copies them).
///
/// # Safety
/// `params` must match the kernel's parameter list exactly, and every device address inside
/// them must stay valid until the launch completes.
pub unsafe fn launch(
    f: sys::CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    stream: sys::CUstream,
    params: &mut [*mut c_void],
) -> Result<(), DriverError> {
    result::launch_kernel(
        f,
        (grid[0], grid[1], grid[2]),
        (block[0], block[1], block[2]),
        shared,
        stream,
        params,
    )
}

/// Launches `f` as a programmatic dependent of the kernel launched before it on `stream`
/// (sm_90 and later): the driver may start it while that kernel's last workgroups still run,
/// so the second launch overlaps the first one's tail instead of following its completion.
///
/// # Safety
/// As for `launch`; in addition, `f` must wait for the kernel before it (`griddepcontrol.wait`)
/// before it reads anything that kernel writes.
pub unsafe fn launch_dependent(
    f: sys::CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    stream: sys::CUstream,
    params: &mut [*mut c_void],
) -> Result<(), DriverError> {
    // SAFETY: plain-data structs; every field the driver reads is set below.
    let mut attr: sys::CUlaunchAttribute = std::mem::zeroed();
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: grid[0],
        gridDimY: grid[1],
        gridDimZ: grid[2],
        blockDimX: block[0],
        blockDimY: block[1],
        blockDimZ: block[2],
        sharedMemBytes: shared,
        hStream: stream,
        attrs: &mut attr,
        numAttrs: 1,
    };
    sys::cuLaunchKernelEx(&config, f, params.as_mut_ptr(), std::ptr::null_mut()).result()
}

/// The most workgroups of `f` that can run at once in whole clusters, where `f` was compiled
/// with cluster dimensions (`__cluster_dims__`) and launched `block` wide with `shared` bytes
/// of dynamic shared memory. A cluster's workgroups must all fit in one GPC, so where a GPC's
/// free compute units do not come in whole clusters (an odd count, a partitioned GPU, clusters
/// of four) fewer fit than the compute units divided by the cluster size: a persistent kernel
/// that launched more workgroups than this would run its last clusters after the others
/// instead of beside them. For a kernel without clusters: as many as its occupancy puts on
/// each of the `units` compute units (`None` where the driver says none fit).
pub fn workgroups_at_once(
    f: sys::CUfunction,
    block: [u32; 3],
    shared: u32,
    units: u32,
) -> Result<Option<u32>, DriverError> {
    // SAFETY: `f` is a live function handle.
    let width = unsafe {
        result::function::get_function_attribute(
            f,
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
        )
    }?;
    if width <= 1 {
        let threads = (block[0] * block[1] * block[2]) as std::ffi::c_int;
        // SAFETY: `f` is a live function handle.
        let per_unit = unsafe {
            result::occupancy::max_active_block_per_multiprocessor(f, threads, shared as usize)
        }?;
        return Ok((per_unit > 0).then(|| per_unit as u32 * units));
    }
    let width = width as u32;
    let config = sys::CUlaunchConfig {
        gridDimX: width,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: block[0],
        blockDimY: block[1],
        blockDimZ: block[2],
        sharedMemBytes: shared,
        hStream: std::ptr::null_mut(),
        attrs: std::ptr::null_mut(),
        numAttrs: 0,
    };
    let mut clusters: std::ffi::c_int = 0;
    // SAFETY: `config` is fully initialised and outlives the call; `clusters` is written.
    unsafe { sys::cuOccupancyMaxActiveClusters(&mut clusters, f, &config) }.result()?;
    Ok(Some(clusters.max(1) as u32 * width))
}

/// Allows `f` to use `bytes` of dynamic shared memory (needed above 48 KiB).
pub fn allow_shared(f: sys::CUfunction, bytes: u32) -> Result<(), DriverError> {
    // SAFETY: `f` is a live function handle.
    unsafe {
        result::function::set_function_attribute(
            f,
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            bytes as i32,
        )
    }
}
