//! AMD compiler drivers: a HIP compiler process (`hipcc`, `amdclang++` or another clang HIP
//! driver, chosen per arch by [`toolchain`]) and hiprtc (in-process, loaded at run time), both
//! turning generated HIP source into a code object for one `gfx` target.
//!
//! Flow: [`KernelSource`] -> the compiler process (hipcc `--genco`: a clang offload bundle;
//! a clang driver: the bare device ELF) or hiprtc (a bare ELF) -> [`CodeObject`] (`Hsaco`,
//! loadable by `hipModuleLoadData`) plus [`Resources`] read from the code object's metadata
//! ([`code_object`]) whatever the clang version, or from the compiler's
//! `-Rpass-analysis=kernel-resource-usage` remarks only when the metadata cannot be read.
//! A rejected source is `CompileError::Failed` with the compiler's log; a missing compiler is
//! `CompileError::Unavailable`.

pub mod code_object;
pub mod toolchain;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::codegen::KernelSource;
use super::{CodeFormat, CodeObject, CompileError, Compiler, Resources, Target};
use crate::hw::Vendor;
use crate::rocm::rtc;
use code_object::KernelUsage;
use toolchain::HipCommand;

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
/// starting at `Function Name: <name>`). A kernel with a count that is not a number (clang
/// 20+ prints `VGPRs: <kernel>.num_vgpr` where the value is only known at link time) is left
/// out: a missing count must not read as zero spills.
pub fn parse_resource_remarks(stderr: &str) -> Vec<KernelUsage> {
    let mut out: Vec<KernelUsage> = Vec::new();
    let mut unreadable: Vec<usize> = Vec::new();
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
        let Some(cur) = out.last_mut() else {
            continue;
        };
        let key = key.trim();
        let Ok(n) = value.parse::<u32>() else {
            if REMARK_COUNTS.contains(&key) {
                unreadable.push(out.len() - 1);
            }
            continue;
        };
        match key {
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
    out.into_iter()
        .enumerate()
        .filter(|(i, _)| !unreadable.contains(i))
        .map(|(_, u)| u)
        .collect()
}

/// The remarks [`parse_resource_remarks`] reads.
const REMARK_COUNTS: &[&str] = &[
    "VGPRs",
    "AGPRs",
    "SGPRs",
    "VGPRs Spill",
    "SGPRs Spill",
    "ScratchSize [bytes/lane]",
    "LDS Size [bytes/block]",
];

/// Drives a HIP compiler process (`hipcc`, `amdclang++`, or another clang HIP driver; see
/// [`toolchain`] for which one serves an arch).
#[derive(Debug, Clone)]
pub struct HipCompiler {
    tool: HipCommand,
    version: String,
}

/// Unique scratch names for concurrent compiles in one process.
static SCRATCH_SEQ: AtomicU64 = AtomicU64::new(0);

impl HipCompiler {
    /// The compiler chosen for `arch`: `GEMMTUNE_HIP_COMPILER_<ARCH>`, `GEMMTUNE_HIP_COMPILER`,
    /// or ROCm's hipcc / amdclang++ ([`HipCommand::for_arch`]).
    pub fn for_arch(arch: &str) -> Result<HipCompiler, CompileError> {
        Self::new(HipCommand::for_arch(arch).map_err(CompileError::Unavailable)?)
    }

    /// Uses a given command, reading its version.
    pub fn new(tool: HipCommand) -> Result<HipCompiler, CompileError> {
        let version = tool.version().map_err(CompileError::Unavailable)?;
        Ok(HipCompiler { tool, version })
    }

    pub fn command(&self) -> &HipCommand {
        &self.tool
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
            let out = self
                .tool
                .command(arch)
                .arg("-Rpass-analysis=kernel-resource-usage")
                .arg("-o")
                .arg(&obj)
                .arg(&src)
                .output()
                .map_err(|e| {
                    CompileError::Unavailable(format!("{}: {e}", self.tool.program.display()))
                })?;
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

impl Compiler for HipCompiler {
    fn id(&self) -> String {
        if self.tool.args.is_empty() {
            self.version.clone()
        } else {
            format!("{} {}", self.version, self.tool.args.join(" "))
        }
    }

    fn compile(
        &self,
        source: &KernelSource,
        target: &Target,
    ) -> Result<(CodeObject, Resources), CompileError> {
        check_target(target)?;
        let (bytes, log) = self.run(source, &target.arch)?;
        let resources = main_kernel(&usage_of(&bytes, &log), &source.launch.symbol)
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

/// Resource usage from the code object's metadata, which every clang version writes the same
/// way; the resource remarks only where the metadata cannot be read (clang 20+ prints some of
/// them as symbolic expressions, which [`parse_resource_remarks`] leaves out).
pub fn usage_of(code: &[u8], log: &str) -> Vec<KernelUsage> {
    code_object::kernel_usage(code)
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| parse_resource_remarks(log))
}

/// Compiles in-process with hiprtc.
pub struct HiprtcCompiler {
    api: Arc<crate::rocm::sys::RtcApi>,
    version: String,
}

impl HiprtcCompiler {
    /// Loads hiprtc (`libhiprtc.so` on ROCm 6 and 7, `libamdhip64.so` on ROCm 5).
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
    fn symbolic_remarks_are_not_read_as_zero() {
        // clang 22 prints some counts as expressions resolved at link time.
        let clang22 = "\
k.hip:9:1: remark: Function Name: gemm [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     VGPRs: gemm.num_vgpr [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     AGPRs: gemm.num_agpr [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     ScratchSize [bytes/lane]: 0 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     VGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
";
        assert_eq!(parse_resource_remarks(clang22), vec![]);
        let r = main_kernel(&usage_of(b"not a code object", clang22), "gemm").map(resources_of);
        assert_eq!(r, None, "unknown counts must stay unknown");
        // Numeric blocks beside a symbolic one are still read.
        let both = format!("{REMARKS}{clang22}");
        let names: Vec<String> = parse_resource_remarks(&both)
            .into_iter()
            .map(|u| u.name)
            .collect();
        assert_eq!(names, ["gemm", "gemm_epilogue"]);
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
