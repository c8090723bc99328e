//! nvcc driver: runs the `nvcc` binary (from CUDA_PATH, CUDA_HOME or PATH) on a temporary
//! file, `-cubin -gencode=arch=compute_XX,code=sm_XX -Xptxas -v`, and reads the CUBIN and the
//! ptxas report back. Slower than NVRTC per kernel but needs no shared library at run time;
//! build.rs and the compile tests use the same flags.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{check_arch, virtual_arch};
use crate::compile::codegen::KernelSource;
use crate::compile::{CodeObject, CompileError, Compiler, Resources, Target};

/// One nvcc installation, with its version read once.
#[derive(Debug, Clone)]
pub struct NvccCompiler {
    path: PathBuf,
    version: String,
}

/// Where nvcc would be: `$CUDA_PATH/bin`, `$CUDA_HOME/bin`, then each `PATH` entry.
pub fn find_nvcc() -> Option<PathBuf> {
    let exe = if cfg!(windows) { "nvcc.exe" } else { "nvcc" };
    let roots = ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|r| PathBuf::from(r).join("bin"));
    let path_dirs = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    roots
        .chain(path_dirs)
        .map(|d| d.join(exe))
        .find(|p| p.is_file())
}

impl NvccCompiler {
    /// Finds nvcc and reads its version; `Unavailable` when there is none.
    pub fn find() -> Result<Self, CompileError> {
        let path = find_nvcc().ok_or_else(|| {
            CompileError::Unavailable("nvcc not found in CUDA_PATH, CUDA_HOME or PATH".into())
        })?;
        Self::at(&path)
    }

    pub fn at(path: &Path) -> Result<Self, CompileError> {
        let out = Command::new(path)
            .arg("--version")
            .output()
            .map_err(|e| CompileError::Unavailable(format!("{}: {e}", path.display())))?;
        let text = String::from_utf8_lossy(&out.stdout);
        // "Cuda compilation tools, release 13.0, V13.0.88"
        let version = text
            .lines()
            .find_map(|l| l.rsplit_once(", V").map(|(_, v)| v.trim().to_string()))
            .ok_or_else(|| {
                CompileError::Unavailable(format!(
                    "{}: unrecognised --version output",
                    path.display()
                ))
            })?;
        Ok(NvccCompiler {
            path: path.to_path_buf(),
            version,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    /// The flags every nvcc compile uses for `arch` (shared with build.rs by convention).
    pub fn flags(arch: &str) -> Vec<String> {
        vec![
            "-x".into(),
            "cu".into(),
            "-cubin".into(),
            format!("-gencode=arch={},code={arch}", virtual_arch(arch)),
            "-std=c++17".into(),
            "-Xptxas".into(),
            "-v".into(),
        ]
    }

    /// Compiles a source file's text to a CUBIN; returns the bytes and nvcc's stderr.
    pub fn compile_source(
        &self,
        text: &str,
        name: &str,
        arch: &str,
    ) -> Result<(Vec<u8>, String), CompileError> {
        let arch = check_arch(arch)?;
        let dir = tempfile::Builder::new()
            .prefix("gemmtune-nvcc-")
            .tempdir()
            .map_err(|e| CompileError::Unavailable(format!("temporary directory: {e}")))?;
        let src = dir.path().join(format!("{name}.cu"));
        let out = dir.path().join(format!("{name}.cubin"));
        std::fs::write(&src, text)
            .map_err(|e| CompileError::Unavailable(format!("{}: {e}", src.display())))?;
        let run = Command::new(&self.path)
            .args(Self::flags(&arch))
            .arg("-o")
            .arg(&out)
            .arg(&src)
            .output()
            .map_err(|e| CompileError::Unavailable(format!("{}: {e}", self.path.display())))?;
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        if !run.status.success() {
            return Err(CompileError::Failed { log });
        }
        let bytes = std::fs::read(&out).map_err(|e| CompileError::Failed {
            log: format!("{}: {e}\n{log}", out.display()),
        })?;
        Ok((bytes, log))
    }
}

impl Compiler for NvccCompiler {
    fn id(&self) -> String {
        format!("nvcc-{}", self.version)
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
