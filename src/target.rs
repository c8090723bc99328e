//! What code is compiled for and what a device says it is: the facts both `compile/` (which
//! compiler, which architecture, how many compute units a persistent grid covers) and
//! `device/` (which reports them) need, so neither has to import the other for them.
//!
//! Flow: a device backend fills a [`DeviceInfo`] (also part of every database key) ->
//! [`target_for`] turns it into the [`Target`] that code generation and the compilers take.

use serde::{Deserialize, Serialize};

use crate::hw::Vendor;

/// What a device is; part of every database key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub backend: String,
    pub index: u32,
    /// Name as the driver reports it (`NVIDIA H200`, `AMD Instinct MI300X`, `sim:H200`).
    pub name: String,
    pub vendor: Vendor,
    /// Compile target (`sm_90`, `gfx942`).
    pub arch: String,
    pub driver_version: String,
    pub compiler_version: String,
    pub memory_bytes: u64,
    pub compute_units: u32,
    pub l2_bytes: u64,
}

/// Where compiled code must run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Target {
    pub vendor: Vendor,
    /// `sm_90a`, `gfx942`, ...
    pub arch: String,
    /// Compute units (SMs / CUs) of the device; sizes the grid of persistent (stream-K)
    /// kernels. 0 when not known (source generation without a device): such a plan launches
    /// as if on one compute unit.
    pub compute_units: u32,
}

impl Target {
    /// A target whose compute-unit count is not known.
    pub fn arch(vendor: Vendor, arch: impl Into<String>) -> Self {
        Target {
            vendor,
            arch: arch.into(),
            compute_units: 0,
        }
    }
}

/// The compile target for a device: its arch, with Hopper's `a` suffix so that the
/// architecture-specific instructions are available.
pub fn target_for(info: &DeviceInfo) -> Target {
    let arch = if info.vendor == Vendor::Nvidia && info.arch == "sm_90" {
        "sm_90a".to_string()
    } else {
        info.arch.clone()
    };
    Target {
        vendor: info.vendor,
        arch,
        compute_units: info.compute_units,
    }
}
