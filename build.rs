//! Build step: compiles the default kernel set (`kernels/default_set.txt`) and the reference
//! kernels ahead of time with whatever GPU toolchains are installed, and writes
//! `$OUT_DIR/aot_kernels.rs`, which `src/compile/aot.rs` includes (embedding the objects).
//!
//! Toolchains: nvcc from CUDA_PATH / CUDA_HOME / PATH for `sm_*` archs; for `gfx*` archs the
//! HIP compiler the run-time compiler would pick (`src/compile/amd/toolchain.rs`, included
//! here: `GEMMTUNE_HIP_COMPILER_<ARCH>`, `GEMMTUNE_HIP_COMPILER`, else ROCm's hipcc /
//! amdclang++). Archs: `GEMMTUNE_ARCHS` (comma-separated), default `sm_90a,gfx90a,gfx942`. A
//! missing toolchain, or an arch a compiler does not know, is a cargo warning and the crate
//! builds without those objects, unless `GEMMTUNE_REQUIRE_TOOLCHAIN=1`, which makes either an
//! error (CI sets it).

use std::path::{Path, PathBuf};
use std::process::Command;

#[allow(dead_code)]
#[path = "src/compile/amd/toolchain.rs"]
mod toolchain;

struct Block {
    vendor: String,
    arch: String,
    name: String,
    defines: String,
}

/// The header/`#define` blocks of default_set.txt (the format `aot::parse_default_set` reads).
fn parse_blocks(text: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        if let Some(h) = t.strip_prefix("@ ") {
            let f: Vec<&str> = h.split_whitespace().collect();
            if f.len() == 9 {
                out.push(Block {
                    vendor: f[0].into(),
                    arch: f[1].into(),
                    name: f[8].into(),
                    defines: String::new(),
                });
            }
        } else if let Some(b) = out.last_mut() {
            b.defines.push_str(t);
            b.defines.push('\n');
        }
    }
    out
}

fn find_tool(exe: &str, roots: &[&str]) -> Option<PathBuf> {
    let from_roots = roots
        .iter()
        .filter_map(std::env::var_os)
        .map(|r| PathBuf::from(r).join("bin"));
    let from_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    from_roots
        .chain(from_path)
        .map(|d| d.join(exe))
        .find(|p| p.is_file())
}

/// `Used N registers` and spill bytes of entry `symbol` in a ptxas -v report.
fn ptxas_info(log: &str, symbol: &str) -> (Option<u32>, Option<u32>) {
    let (mut regs, mut spills) = (None, None);
    let mut current = String::new();
    for line in log.lines() {
        if let Some(rest) = line.split("entry function '").nth(1) {
            current = rest.split('\'').next().unwrap_or("").to_string();
            continue;
        }
        if current != symbol {
            continue;
        }
        let before = |unit: &str| -> Option<u32> {
            let i = line.find(unit)?;
            line[..i].split_whitespace().last()?.parse().ok()
        };
        if line.contains("spill stores") {
            spills = Some(
                before(" bytes spill stores").unwrap_or(0)
                    + before(" bytes spill loads").unwrap_or(0),
            );
        }
        if let Some(r) = line.split("Used ").nth(1) {
            regs = r.split_whitespace().next().and_then(|n| n.parse().ok());
        }
    }
    (regs, spills)
}

struct Built {
    arch: String,
    name: String,
    defines: String,
    file: PathBuf,
    regs: Option<u32>,
    spills: Option<u32>,
}

/// A compiler for one arch: nvcc, or a HIP compiler command.
enum Tool {
    Nvcc(PathBuf),
    Hip(toolchain::HipCommand),
}

impl Tool {
    fn name(&self) -> String {
        match self {
            Tool::Nvcc(p) => p.display().to_string(),
            Tool::Hip(h) => h.program.display().to_string(),
        }
    }
}

fn compile(
    tool: &Tool,
    arch: &str,
    src: &Path,
    out: &Path,
    kernels: &Path,
) -> Result<String, String> {
    let mut cmd = match tool {
        Tool::Nvcc(nvcc) => {
            let mut cmd = Command::new(nvcc);
            cmd.args(["-x", "cu", "-cubin", "-std=c++17", "-Xptxas", "-v"])
                .arg(format!(
                    "-gencode=arch={},code={arch}",
                    arch.replacen("sm_", "compute_", 1)
                ));
            cmd
        }
        Tool::Hip(hip) => hip.command(arch),
    };
    cmd.arg("-I").arg(kernels).arg("-o").arg(out).arg(src);
    let r = cmd.output().map_err(|e| format!("{}: {e}", tool.name()))?;
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
    if r.status.success() {
        Ok(log)
    } else {
        Err(log
            .lines()
            .filter(|l| l.contains("error"))
            .take(3)
            .collect::<Vec<_>>()
            .join(" | "))
    }
}

fn main() {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let kernels = manifest.join("kernels");
    println!("cargo:rerun-if-changed=kernels");
    let require = std::env::var("GEMMTUNE_REQUIRE_TOOLCHAIN").as_deref() == Ok("1");
    let archs: Vec<String> = std::env::var("GEMMTUNE_ARCHS")
        .unwrap_or_else(|_| "sm_90a,gfx90a,gfx942".into())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let hip_vars = archs.iter().map(|a| toolchain::arch_var(a));
    for v in [
        "GEMMTUNE_ARCHS",
        "GEMMTUNE_REQUIRE_TOOLCHAIN",
        "CUDA_PATH",
        "CUDA_HOME",
        "ROCM_PATH",
        "HIP_PATH",
        "PATH",
        toolchain::COMPILER_VAR,
    ]
    .into_iter()
    .map(str::to_string)
    .chain(hip_vars)
    {
        println!("cargo:rerun-if-env-changed={v}");
    }
    let problem = |msg: String| {
        if require {
            panic!("{msg} (GEMMTUNE_REQUIRE_TOOLCHAIN=1)");
        }
        println!("cargo:warning={msg}");
    };

    let text = std::fs::read_to_string(kernels.join("default_set.txt")).unwrap_or_default();
    let blocks = parse_blocks(&text);
    let nvcc = find_tool("nvcc", &["CUDA_PATH", "CUDA_HOME"]);
    let aot = out_dir.join("aot");
    let _ = std::fs::create_dir_all(&aot);

    let mut built: Vec<Built> = Vec::new();
    let mut reference: Vec<(String, PathBuf)> = Vec::new();
    let mut compiler_id: Option<String> = None;
    for arch in &archs {
        let (vendor, tool) = if arch.starts_with("sm_") {
            let tool = nvcc
                .clone()
                .map(Tool::Nvcc)
                .ok_or_else(|| "no nvcc found".to_string());
            ("nvidia", tool)
        } else {
            ("amd", toolchain::HipCommand::for_arch(arch).map(Tool::Hip))
        };
        let tool = match tool {
            Ok(t) => t,
            Err(e) => {
                problem(format!(
                    "{e}: {arch} kernels are not compiled ahead of time"
                ));
                continue;
            }
        };
        if let (Tool::Nvcc(nvcc), None) = (&tool, &compiler_id) {
            compiler_id = Command::new(nvcc)
                .arg("--version")
                .output()
                .ok()
                .and_then(|o| {
                    String::from_utf8_lossy(&o.stdout).lines().find_map(|l| {
                        l.rsplit_once(", V")
                            .map(|(_, v)| format!("nvcc-{}", v.trim()))
                    })
                });
        }
        let ext = if vendor == "nvidia" { "cubin" } else { "hsaco" };
        // The reference kernels first: if the compiler does not know the arch, skip it whole.
        let ref_src = aot.join(format!("reference_{arch}.cu"));
        let ref_out = aot.join(format!("reference_{arch}.{ext}"));
        let _ = std::fs::write(
            &ref_src,
            format!(
                "#define GT_VENDOR_AMD {}\n#include \"reference.hip\"\n",
                u8::from(vendor == "amd")
            ),
        );
        match compile(&tool, arch, &ref_src, &ref_out, &kernels) {
            Ok(_) => reference.push((arch.clone(), ref_out)),
            Err(e) => {
                problem(format!("{} cannot build {arch}: {e}", tool.name()));
                continue;
            }
        }
        // Kernels of this arch, two compiler processes at a time. One config name can stand
        // for several blocks (other layouts, types or beta), so each block's files carry its
        // index in the set: shared paths would let two compiles write one source at once and
        // embed one block's object under another's defines.
        let mine: Vec<(usize, &Block)> = blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| &b.arch == arch && b.vendor == vendor)
            .collect();
        for pair in mine.chunks(2) {
            let results: Vec<_> = std::thread::scope(|s| {
                let handles: Vec<_> = pair
                    .iter()
                    .map(|&(i, b)| {
                        let src = aot.join(format!("{i:03}_{}_{arch}.cu", b.name));
                        let out = aot.join(format!("{i:03}_{}_{arch}.{ext}", b.name));
                        let (kernels, tool) = (&kernels, &tool);
                        s.spawn(move || {
                            let _ = std::fs::write(
                                &src,
                                format!("{}#include \"gemm.hip\"\n", b.defines),
                            );
                            (b, out.clone(), compile(tool, arch, &src, &out, kernels))
                        })
                    })
                    .collect();
                handles.into_iter().filter_map(|h| h.join().ok()).collect()
            });
            for (b, out, r) in results {
                match r {
                    Ok(log) => {
                        let (regs, spills) = ptxas_info(&log, &b.name);
                        built.push(Built {
                            arch: arch.clone(),
                            name: b.name.clone(),
                            defines: b.defines.clone(),
                            file: out,
                            regs,
                            spills,
                        });
                    }
                    Err(e) => problem(format!(
                        "default kernel {} for {arch} failed to compile: {e}",
                        b.name
                    )),
                }
            }
        }
    }

    let opt = |v: Option<u32>| {
        v.map(|x| format!("Some({x})"))
            .unwrap_or_else(|| "None".into())
    };
    let mut rs = String::from("// Generated by build.rs from kernels/default_set.txt.\n");
    rs.push_str(&format!(
        "pub static AOT_COMPILER: Option<&str> = {:?};\n",
        compiler_id
    ));
    rs.push_str("pub static AOT_KERNELS: &[AotKernel] = &[\n");
    for b in &built {
        rs.push_str(&format!(
            "    AotKernel {{ arch: {:?}, name: {:?}, defines: {:?}, code: include_bytes!({:?}), registers: {}, spill_bytes: {} }},\n",
            b.arch,
            b.name,
            b.defines,
            b.file.display().to_string(),
            opt(b.regs),
            opt(b.spills)
        ));
    }
    rs.push_str("];\npub static AOT_REFERENCE: &[(&str, &[u8])] = &[\n");
    for (arch, file) in &reference {
        rs.push_str(&format!(
            "    ({arch:?}, include_bytes!({:?})),\n",
            file.display().to_string()
        ));
    }
    rs.push_str("];\n");
    std::fs::write(out_dir.join("aot_kernels.rs"), rs).expect("OUT_DIR is writable");
}
