//! AMD compiler drivers: `hipcc` (a child process) and hiprtc (in-process, loaded at run
//! time), both turning generated HIP source into a code object for one `gfx` target.
//!
//! Flow: [`KernelSource`] -> hipcc `--genco` (a clang offload bundle) or hiprtc (a bare
//! ELF) -> [`CodeObject`] (`Hsaco`, loadable by `hipModuleLoadData`) plus [`Resources`] read
//! from the code object's metadata ([`code_object`]), or for hipcc from its
//! `-Rpass-analysis=kernel-resource-usage` remarks when the metadata cannot be read.
//! A rejected source is `CompileError::Failed` with the compiler's log; a missing compiler is
//! `CompileError::Unavailable`.

pub mod code_object;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::codegen::KernelSource;
use super::{CodeFormat, CodeObject, CompileError, Compiler, Resources, Target};
use crate::hw::Vendor;
use crate::rocm::rtc;
use code_object::KernelUsage;

/// Registers per lane counted against the 512-entry unified file of gfx90a/gfx94x/gfx950:
/// arch VGPRs are allocated first, AGPRs start at the next multiple of 4.
pub fn unified_registers(u: &KernelUsage) -> u32 {
    if u.agprs == 0 {
        u.vgprs
    } else {
        u.vgprs.div_ceil(4) * 4 + u.agprs
    }
}

fn resources_of(u: &KernelUsage) -> Resources {
    Resources {
        registers: Some(unified_registers(u)),
        // Scratch per lane covers spills and stack arrays; either costs as much as a spill.
        spill_bytes: Some(u.scratch_bytes.max((u.vgpr_spills + u.sgpr_spills) * 4)),
        static_shared_bytes: Some(u.lds_bytes),
    }
}

/// The entry for `symbol`, or the one with the most registers when the name is absent.
fn main_kernel<'a>(usage: &'a [KernelUsage], symbol: &str) -> Option<&'a KernelUsage> {
    usage
        .iter()
        .find(|u| u.name == symbol)
        .or_else(|| usage.iter().max_by_key(|u| unified_registers(u)))
}

fn check_target(target: &Target) -> Result<(), CompileError> {
    if target.vendor != Vendor::Amd || !target.arch.starts_with("gfx") {
        return Err(CompileError::Unavailable(format!(
            "the AMD compilers only target gfx archs, not {}",
            target.arch
        )));
    }
    Ok(())
}

/// Parses clang's `-Rpass-analysis=kernel-resource-usage` remarks (one block per kernel,
/// starting at `Function Name: <name>`).
pub fn parse_resource_remarks(stderr: &str) -> Vec<KernelUsage> {
    let mut out: Vec<KernelUsage> = Vec::new();
    for line in stderr.lines() {
        let Some((_, rest)) = line.split_once("remark:") else {
            continue;
        };
        let rest = rest.split(" [-Rpass").next().unwrap_or(rest).trim();
        let Some((key, value)) = rest.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if key.trim() == "Function Name" {
            out.push(KernelUsage {
                name: value.to_string(),
                ..KernelUsage::default()
            });
            continue;
        }
        let (Some(cur), Ok(n)) = (out.last_mut(), value.parse::<u32>()) else {
            continue;
        };
        match key.trim() {
            "VGPRs" => cur.vgprs = n,
            "AGPRs" => cur.agprs = n,
            "SGPRs" => cur.sgprs = n,
            "VGPRs Spill" => cur.vgpr_spills = n,
            "SGPRs Spill" => cur.sgpr_spills = n,
            "ScratchSize [bytes/lane]" => cur.scratch_bytes = n,
            "LDS Size [bytes/block]" => cur.lds_bytes = n,
            _ => {}
        }
    }
    out
}

/// Drives the `hipcc` binary.
#[derive(Debug, Clone)]
pub struct HipccCompiler {
    hipcc: PathBuf,
    version: String,
    extra_flags: Vec<String>,
}

/// Unique scratch names for concurrent compiles in one process.
static SCRATCH_SEQ: AtomicU64 = AtomicU64::new(0);

impl HipccCompiler {
    /// Finds hipcc in `$ROCM_PATH/bin`, `$HIP_PATH/bin`, `/opt/rocm/bin`, then `PATH`, and
    /// reads its version.
    pub fn find() -> Result<HipccCompiler, CompileError> {
        let path = find_hipcc().ok_or_else(|| {
            CompileError::Unavailable(
                "hipcc not found (set ROCM_PATH or HIP_PATH, or put hipcc on PATH)".into(),
            )
        })?;
        Self::with_path(path)
    }

    /// Uses a given hipcc binary.
    pub fn with_path(hipcc: PathBuf) -> Result<HipccCompiler, CompileError> {
        let out = Command::new(&hipcc)
            .env("HIP_PLATFORM", "amd")
            .arg("--version")
            .output()
            .map_err(|e| CompileError::Unavailable(format!("{}: {e}", hipcc.display())))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = parse_hipcc_version(&text).ok_or_else(|| {
            CompileError::Unavailable(format!(
                "{} --version printed no HIP/clang version",
                hipcc.display()
            ))
        })?;
        Ok(HipccCompiler {
            hipcc,
            version,
            extra_flags: Vec::new(),
        })
    }

    /// Extra flags appended to every compile (part of [`Compiler::id`]).
    pub fn with_flags(mut self, flags: Vec<String>) -> Self {
        self.extra_flags = flags;
        self
    }

    pub fn path(&self) -> &Path {
        &self.hipcc
    }

    /// Compiles to a code object file in a private scratch directory.
    fn run(&self, source: &KernelSource, arch: &str) -> Result<(Vec<u8>, String), CompileError> {
        let dir = std::env::temp_dir().join(format!(
            "gemmtune-hipcc-{}-{}",
            std::process::id(),
            SCRATCH_SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| {
            CompileError::Unavailable(format!("scratch dir {}: {e}", dir.display()))
        })?;
        let result = (|| {
            let src = dir.join("kernel.hip");
            let obj = dir.join("kernel.hsaco");
            std::fs::write(&src, &source.text)
                .map_err(|e| CompileError::Unavailable(format!("{}: {e}", src.display())))?;
            // hipcc picks its platform from the environment (a CUDA_PATH can make it target
            // NVIDIA): name AMD explicitly.
            let out = Command::new(&self.hipcc)
                .env("HIP_PLATFORM", "amd")
                .arg(format!("--offload-arch={arch}"))
                .args([
                    "--genco",
                    "-O3",
                    "-std=c++17",
                    "-Rpass-analysis=kernel-resource-usage",
                ])
                .args(&self.extra_flags)
                .arg("-o")
                .arg(&obj)
                .arg(&src)
                .output()
                .map_err(|e| CompileError::Unavailable(format!("{}: {e}", self.hipcc.display())))?;
            let log = String::from_utf8_lossy(&out.stderr).into_owned();
            if !out.status.success() {
                return Err(CompileError::Failed { log });
            }
            let code = std::fs::read(&obj).map_err(|e| CompileError::Failed {
                log: format!("{log}\n{}: {e}", obj.display()),
            })?;
            Ok((code, log))
        })();
        // Scratch files are only useful while compiling.
        let _ = std::fs::remove_dir_all(&dir);
        result
    }
}

fn find_hipcc() -> Option<PathBuf> {
    let mut cands: Vec<PathBuf> = ["ROCM_PATH", "HIP_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|root| PathBuf::from(root).join("bin").join("hipcc"))
        .collect();
    cands.push(PathBuf::from("/opt/rocm/bin/hipcc"));
    if let Some(path) = std::env::var_os("PATH") {
        cands.extend(std::env::split_paths(&path).map(|d| d.join("hipcc")));
    }
    cands.into_iter().find(|p| p.is_file())
}

/// `hipcc-5.2.21153-clang-15.0.6` from `hipcc --version` output.
pub fn parse_hipcc_version(text: &str) -> Option<String> {
    let field = |prefix: &str| {
        text.lines().find_map(|l| {
            let at = l.find(prefix)?;
            l[at + prefix.len()..]
                .split_whitespace()
                .next()
                .map(str::to_string)
        })
    };
    let hip = field("HIP version:");
    let clang = field("clang version");
    match (hip, clang) {
        (None, None) => None,
        (h, c) => Some(format!(
            "hipcc-{}-clang-{}",
            h.unwrap_or_else(|| "unknown".into()),
            c.unwrap_or_else(|| "unknown".into())
        )),
    }
}

impl Compiler for HipccCompiler {
    fn id(&self) -> String {
        if self.extra_flags.is_empty() {
            self.version.clone()
        } else {
            format!("{} {}", self.version, self.extra_flags.join(" "))
        }
    }

    fn compile(
        &self,
        source: &KernelSource,
        target: &Target,
    ) -> Result<(CodeObject, Resources), CompileError> {
        check_target(target)?;
        let (bytes, log) = self.run(source, &target.arch)?;
        // Metadata first (exact for the loaded object); remarks when it cannot be parsed.
        let usage = code_object::kernel_usage(&bytes)
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| parse_resource_remarks(&log));
        let resources = main_kernel(&usage, &source.launch.symbol)
            .map(resources_of)
            .unwrap_or_default();
        Ok((
            CodeObject {
                format: CodeFormat::Hsaco,
                bytes,
            },
            resources,
        ))
    }
}

/// Compiles in-process with hiprtc.
pub struct HiprtcCompiler {
    api: Arc<crate::rocm::sys::RtcApi>,
    version: String,
}

impl HiprtcCompiler {
    /// Loads hiprtc (`libhiprtc.so` on ROCm 6, `libamdhip64.so` on ROCm 5).
    pub fn load() -> Result<HiprtcCompiler, CompileError> {
        let api = rtc::rtc().map_err(|e| CompileError::Unavailable(e.to_string()))?;
        let version = rtc::version(&api).map_err(|e| CompileError::Unavailable(e.to_string()))?;
        Ok(HiprtcCompiler { api, version })
    }
}

impl Compiler for HiprtcCompiler {
    fn id(&self) -> String {
        format!("hiprtc-{}", self.version)
    }

    fn compile(
        &self,
        source: &KernelSource,
        target: &Target,
    ) -> Result<(CodeObject, Resources), CompileError> {
        check_target(target)?;
        // The template is C++17 (if constexpr, generic lambdas), like nvcc's and NVRTC's runs.
        let options = vec![
            format!("--offload-arch={}", target.arch),
            "-O3".to_string(),
            "-std=c++17".to_string(),
        ];
        let out = rtc::compile(
            &self.api,
            &source.text,
            &format!("{}.hip", source.name),
            &options,
        )
        .map_err(|e| CompileError::Unavailable(e.to_string()))?;
        let Some(bytes) = out.code else {
            return Err(CompileError::Failed { log: out.log });
        };
        let resources = code_object::kernel_usage(&bytes)
            .and_then(|u| main_kernel(&u, &source.launch.symbol).map(resources_of))
            .unwrap_or_default();
        Ok((
            CodeObject {
                format: CodeFormat::Hsaco,
                bytes,
            },
            resources,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REMARKS: &str = "\
k.hip:4:1: remark: Function Name: gemm [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     SGPRs: 36 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     VGPRs: 130 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     AGPRs: 64 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     ScratchSize [bytes/lane]: 0 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     Occupancy [waves/SIMD]: 2 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     SGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     VGPRs Spill: 3 [-Rpass-analysis=kernel-resource-usage]
k.hip:4:1: remark:     LDS Size [bytes/block]: 32768 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark: Function Name: gemm_epilogue [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     VGPRs: 12 [-Rpass-analysis=kernel-resource-usage]
";

    #[test]
    fn remarks_give_per_kernel_usage() {
        let u = parse_resource_remarks(REMARKS);
        assert_eq!(u.len(), 2);
        assert_eq!(u[0].name, "gemm");
        assert_eq!((u[0].vgprs, u[0].agprs, u[0].sgprs), (130, 64, 36));
        assert_eq!((u[0].vgpr_spills, u[0].lds_bytes), (3, 32768));
        assert_eq!(u[1].vgprs, 12);
        let r = resources_of(main_kernel(&u, "gemm").unwrap());
        assert_eq!(r.registers, Some(132 + 64));
        assert_eq!(r.spill_bytes, Some(12));
        assert_eq!(r.static_shared_bytes, Some(32768));
        // An unknown symbol falls back to the largest kernel.
        assert_eq!(main_kernel(&u, "other").unwrap().name, "gemm");
    }

    #[test]
    fn hipcc_versions_parse() {
        let text = "HIP version: 5.2.21153-0\nDebian clang version 15.0.6\nTarget: x86_64\n";
        assert_eq!(
            parse_hipcc_version(text).as_deref(),
            Some("hipcc-5.2.21153-0-clang-15.0.6")
        );
        let rocm6 = "HIP version: 6.2.41133-dd7f95766\nAMD clang version 18.0.0git (https://github.com/RadeonOpenCompute/llvm-project roc-6.2.0 24292 26466ce804ac523b398608f17388eb6d605a3f09)\n";
        assert_eq!(
            parse_hipcc_version(rocm6).as_deref(),
            Some("hipcc-6.2.41133-dd7f95766-clang-18.0.0git")
        );
        assert_eq!(parse_hipcc_version("nothing here"), None);
    }

    #[test]
    fn nvidia_targets_are_refused() {
        let t = Target::arch(Vendor::Nvidia, "sm_90a");
        assert!(matches!(
            check_target(&t),
            Err(CompileError::Unavailable(_))
        ));
    }
}
