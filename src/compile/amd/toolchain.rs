//! Which program compiles HIP for a `gfx` target, and the flags that make it write one device
//! code object.
//!
//! Flow: an arch (`gfx942`) -> the command line in `GEMMTUNE_HIP_COMPILER_GFX942`, else in
//! `GEMMTUNE_HIP_COMPILER`, else ROCm's own compiler (`hipcc`, then `amdclang++`, under
//! `$ROCM_PATH`, `$HIP_PATH` and `/opt/rocm`, then on `PATH`) -> a [`HipCommand`]: the
//! program, the arguments given with it, and its [`Driver`], which decides how the device-only
//! compile is asked for -> [`HipCommand::command`] builds the process; the caller adds the
//! output and the source.
//!
//! A command line is split on whitespace, like `CC` in make: `clang++-19
//! --rocm-device-lib-path=/x` is the program `clang++-19` with one argument.
//!
//! Only `std` is used: build.rs includes this file as well, so the ahead-of-time build and
//! the run-time compiler pick the same compiler for an arch.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The variable naming the HIP compiler for every arch (a per-arch variable wins).
pub const COMPILER_VAR: &str = "GEMMTUNE_HIP_COMPILER";

/// How a program is asked for a device-only compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// ROCm's `hipcc` wrapper: `--genco` writes a clang offload bundle.
    Hipcc,
    /// A clang HIP driver (`amdclang++`, `clang++-19`, ...): `--cuda-device-only
    /// --no-gpu-bundle-output` writes the bare device ELF (no bundler needed).
    Clang,
}

/// A HIP compiler: program, the arguments that came with it, and its driver kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HipCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub driver: Driver,
}

/// `GEMMTUNE_HIP_COMPILER_GFX942` for `gfx942` (target features such as `:xnack-` dropped).
pub fn arch_var(arch: &str) -> String {
    let base = arch.split(':').next().unwrap_or(arch);
    let suffix: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{COMPILER_VAR}_{suffix}")
}

/// hipcc for a file named like it, a clang driver for anything else.
pub fn driver_of(program: &Path) -> Driver {
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.contains("hipcc") {
        Driver::Hipcc
    } else {
        Driver::Clang
    }
}

/// Where a ROCm install may be: `$ROCM_PATH`, `$HIP_PATH`, then `/opt/rocm`.
pub fn rocm_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["ROCM_PATH", "HIP_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    roots.push(PathBuf::from("/opt/rocm"));
    roots
}

fn search_path(exe: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(exe))
        .find(|p| p.is_file())
}

impl HipCommand {
    /// The compiler for `arch`: the per-arch variable, the global one, or ROCm's default.
    pub fn for_arch(arch: &str) -> Result<HipCommand, String> {
        for var in [arch_var(arch), COMPILER_VAR.to_string()] {
            if let Ok(line) = std::env::var(&var) {
                if !line.trim().is_empty() {
                    return Self::parse(&line).map_err(|e| format!("{var}: {e}"));
                }
            }
        }
        Self::rocm_default().ok_or_else(|| {
            format!(
                "no HIP compiler found: looked for hipcc and amdclang++ under $ROCM_PATH, \
                 $HIP_PATH, /opt/rocm and on PATH (set ROCM_PATH, or name one in {} or {COMPILER_VAR})",
                arch_var(arch)
            )
        })
    }

    /// A command line: a program (a path, or a name looked up on `PATH`) and its arguments.
    pub fn parse(line: &str) -> Result<HipCommand, String> {
        let mut words = line.split_whitespace();
        let first = words.next().ok_or("the command line is empty")?;
        let program = if first.contains('/') {
            let p = PathBuf::from(first);
            if !p.is_file() {
                return Err(format!("{first} does not exist"));
            }
            p
        } else {
            search_path(first).ok_or_else(|| format!("{first} is not on PATH"))?
        };
        Ok(HipCommand {
            driver: driver_of(&program),
            program,
            args: words.map(str::to_string).collect(),
        })
    }

    /// ROCm's compiler: `hipcc`, then `amdclang++`, in each ROCm root, then on `PATH`.
    pub fn rocm_default() -> Option<HipCommand> {
        let roots = rocm_roots();
        let in_roots = roots.iter().flat_map(|r| {
            [
                r.join("bin").join("hipcc"),
                r.join("bin").join("amdclang++"),
                r.join("llvm").join("bin").join("amdclang++"),
            ]
        });
        let program = in_roots
            .into_iter()
            .find(|p| p.is_file())
            .or_else(|| search_path("hipcc"))
            .or_else(|| search_path("amdclang++"))?;
        Some(HipCommand {
            driver: driver_of(&program),
            program,
            args: Vec::new(),
        })
    }

    /// A process that compiles one HIP source for `arch` into a device code object at `-O3`
    /// in C++17 (the template's `if constexpr`); the caller appends `-o OUT` and the source.
    pub fn command(&self, arch: &str) -> Command {
        let mut cmd = Command::new(&self.program);
        match self.driver {
            // hipcc picks its platform from the environment (a CUDA_PATH can make it target
            // NVIDIA): name AMD explicitly.
            Driver::Hipcc => {
                cmd.env("HIP_PLATFORM", "amd").arg("--genco");
            }
            Driver::Clang => {
                cmd.args(["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"]);
            }
        }
        cmd.arg(format!("--offload-arch={arch}"))
            .args(["-O3", "-std=c++17"])
            .args(&self.args);
        cmd
    }

    /// `hipcc-6.2.41133-clang-18.0.0git`, `clang-19.1.7`, ... from `--version`.
    pub fn version(&self) -> Result<String, String> {
        let out = Command::new(&self.program)
            .env("HIP_PLATFORM", "amd")
            .arg("--version")
            .output()
            .map_err(|e| format!("{}: {e}", self.program.display()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let parsed = match self.driver {
            Driver::Hipcc => parse_hipcc_version(&text),
            Driver::Clang => parse_clang_version(&text),
        };
        parsed.ok_or_else(|| {
            format!(
                "{} --version printed no HIP/clang version",
                self.program.display()
            )
        })
    }
}

fn version_field(text: &str, prefix: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let at = l.find(prefix)?;
        l[at + prefix.len()..]
            .split_whitespace()
            .next()
            .map(str::to_string)
    })
}

/// `hipcc-5.2.21153-clang-15.0.6` from `hipcc --version` output.
pub fn parse_hipcc_version(text: &str) -> Option<String> {
    let hip = version_field(text, "HIP version:");
    let clang = version_field(text, "clang version");
    match (hip, clang) {
        (None, None) => None,
        (h, c) => Some(format!(
            "hipcc-{}-clang-{}",
            h.unwrap_or_else(|| "unknown".into()),
            c.unwrap_or_else(|| "unknown".into())
        )),
    }
}

/// `clang-19.1.7`, or `amdclang-19.0.0git` for ROCm's build, from `clang --version` output.
pub fn parse_clang_version(text: &str) -> Option<String> {
    let v = version_field(text, "clang version")?;
    let amd = text.lines().any(|l| l.contains("AMD clang version"));
    Some(format!("{}clang-{v}", if amd { "amd" } else { "" }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_arch_variables_drop_target_features() {
        assert_eq!(arch_var("gfx942"), "GEMMTUNE_HIP_COMPILER_GFX942");
        assert_eq!(
            arch_var("gfx90a:sramecc+:xnack-"),
            "GEMMTUNE_HIP_COMPILER_GFX90A"
        );
    }

    #[test]
    fn the_driver_follows_the_program_name() {
        assert_eq!(driver_of(Path::new("/opt/rocm/bin/hipcc")), Driver::Hipcc);
        assert_eq!(driver_of(Path::new("/usr/bin/hipcc.bin")), Driver::Hipcc);
        assert_eq!(
            driver_of(Path::new("/opt/rocm/llvm/bin/amdclang++")),
            Driver::Clang
        );
        assert_eq!(driver_of(Path::new("/usr/bin/clang++-22")), Driver::Clang);
    }

    #[test]
    fn a_command_line_is_a_program_and_its_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let prog = dir.path().join("clang++-22");
        std::fs::write(&prog, "").unwrap();
        let c = HipCommand::parse(&format!(
            "  {}  -mcode-object-version=5\t--rocm-device-lib-path=/x ",
            prog.display()
        ))
        .unwrap();
        assert_eq!(c.program, prog);
        assert_eq!(c.driver, Driver::Clang);
        assert_eq!(
            c.args,
            ["-mcode-object-version=5", "--rocm-device-lib-path=/x"]
        );
        let err = HipCommand::parse("/nonexistent/hipcc -O2").unwrap_err();
        assert!(err.contains("/nonexistent/hipcc"), "{err}");
        assert!(HipCommand::parse("   ").is_err());
        let err = HipCommand::parse("no-such-compiler-xyz").unwrap_err();
        assert!(err.contains("not on PATH"), "{err}");
    }

    #[test]
    fn device_only_flags_depend_on_the_driver() {
        let args = |driver| {
            let c = HipCommand {
                program: PathBuf::from("cc"),
                args: vec!["-DX=1".into()],
                driver,
            };
            let cmd = c.command("gfx950");
            cmd.get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
        };
        let clang = args(Driver::Clang);
        assert_eq!(
            clang,
            [
                "-x",
                "hip",
                "--cuda-device-only",
                "--no-gpu-bundle-output",
                "--offload-arch=gfx950",
                "-O3",
                "-std=c++17",
                "-DX=1"
            ]
        );
        let hipcc = args(Driver::Hipcc);
        assert_eq!(hipcc[0], "--genco");
        assert!(hipcc.contains(&"-std=c++17".to_string()), "{hipcc:?}");
    }

    #[test]
    fn versions_parse() {
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
        assert_eq!(
            parse_clang_version(
                "Debian clang version 19.1.7 (3~deb12u1)\nTarget: x86_64-pc-linux-gnu\n"
            )
            .as_deref(),
            Some("clang-19.1.7")
        );
        assert_eq!(
            parse_clang_version("AMD clang version 19.0.0git (https://github.com/ROCm/llvm-project roc-7.0.0 25133)\n")
                .as_deref(),
            Some("amdclang-19.0.0git")
        );
        assert_eq!(parse_clang_version("zig 0.17.1"), None);
    }
}
