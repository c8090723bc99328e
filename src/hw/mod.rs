//! Hardware specifications: one TOML file per GPU under `hw_specs/`.
//!
//! The built-in files are embedded at compile time; a user can add their own with
//! `--hw-spec PATH`. Specs flow into the config-space constraints (LDS, threads, registers,
//! matrix-instruction shapes), the sim backend's performance model and the roofline columns
//! of every report. Every file is validated at load so a typo cannot silently skew a model.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use thiserror::Error;

use crate::problem::{DataType, GemmProblem};

#[derive(Debug, Error)]
pub enum HwSpecError {
    #[error("cannot read hw spec {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("hw spec {path} is not valid TOML for a GPU spec: {message}")]
    Parse { path: String, message: String },
    #[error("hw spec {path}: {message}")]
    Invalid { path: String, message: String },
    #[error("no hw spec named `{0}` (see `gemmtune specs`)")]
    Unknown(String),
    #[error("`{arg}` is neither a hw spec file nor a built-in spec (built-in: {known})")]
    NotFound { arg: String, known: String },
}

/// GPU vendor, which decides the kernel dialect (MFMA vs mma.sync) and the vendor library.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Amd,
    Nvidia,
}

/// One GPU's datasheet figures. Field names say their unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HwSpec {
    pub name: String,
    pub vendor: Vendor,
    /// Compile target: `sm_90`, `gfx942`, ...
    pub arch: String,
    /// Substrings of the driver's device name that identify this GPU.
    #[serde(default)]
    pub device_names: Vec<String>,
    pub compute_units: u32,
    pub wave_size: u32,
    pub max_threads_per_workgroup: u32,
    pub max_waves_per_cu: u32,
    pub lds_bytes_per_cu: u64,
    pub lds_bytes_per_workgroup: u64,
    pub registers_per_cu: u64,
    pub max_registers_per_thread: u32,
    pub boost_clock_mhz: u32,
    pub memory_bytes: u64,
    pub memory_bandwidth_gbps: f64,
    pub l2_bytes: u64,
    #[serde(default)]
    pub llc_bytes: Option<u64>,
    /// Dense peak TFLOP/s keyed by input type name (`bf16`, `f16`, `f32`, `xf32`, `f8`, `bf8`).
    pub peak_tflops: BTreeMap<String, f64>,
    /// Matrix-instruction shapes `[M, N, K]` keyed by input type name.
    #[serde(default)]
    pub matrix_instructions: BTreeMap<String, Vec<[u32; 3]>>,
}

/// The built-in spec files, embedded so the binary works from any directory.
const BUILTIN: &[(&str, &str)] = &[
    (
        "h100_sxm.toml",
        include_str!("../../hw_specs/h100_sxm.toml"),
    ),
    ("h200.toml", include_str!("../../hw_specs/h200.toml")),
    ("mi250x.toml", include_str!("../../hw_specs/mi250x.toml")),
    ("mi300x.toml", include_str!("../../hw_specs/mi300x.toml")),
    ("mi325x.toml", include_str!("../../hw_specs/mi325x.toml")),
    ("mi355x.toml", include_str!("../../hw_specs/mi355x.toml")),
];

fn type_key(t: DataType) -> &'static str {
    match t {
        DataType::Bf16 => "bf16",
        DataType::F16 => "f16",
        DataType::F32 => "f32",
        DataType::F8 => "f8",
        DataType::Bf8 => "bf8",
    }
}

impl HwSpec {
    /// Registers each of `threads` threads of one workgroup gets: every thread of a launch
    /// gets the same allocation, in steps of 8. An NVIDIA SM splits its register file between
    /// four sub-partitions, each warp's registers in one of them, so the sub-partition holding
    /// the most warps bounds the share: 544 threads (17 warps, 5 in one sub-partition) get 96
    /// registers, not 65536 / 544 (ptxas: "Insufficient registers (96)" for a kernel of 544
    /// threads that needed 106).
    pub fn register_share(&self, threads: u32) -> u32 {
        let threads = threads.max(1) as u64;
        let share = if self.vendor == Vendor::Nvidia {
            let wave = self.wave_size.max(1) as u64;
            let waves_per_part = threads.div_ceil(wave).div_ceil(4);
            self.registers_per_cu / 4 / (waves_per_part * wave)
        } else {
            self.registers_per_cu / threads
        };
        share.min(u32::MAX as u64) as u32 & !7
    }

    /// Parses and validates one spec; `origin` names the file in error messages.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, HwSpecError> {
        let spec: HwSpec = toml::from_str(text).map_err(|e| HwSpecError::Parse {
            path: origin.to_string(),
            message: e.message().to_string(),
        })?;
        spec.validate(origin)?;
        Ok(spec)
    }

    pub fn load(path: &Path) -> Result<Self, HwSpecError> {
        let text = std::fs::read_to_string(path).map_err(|source| HwSpecError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_toml(&text, &path.display().to_string())
    }

    fn validate(&self, origin: &str) -> Result<(), HwSpecError> {
        let bad = |message: String| HwSpecError::Invalid {
            path: origin.to_string(),
            message,
        };
        if self.name.trim().is_empty() {
            return Err(bad("`name` is empty".into()));
        }
        let expected_wave = match self.vendor {
            Vendor::Nvidia => [32],
            Vendor::Amd => [64],
        };
        // gfx10+ consumer parts run wave32 too, but every Instinct part is wave64.
        if !expected_wave.contains(&self.wave_size) && self.wave_size != 32 {
            return Err(bad(format!(
                "wave_size {} is neither 32 nor 64",
                self.wave_size
            )));
        }
        let arch_ok = match self.vendor {
            Vendor::Nvidia => self.arch.starts_with("sm_"),
            Vendor::Amd => self.arch.starts_with("gfx"),
        };
        if !arch_ok {
            return Err(bad(format!(
                "arch `{}` does not match vendor {:?}",
                self.arch, self.vendor
            )));
        }
        for (field, v) in [
            ("compute_units", self.compute_units as f64),
            (
                "max_threads_per_workgroup",
                self.max_threads_per_workgroup as f64,
            ),
            ("max_waves_per_cu", self.max_waves_per_cu as f64),
            (
                "lds_bytes_per_workgroup",
                self.lds_bytes_per_workgroup as f64,
            ),
            ("registers_per_cu", self.registers_per_cu as f64),
            (
                "max_registers_per_thread",
                self.max_registers_per_thread as f64,
            ),
            ("boost_clock_mhz", self.boost_clock_mhz as f64),
            ("memory_bytes", self.memory_bytes as f64),
            ("memory_bandwidth_gbps", self.memory_bandwidth_gbps),
            ("l2_bytes", self.l2_bytes as f64),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(format!("`{field}` must be positive, got {v}")));
            }
        }
        if self.lds_bytes_per_workgroup > self.lds_bytes_per_cu {
            return Err(bad(
                "lds_bytes_per_workgroup exceeds lds_bytes_per_cu".into()
            ));
        }
        if !self
            .max_threads_per_workgroup
            .is_multiple_of(self.wave_size)
        {
            return Err(bad(
                "max_threads_per_workgroup is not a multiple of wave_size".into(),
            ));
        }
        for (k, v) in &self.peak_tflops {
            if !["bf16", "f16", "f32", "xf32", "f8", "bf8"].contains(&k.as_str()) {
                return Err(bad(format!("unknown type `{k}` in [peak_tflops]")));
            }
            if !(v.is_finite() && *v > 0.0) {
                return Err(bad(format!("peak_tflops.{k} must be positive, got {v}")));
            }
        }
        if !self.peak_tflops.contains_key("f32") {
            return Err(bad("[peak_tflops] needs at least `f32`".into()));
        }
        for (k, shapes) in &self.matrix_instructions {
            if !self.peak_tflops.contains_key(k) {
                return Err(bad(format!(
                    "matrix_instructions.{k} given but no peak_tflops.{k}"
                )));
            }
            for s in shapes {
                if s.iter().any(|&d| d == 0 || !d.is_power_of_two()) {
                    return Err(bad(format!(
                        "matrix_instructions.{k} shape {s:?} must be powers of two"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Every spec shipped with the binary.
    pub fn builtin() -> Vec<(String, HwSpec)> {
        BUILTIN
            .iter()
            .map(|(file, text)| {
                let spec = HwSpec::from_toml(text, file)
                    .unwrap_or_else(|e| panic!("built-in hw spec {file} is invalid: {e}"));
                (file.to_string(), spec)
            })
            .collect()
    }

    /// Finds a built-in spec by its name (case-insensitive) or file stem.
    pub fn by_name(name: &str) -> Result<HwSpec, HwSpecError> {
        let wanted = name.to_ascii_lowercase();
        Self::builtin()
            .into_iter()
            .find(|(file, s)| {
                s.name.to_ascii_lowercase() == wanted || file.trim_end_matches(".toml") == wanted
            })
            .map(|(_, s)| s)
            .ok_or_else(|| HwSpecError::Unknown(name.to_string()))
    }

    /// What `--hw-spec` names: a spec file by path, or else a built-in spec by name or file
    /// stem, in any case (`mi300x`, `MI300X`, `h100_sxm`), so an installed binary can
    /// simulate every built-in GPU without the source tree.
    pub fn resolve(arg: &Path) -> Result<HwSpec, HwSpecError> {
        if arg.is_file() {
            return Self::load(arg);
        }
        let name = arg.to_string_lossy();
        Self::by_name(&name).map_err(|_| HwSpecError::NotFound {
            arg: name.into_owned(),
            known: Self::builtin()
                .into_iter()
                .map(|(_, s)| s.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// Finds the built-in spec that matches a device name reported by a driver, preferring
    /// the longest matching substring (so "H100 SXM" beats "H100").
    pub fn for_device_name(device_name: &str) -> Option<HwSpec> {
        let dn = device_name.to_ascii_lowercase();
        Self::builtin()
            .into_iter()
            .filter_map(|(_, s)| {
                let best = s
                    .device_names
                    .iter()
                    .filter(|pat| dn.contains(&pat.to_ascii_lowercase()))
                    .map(|p| p.len())
                    .max()?;
                Some((best, s))
            })
            .max_by_key(|(len, _)| *len)
            .map(|(_, s)| s)
    }

    /// Dense peak TFLOP/s for the problem's input type on the matrix cores (or vector FP32).
    pub fn peak_tflops_for(&self, t: DataType) -> f64 {
        self.peak_tflops
            .get(type_key(t))
            .or_else(|| self.peak_tflops.get("f32"))
            .copied()
            .unwrap_or(1.0)
    }

    /// Matrix-instruction shapes available for an input type (empty: FMA path only).
    pub fn mi_shapes(&self, t: DataType) -> &[[u32; 3]] {
        self.shapes_of(type_key(t))
    }

    /// The `matrix_instructions` entry under `key`; empty where there is none.
    fn shapes_of(&self, key: &str) -> &[[u32; 3]] {
        self.matrix_instructions
            .get(key)
            .map(|v| v.as_slice())
            .unwrap_or(&[])
    }

    /// The key of a problem's inputs in `peak_tflops` and `matrix_instructions`: its input
    /// type, or `xf32` for f32 inputs whose compute type lets the matrix cores round them to
    /// tf32 (`c_xf32_r`).
    fn problem_key(p: &GemmProblem) -> &'static str {
        if p.reads_f32_as_tf32() {
            "xf32"
        } else {
            type_key(p.a_type)
        }
    }

    /// Matrix-instruction shapes a problem can run on (its compute type included).
    pub fn mi_shapes_for(&self, p: &GemmProblem) -> &[[u32; 3]] {
        self.shapes_of(Self::problem_key(p))
    }

    /// Dense peak TFLOP/s a problem can reach (its compute type included): tf32 for
    /// `c_xf32_r` where the GPU has tf32 instructions, else its input type's.
    pub fn peak_tflops_of(&self, p: &GemmProblem) -> f64 {
        let key = Self::problem_key(p);
        match self.matrix_instructions.get(key) {
            // `validate` holds every instruction key to a peak.
            Some(_) => self.peak_tflops[key],
            None => self.peak_tflops_for(p.a_type),
        }
    }

    /// Lower bound on time (microseconds) for `flops` and `bytes`, from the datasheet roofline.
    pub fn roofline_us(&self, flops: f64, bytes: f64, t: DataType) -> f64 {
        let compute_us = flops / (self.peak_tflops_for(t) * 1e12) * 1e6;
        let memory_us = bytes / (self.memory_bandwidth_gbps * 1e9) * 1e6;
        compute_us.max(memory_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_specs_load_and_cover_required_gpus() {
        let names: Vec<String> = HwSpec::builtin().into_iter().map(|(_, s)| s.name).collect();
        for wanted in ["MI250X", "MI300X", "MI325X", "MI355X", "H100-SXM", "H200"] {
            assert!(names.iter().any(|n| n == wanted), "missing {wanted}");
        }
    }

    #[test]
    fn device_name_matching_prefers_longest() {
        assert_eq!(HwSpec::for_device_name("NVIDIA H200").unwrap().name, "H200");
        assert_eq!(
            HwSpec::for_device_name("NVIDIA H100 80GB HBM3")
                .unwrap()
                .name,
            "H100-SXM"
        );
        assert_eq!(
            HwSpec::for_device_name("AMD Instinct MI300X").unwrap().name,
            "MI300X"
        );
        assert!(HwSpec::for_device_name("GeForce 8800").is_none());
    }

    #[test]
    fn invalid_specs_are_rejected_with_the_reason() {
        let good = BUILTIN[0].1;
        let err = HwSpec::from_toml(
            &good.replace("compute_units = 132", "compute_units = 0"),
            "x",
        )
        .unwrap_err();
        assert!(err.to_string().contains("compute_units"), "{err}");
        let err = HwSpec::from_toml(&good.replace("arch = \"sm_90\"", "arch = \"gfx942\""), "x")
            .unwrap_err();
        assert!(err.to_string().contains("vendor"), "{err}");
        let err = HwSpec::from_toml("name = 3", "bad.toml").unwrap_err();
        assert!(matches!(err, HwSpecError::Parse { .. }));
        let err = HwSpec::from_toml(&format!("bogus = 1\n{good}"), "x").unwrap_err();
        assert!(err.to_string().contains("bogus"), "{err}");
    }

    #[test]
    fn roofline_is_memory_bound_for_the_seed_shape() {
        let h = HwSpec::by_name("H200").unwrap();
        let p = crate::problem::GemmProblem::new(16032, 109, 16384);
        let us = h.roofline_us(p.flops(), p.min_bytes(), p.a_type);
        assert!((us - p.min_bytes() / 4.8e9 * 1e3).abs() < 1.0, "{us}");
    }
}
