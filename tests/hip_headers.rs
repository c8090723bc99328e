//! The hand-written HIP FFI (`src/rocm/sys.rs`) against the installed ROCm headers.
//!
//! A small C program, compiled with the host C compiler against the first ROCm include
//! directory found (`$ROCM_PATH/include`, `$HIP_PATH/include`, `/opt/rocm/include`, then
//! `/usr/include`, where Debian's libamdhip64-dev 5.2 puts them), prints `NAME VALUE` for every
//! constant and struct offset the FFI hard-codes that those headers define; the test compares
//! each with the Rust value. Which layouts a release has decides what is printed: ROCm 5
//! headers give the one `hipDeviceProp_t` (the layout `hipGetDeviceProperties` fills), ROCm 6+
//! headers `hipDeviceProp_tR0600` and the kept 5.x layout `hipDeviceProp_tR0000`. Without
//! headers or a C compiler the test prints why it is skipped and passes.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use gemmtune::compile::amd::toolchain;
use gemmtune::rocm::sys;

const PROBE: &str = r#"
#include <stddef.h>
#include <stdio.h>
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>
#include <hip/library_types.h>
#if HIP_VERSION_MAJOR >= 6
// The ROCm 5 layout, kept for binaries built against 5.x.
#include <hip/hip_deprecated.h>
#endif

#define P(name, value) printf("%s %lld\n", name, (long long)(value))

int main(void) {
    P("HIP_VERSION_MAJOR", HIP_VERSION_MAJOR);
    P("HIP_SUCCESS", hipSuccess);
    P("HIP_ERROR_OUT_OF_MEMORY", hipErrorOutOfMemory);
    P("HIP_ERROR_NO_DEVICE", hipErrorNoDevice);
    P("HIP_ERROR_NOT_READY", hipErrorNotReady);
    P("HIP_ERROR_ILLEGAL_ADDRESS", hipErrorIllegalAddress);
    P("HIP_ERROR_LAUNCH_OUT_OF_RESOURCES", hipErrorLaunchOutOfResources);
    P("HIP_ERROR_LAUNCH_TIMEOUT", hipErrorLaunchTimeOut);
    P("HIP_ERROR_ASSERT", hipErrorAssert);
    P("HIP_ERROR_LAUNCH_FAILURE", hipErrorLaunchFailure);
    P("HIP_MEMCPY_HOST_TO_DEVICE", hipMemcpyHostToDevice);
    P("HIP_MEMCPY_DEVICE_TO_HOST", hipMemcpyDeviceToHost);
    P("HIP_MEMCPY_DEVICE_TO_DEVICE", hipMemcpyDeviceToDevice);
    P("HIP_ATTR_CLOCK_RATE_KHZ", hipDeviceAttributeClockRate);
    P("HIP_ATTR_L2_CACHE_SIZE", hipDeviceAttributeL2CacheSize);
    P("HIP_ATTR_MAX_THREADS_PER_BLOCK", hipDeviceAttributeMaxThreadsPerBlock);
    P("HIP_ATTR_MULTIPROCESSOR_COUNT", hipDeviceAttributeMultiprocessorCount);
    P("HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK", hipDeviceAttributeMaxSharedMemoryPerBlock);
    P("HIP_ATTR_WARP_SIZE", hipDeviceAttributeWarpSize);
    P("HIPRTC_SUCCESS", HIPRTC_SUCCESS);
    P("HIP_R_32F", HIP_R_32F);
    P("HIP_R_16F", HIP_R_16F);
#if HIP_VERSION_MAJOR >= 6
    P("HIP_R_16BF", HIP_R_16BF);
    P("GCN_ARCH_NAME_OFFSET_R0600", offsetof(hipDeviceProp_tR0600, gcnArchName));
    P("DEVICE_PROP_BYTES_R0600", sizeof(hipDeviceProp_tR0600));
    P("GCN_ARCH_NAME_OFFSET_R0500", offsetof(hipDeviceProp_tR0000, gcnArchName));
    P("DEVICE_PROP_BYTES_R0500", sizeof(hipDeviceProp_tR0000));
#else
    P("GCN_ARCH_NAME_OFFSET_R0500", offsetof(hipDeviceProp_t, gcnArchName));
    P("DEVICE_PROP_BYTES_R0500", sizeof(hipDeviceProp_t));
#endif
#if HIP_VERSION_MAJOR > 6 || (HIP_VERSION_MAJOR == 6 && HIP_VERSION_MINOR >= 2)
    P("HIP_R_8F_E4M3", HIP_R_8F_E4M3);
    P("HIP_R_8F_E5M2", HIP_R_8F_E5M2);
    P("HIP_R_8F_E4M3_FNUZ", HIP_R_8F_E4M3_FNUZ);
    P("HIP_R_8F_E5M2_FNUZ", HIP_R_8F_E5M2_FNUZ);
#endif
    return 0;
}
"#;

/// What the FFI says for each name the probe can print.
fn ffi_values() -> BTreeMap<&'static str, i64> {
    let size = sys::DEVICE_PROP_BUFFER_BYTES as i64;
    BTreeMap::from([
        ("HIP_SUCCESS", sys::HIP_SUCCESS as i64),
        (
            "HIP_ERROR_OUT_OF_MEMORY",
            sys::HIP_ERROR_OUT_OF_MEMORY as i64,
        ),
        ("HIP_ERROR_NO_DEVICE", sys::HIP_ERROR_NO_DEVICE as i64),
        ("HIP_ERROR_NOT_READY", sys::HIP_ERROR_NOT_READY as i64),
        (
            "HIP_ERROR_ILLEGAL_ADDRESS",
            sys::HIP_ERROR_ILLEGAL_ADDRESS as i64,
        ),
        (
            "HIP_ERROR_LAUNCH_OUT_OF_RESOURCES",
            sys::HIP_ERROR_LAUNCH_OUT_OF_RESOURCES as i64,
        ),
        (
            "HIP_ERROR_LAUNCH_TIMEOUT",
            sys::HIP_ERROR_LAUNCH_TIMEOUT as i64,
        ),
        ("HIP_ERROR_ASSERT", sys::HIP_ERROR_ASSERT as i64),
        (
            "HIP_ERROR_LAUNCH_FAILURE",
            sys::HIP_ERROR_LAUNCH_FAILURE as i64,
        ),
        (
            "HIP_MEMCPY_HOST_TO_DEVICE",
            sys::HIP_MEMCPY_HOST_TO_DEVICE as i64,
        ),
        (
            "HIP_MEMCPY_DEVICE_TO_HOST",
            sys::HIP_MEMCPY_DEVICE_TO_HOST as i64,
        ),
        (
            "HIP_MEMCPY_DEVICE_TO_DEVICE",
            sys::HIP_MEMCPY_DEVICE_TO_DEVICE as i64,
        ),
        (
            "HIP_ATTR_CLOCK_RATE_KHZ",
            sys::HIP_ATTR_CLOCK_RATE_KHZ as i64,
        ),
        ("HIP_ATTR_L2_CACHE_SIZE", sys::HIP_ATTR_L2_CACHE_SIZE as i64),
        (
            "HIP_ATTR_MAX_THREADS_PER_BLOCK",
            sys::HIP_ATTR_MAX_THREADS_PER_BLOCK as i64,
        ),
        (
            "HIP_ATTR_MULTIPROCESSOR_COUNT",
            sys::HIP_ATTR_MULTIPROCESSOR_COUNT as i64,
        ),
        (
            "HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK",
            sys::HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK as i64,
        ),
        ("HIP_ATTR_WARP_SIZE", sys::HIP_ATTR_WARP_SIZE as i64),
        ("HIPRTC_SUCCESS", 0),
        ("HIP_R_32F", sys::HIP_R_32F as i64),
        ("HIP_R_16F", sys::HIP_R_16F as i64),
        ("HIP_R_16BF", sys::HIP_R_16BF as i64),
        ("HIP_R_8F_E4M3", sys::HIP_R_8F_E4M3 as i64),
        ("HIP_R_8F_E5M2", sys::HIP_R_8F_E5M2 as i64),
        ("HIP_R_8F_E4M3_FNUZ", sys::HIP_R_8F_E4M3_FNUZ as i64),
        ("HIP_R_8F_E5M2_FNUZ", sys::HIP_R_8F_E5M2_FNUZ as i64),
        (
            "GCN_ARCH_NAME_OFFSET_R0600",
            sys::GCN_ARCH_NAME_OFFSET_R0600 as i64,
        ),
        (
            "GCN_ARCH_NAME_OFFSET_R0500",
            sys::GCN_ARCH_NAME_OFFSET_R0500 as i64,
        ),
        // The struct sizes only need to fit the buffer the runtime writes into.
        ("DEVICE_PROP_BYTES_R0600", size),
        ("DEVICE_PROP_BYTES_R0500", size),
    ])
}

/// The first include directory that holds `hip/hip_runtime_api.h`.
fn rocm_include() -> Option<PathBuf> {
    let mut roots = toolchain::rocm_roots();
    roots.push(PathBuf::from("/usr"));
    roots
        .into_iter()
        .map(|r| r.join("include"))
        .find(|i| i.join("hip").join("hip_runtime_api.h").is_file())
}

fn skip(why: &str) {
    eprintln!("SKIPPED hip_headers: {why}");
}

#[test]
fn ffi_constants_and_offsets_match_the_installed_headers() {
    let Some(include) = rocm_include() else {
        return skip("no ROCm headers (hip/hip_runtime_api.h) found");
    };
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let dir = tempfile::tempdir().unwrap();
    let (src, exe) = (dir.path().join("probe.c"), dir.path().join("probe"));
    std::fs::write(&src, PROBE).unwrap();
    let built = match Command::new(&cc)
        .arg("-D__HIP_PLATFORM_AMD__")
        .arg("-I")
        .arg(&include)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
    {
        Ok(o) => o,
        Err(e) => return skip(&format!("no C compiler `{cc}`: {e}")),
    };
    assert!(
        built.status.success(),
        "the probe does not compile against {}: {}",
        include.display(),
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let printed: BTreeMap<&str, i64> = text
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k, v.trim().parse().ok()?))
        })
        .collect();
    let major = printed["HIP_VERSION_MAJOR"];
    let ffi = ffi_values();
    let mut wrong = Vec::new();
    for (name, value) in &printed {
        if *name == "HIP_VERSION_MAJOR" {
            continue;
        }
        let want = ffi
            .get(name)
            .unwrap_or_else(|| panic!("the probe printed {name}, which the test does not know"));
        let ok = if name.starts_with("DEVICE_PROP_BYTES") {
            value <= want
        } else {
            value == want
        };
        if !ok {
            wrong.push(format!("{name}: headers {value}, sys.rs {want}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "sys.rs disagrees with HIP {major} headers in {}:\n{}",
        include.display(),
        wrong.join("\n")
    );
    // Every release checks at least the status codes, attributes and the 5.x layout.
    for name in [
        "HIP_ERROR_LAUNCH_FAILURE",
        "HIP_ATTR_WARP_SIZE",
        "GCN_ARCH_NAME_OFFSET_R0500",
    ] {
        assert!(printed.contains_key(name), "{name} missing from {text}");
    }
    eprintln!(
        "checked {} FFI values against HIP {major} headers in {}",
        printed.len() - 1,
        include.display()
    );
}
