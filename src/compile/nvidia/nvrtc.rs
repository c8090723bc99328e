//! NVRTC driver: compiles generated source to a CUBIN in-process, many at once (NVRTC is
//! thread-safe across programs). The library is loaded at run time, so a binary built here
//! starts on machines without CUDA; [`NvrtcCompiler::new`] reports its absence as an error.

use std::ffi::{c_char, CString};

use cudarc::nvrtc::{result, sys};

use super::check_arch;
use crate::compile::codegen::KernelSource;
use crate::compile::{CodeObject, CompileError, Compiler, Resources, Target};

/// NVRTC, with its version read once at construction.
#[derive(Debug, Clone)]
pub struct NvrtcCompiler {
    version: (i32, i32),
}

impl NvrtcCompiler {
    /// Loads libnvrtc; `Unavailable` when it cannot be found.
    pub fn new() -> Result<Self, CompileError> {
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { sys::is_culib_present() } {
            return Err(CompileError::Unavailable(
                "libnvrtc not found (install the CUDA toolkit or add its lib directory to LD_LIBRARY_PATH)"
                    .into(),
            ));
        }
        let (mut major, mut minor) = (0, 0);
        // SAFETY: the library is present; both out-pointers are valid.
        unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
            .result()
            .map_err(|e| CompileError::Unavailable(format!("nvrtcVersion: {e:?}")))?;
        Ok(NvrtcCompiler {
            version: (major, minor),
        })
    }

    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// Compiles any CUDA source to a CUBIN for `arch`; returns the bytes and the compile log.
    pub fn compile_source(
        &self,
        text: &str,
        name: &str,
        arch: &str,
    ) -> Result<(Vec<u8>, String), CompileError> {
        let arch = check_arch(arch)?;
        let src = CString::new(text).map_err(|_| CompileError::Failed {
            log: "source contains a NUL byte".into(),
        })?;
        let file = CString::new(format!("{name}.cu")).unwrap_or_default();
        let prog = result::create_program(&src, Some(&file)).map_err(|e| CompileError::Failed {
            log: format!("nvrtcCreateProgram: {e:?}"),
        })?;
        let opts = [
            format!("--gpu-architecture={arch}"),
            "-std=c++17".to_string(),
            "--ptxas-options=-v".to_string(),
            "-default-device".to_string(),
        ];
        // SAFETY: `prog` was just created and is destroyed exactly once below.
        let compiled = unsafe { result::compile_program(prog, &opts) };
        let log = unsafe { result::get_program_log(prog) }
            .map(|raw| c_chars_to_string(&raw))
            .unwrap_or_default();
        let out = match compiled {
            Err(_) => Err(CompileError::Failed { log: log.clone() }),
            Ok(()) => unsafe { cubin(prog) }.map_err(|e| CompileError::Failed {
                log: format!("nvrtcGetCUBIN: {e:?}\n{log}"),
            }),
        };
        // SAFETY: destroyed once; nothing uses `prog` afterwards.
        let _ = unsafe { result::destroy_program(prog) };
        out.map(|bytes| (bytes, log))
    }
}

impl Compiler for NvrtcCompiler {
    fn id(&self) -> String {
        format!("nvrtc-{}.{}", self.version.0, self.version.1)
    }

    fn compile(
        &self,
        source: &KernelSource,
        target: &Target,
    ) -> Result<(CodeObject, Resources), CompileError> {
        let (bytes, log) = self.compile_source(&source.text, &source.name, &target.arch)?;
        Ok(super::cubin_with_resources(bytes, &log, &source.name))
    }
}

/// # Safety
/// `prog` must be a successfully compiled, live program.
unsafe fn cubin(prog: sys::nvrtcProgram) -> Result<Vec<u8>, sys::nvrtcResult> {
    let mut size = 0usize;
    let r = sys::nvrtcGetCUBINSize(prog, &mut size);
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(r);
    }
    let mut buf = vec![0u8; size];
    let r = sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut c_char);
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(r);
    }
    Ok(buf)
}

fn c_chars_to_string(raw: &[c_char]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::{HwSpec, Vendor};
    use crate::problem::GemmProblem;
    use crate::space::{KernelConfig, Space};

    /// Compiles configs with NVRTC and checks the ptxas report is read; skipped (with a
    /// notice) where libnvrtc cannot be loaded.
    #[test]
    fn nvrtc_compiles_and_reports_resources() {
        let Ok(nvrtc) = NvrtcCompiler::new() else {
            eprintln!("NOTICE: libnvrtc not found, NVRTC compile test skipped");
            return;
        };
        let mut p = GemmProblem::new(1000, 520, 1100);
        p.fill_defaults();
        let hw = HwSpec::by_name("H200").unwrap();
        let target = Target::arch(Vendor::Nvidia, "sm_90a");
        let mut cfg = Space::for_problem(&p, &hw).default_config().unwrap();
        cfg.grvw = 1;
        let named = KernelConfig::parse(
            "MT128x128x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW1_SVW4_SU0",
        )
        .unwrap();
        for c in [cfg, KernelConfig { grvw: 8, ..cfg }, named] {
            let src = crate::compile::codegen::generate(&c, &p, &target);
            let (code, res) = nvrtc.compile(&src, &target).unwrap();
            if res.registers.is_none() {
                let (_, log) = nvrtc
                    .compile_source(&src.text, &src.name, "sm_90a")
                    .unwrap();
                eprintln!("LOG for {}:\n{log}", c.name());
            }
            assert_eq!(code.format, crate::compile::CodeFormat::Cubin);
            assert!(res.registers.is_some(), "{}: {res:?}", c.name());
        }
    }
}
