//! The AMD targets users run (gfx90a, gfx942, gfx950), checked in machine code without a GPU.
//!
//! Per arch, with the compiler gemmtune picks for it (`HipCompiler::for_arch`: ROCm's hipcc /
//! amdclang++, or `GEMMTUNE_HIP_COMPILER[_<ARCH>]`; CI names Debian's clang-19 for gfx942 and
//! clang-22 for gfx950) and the newest `llvm-objdump` found:
//! - every MFMA instruction of [`MFMA`] for the arch is accepted (one small kernel per
//!   instruction calling its builtin) and appears under its name in the disassembly;
//! - a GEMM kernel generated from the template for each (type, shape) of [`MFMA`] whose type is
//!   in [`TEMPLATE_TYPES`] contains that instruction, and spills nothing and uses no scratch
//!   (read from the code object's metadata); those with an M- or N-contiguous operand again
//!   with TransposeLDS, which must leave no LDS read narrower than 4 bytes (their twins
//!   without it gather one element per read);
//! - the arch's hw specs agree with the compiler: static LDS of `lds_bytes_per_workgroup` bytes
//!   compiles and 4 bytes more is rejected; every kernel is compiled for `wave_size` lanes.
//!
//! Without a toolchain for an arch, the checks of that arch print why they are skipped and
//! pass, unless `GEMMTUNE_REQUIRE_TOOLCHAIN` is set (CI), where they fail. Per kernel the
//! instruction counts are printed (`--nocapture`) and appended to the file named by
//! `GEMMTUNE_ISA_REPORT` (CI prints it). Without any toolchain the table is still checked
//! against `hw_specs/` ([`mfma_table_matches_the_hw_specs`]).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use gemmtune::compile::amd::code_object::{self, KernelUsage};
use gemmtune::compile::amd::HipCompiler;
use gemmtune::compile::{codegen, CompileError, Compiler, Target};
use gemmtune::hw::{HwSpec, Vendor};
use gemmtune::problem::DataType::{Bf16, Bf8, F16, F8};
use gemmtune::problem::{DataType, GemmProblem};
use gemmtune::space::{constraints, KernelConfig, Space};

/// One MFMA instruction the kernel space can pick on an arch: its input type and shape (as
/// `hw_specs` lists them), the name `llvm-objdump` prints, and a builtin call that emits it.
/// The call's operands are the probe's macros: `S4` (4 x bf16 bits as short), `H4`/`H8`
/// (f16 vectors), `B8` (8 x bf16, gfx950), `L8` (8 fp8 values in a long), `I8` (32 f8f6f4 bytes
/// in 8 ints), `SC` (a per-lane e8m0 scale); `c` is the f32 accumulator (16 or 4 floats).
struct Mfma {
    arch: &'static str,
    ty: DataType,
    mi: [u32; 3],
    insn: &'static str,
    call: &'static str,
}

const fn row(
    arch: &'static str,
    ty: DataType,
    mi: [u32; 3],
    insn: &'static str,
    call: &'static str,
) -> Mfma {
    Mfma {
        arch,
        ty,
        mi,
        insn,
        call,
    }
}

/// Every MFMA instruction the space can pick, per arch (see the `[matrix_instructions]`
/// comments in `hw_specs/` for the ISA guides). A type the template learns is one more entry
/// in [`TEMPLATE_TYPES`]; a new instruction is one row here plus its shape in the specs.
#[rustfmt::skip]
const MFMA: &[Mfma] = &[
    row("gfx90a", Bf16, [32, 32, 8], "v_mfma_f32_32x32x8bf16_1k", "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k(S4, S4, c, 0, 0, 0)"),
    row("gfx90a", Bf16, [16, 16, 16], "v_mfma_f32_16x16x16bf16_1k", "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k(S4, S4, c, 0, 0, 0)"),
    row("gfx90a", F16, [32, 32, 8], "v_mfma_f32_32x32x8f16", "__builtin_amdgcn_mfma_f32_32x32x8f16(H4, H4, c, 0, 0, 0)"),
    row("gfx90a", F16, [16, 16, 16], "v_mfma_f32_16x16x16f16", "__builtin_amdgcn_mfma_f32_16x16x16f16(H4, H4, c, 0, 0, 0)"),
    row("gfx942", Bf16, [32, 32, 8], "v_mfma_f32_32x32x8_bf16", "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k(S4, S4, c, 0, 0, 0)"),
    row("gfx942", Bf16, [16, 16, 16], "v_mfma_f32_16x16x16_bf16", "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k(S4, S4, c, 0, 0, 0)"),
    row("gfx942", F16, [32, 32, 8], "v_mfma_f32_32x32x8_f16", "__builtin_amdgcn_mfma_f32_32x32x8f16(H4, H4, c, 0, 0, 0)"),
    row("gfx942", F16, [16, 16, 16], "v_mfma_f32_16x16x16_f16", "__builtin_amdgcn_mfma_f32_16x16x16f16(H4, H4, c, 0, 0, 0)"),
    row("gfx942", F8, [32, 32, 16], "v_mfma_f32_32x32x16_fp8_fp8", "__builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(L8, L8, c, 0, 0, 0)"),
    row("gfx942", F8, [16, 16, 32], "v_mfma_f32_16x16x32_fp8_fp8", "__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(L8, L8, c, 0, 0, 0)"),
    row("gfx942", Bf8, [32, 32, 16], "v_mfma_f32_32x32x16_bf8_bf8", "__builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8(L8, L8, c, 0, 0, 0)"),
    row("gfx942", Bf8, [16, 16, 32], "v_mfma_f32_16x16x32_bf8_bf8", "__builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(L8, L8, c, 0, 0, 0)"),
    row("gfx950", Bf16, [32, 32, 16], "v_mfma_f32_32x32x16_bf16", "__builtin_amdgcn_mfma_f32_32x32x16_bf16(B8, B8, c, 0, 0, 0)"),
    row("gfx950", Bf16, [16, 16, 32], "v_mfma_f32_16x16x32_bf16", "__builtin_amdgcn_mfma_f32_16x16x32_bf16(B8, B8, c, 0, 0, 0)"),
    row("gfx950", Bf16, [32, 32, 8], "v_mfma_f32_32x32x8_bf16", "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k(S4, S4, c, 0, 0, 0)"),
    row("gfx950", Bf16, [16, 16, 16], "v_mfma_f32_16x16x16_bf16", "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k(S4, S4, c, 0, 0, 0)"),
    row("gfx950", F16, [32, 32, 16], "v_mfma_f32_32x32x16_f16", "__builtin_amdgcn_mfma_f32_32x32x16_f16(H8, H8, c, 0, 0, 0)"),
    row("gfx950", F16, [16, 16, 32], "v_mfma_f32_16x16x32_f16", "__builtin_amdgcn_mfma_f32_16x16x32_f16(H8, H8, c, 0, 0, 0)"),
    row("gfx950", F16, [32, 32, 8], "v_mfma_f32_32x32x8_f16", "__builtin_amdgcn_mfma_f32_32x32x8f16(H4, H4, c, 0, 0, 0)"),
    row("gfx950", F16, [16, 16, 16], "v_mfma_f32_16x16x16_f16", "__builtin_amdgcn_mfma_f32_16x16x16f16(H4, H4, c, 0, 0, 0)"),
    // f8f6f4: cbsz / blgp pick the A / B formats (0 fp8, 1 bf8); zero scales give the plain
    // form, per-lane scales the block-scaled one.
    row("gfx950", F8, [32, 32, 64], "v_mfma_f32_32x32x64_f8f6f4", "__builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(I8, I8, c, 0, 0, 0, 0, 0, 0)"),
    row("gfx950", F8, [16, 16, 128], "v_mfma_f32_16x16x128_f8f6f4", "__builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(I8, I8, c, 0, 0, 0, 0, 0, 0)"),
    row("gfx950", F8, [32, 32, 64], "v_mfma_scale_f32_32x32x64_f8f6f4", "__builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(I8, I8, c, 0, 0, 0, SC, 0, SC)"),
    row("gfx950", F8, [16, 16, 128], "v_mfma_scale_f32_16x16x128_f8f6f4", "__builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(I8, I8, c, 0, 0, 0, SC, 0, SC)"),
    row("gfx950", F8, [32, 32, 16], "v_mfma_f32_32x32x16_fp8_fp8", "__builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(L8, L8, c, 0, 0, 0)"),
    row("gfx950", F8, [16, 16, 32], "v_mfma_f32_16x16x32_fp8_fp8", "__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(L8, L8, c, 0, 0, 0)"),
    row("gfx950", Bf8, [32, 32, 64], "v_mfma_f32_32x32x64_f8f6f4", "__builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(I8, I8, c, 1, 1, 0, 0, 0, 0)"),
    row("gfx950", Bf8, [16, 16, 128], "v_mfma_f32_16x16x128_f8f6f4", "__builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(I8, I8, c, 1, 1, 0, 0, 0, 0)"),
    row("gfx950", Bf8, [32, 32, 16], "v_mfma_f32_32x32x16_bf8_bf8", "__builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8(L8, L8, c, 0, 0, 0)"),
    row("gfx950", Bf8, [16, 16, 32], "v_mfma_f32_16x16x32_bf8_bf8", "__builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(L8, L8, c, 0, 0, 0)"),
];

/// Input types the GEMM template implements: their [`MFMA`] rows are also checked in
/// generated GEMM kernels.
const TEMPLATE_TYPES: &[DataType] = &[Bf16, F16, F8, Bf8];

/// Block-scaled instructions need per-block scales, which no kernel of the space has: they
/// are checked in the probe only.
fn in_template(r: &Mfma) -> bool {
    TEMPLATE_TYPES.contains(&r.ty) && !r.insn.starts_with("v_mfma_scale_")
}

/// The AMD hw specs of an arch (MI300X and MI325X are both gfx942).
fn specs_of(arch: &str) -> Vec<HwSpec> {
    HwSpec::builtin()
        .into_iter()
        .map(|(_, s)| s)
        .filter(|s| s.vendor == Vendor::Amd && s.arch == arch)
        .collect()
}

fn type_key(t: DataType) -> &'static str {
    match t {
        Bf16 => "bf16",
        F16 => "f16",
        F8 => "f8",
        Bf8 => "bf8",
        DataType::F32 => "f32",
    }
}

#[test]
fn mfma_table_matches_the_hw_specs() {
    let archs: BTreeSet<&str> = MFMA.iter().map(|r| r.arch).collect();
    let mut spec_archs = BTreeSet::new();
    for (file, spec) in HwSpec::builtin() {
        if spec.vendor != Vendor::Amd {
            continue;
        }
        spec_archs.insert(spec.arch.clone());
        let listed: BTreeSet<(String, [u32; 3])> = spec
            .matrix_instructions
            .iter()
            .flat_map(|(t, shapes)| shapes.iter().map(move |s| (t.clone(), *s)))
            .collect();
        let table: BTreeSet<(String, [u32; 3])> = MFMA
            .iter()
            .filter(|r| r.arch == spec.arch)
            .map(|r| (type_key(r.ty).to_string(), r.mi))
            .collect();
        assert_eq!(
            listed, table,
            "{file} ({}) lists other MFMA shapes than tests/amd_isa.rs checks",
            spec.arch
        );
        assert_eq!(spec.wave_size, 64, "{file}: Instinct GPUs run wave64");
    }
    assert_eq!(
        archs,
        spec_archs.iter().map(String::as_str).collect(),
        "every AMD arch of hw_specs/ is checked, and nothing else"
    );
}

/// Skips (printing why) or fails under `GEMMTUNE_REQUIRE_TOOLCHAIN`.
fn missing(arch: &str, why: &str) {
    if std::env::var_os("GEMMTUNE_REQUIRE_TOOLCHAIN").is_some() {
        panic!("GEMMTUNE_REQUIRE_TOOLCHAIN is set but {arch} cannot be checked: {why}");
    }
    eprintln!("SKIPPED amd_isa {arch}: {why}");
}

/// The oldest LLVM whose disassembler knows each arch.
fn objdump_min_major(arch: &str) -> u32 {
    match arch {
        "gfx950" => 20,
        "gfx942" => 17,
        _ => 13,
    }
}

/// The newest `llvm-objdump` on this machine (`GEMMTUNE_OBJDUMP` overrides): the plain and
/// versioned names on `PATH`, and ROCm's. Returns the path and its LLVM major version.
fn objdump() -> Option<(PathBuf, u32)> {
    let major = |p: &PathBuf| -> Option<u32> {
        let out = Command::new(p).arg("--version").output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let v = text.split("LLVM version ").nth(1)?;
        v.split('.').next()?.trim().parse().ok()
    };
    if let Some(p) = std::env::var_os("GEMMTUNE_OBJDUMP") {
        let p = PathBuf::from(p);
        return major(&p).map(|m| (p, m));
    }
    let mut cands = vec![PathBuf::from("/opt/rocm/llvm/bin/llvm-objdump")];
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let suffix = name.strip_prefix("llvm-objdump");
                if suffix.is_some_and(|s| s.is_empty() || s[1..].parse::<u32>().is_ok()) {
                    cands.push(e.path());
                }
            }
        }
    }
    cands
        .into_iter()
        .filter(|p| p.is_file())
        .filter_map(|p| major(&p).map(|m| (p, m)))
        .max_by_key(|(_, m)| *m)
}

/// Per function of a disassembly, how often each `v_mfma*`, each LDS read (`ds_read*`) and
/// each packed 8-bit float conversion (`v_cvt_pk_f32_*`) instruction occurs.
fn insn_counts(disasm: &str) -> BTreeMap<String, BTreeMap<String, usize>> {
    let mut out: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let mut current = String::new();
    for line in disasm.lines() {
        if let Some(name) = line
            .trim_end()
            .strip_suffix(">:")
            .and_then(|l| l.split_once('<'))
        {
            current = name.1.to_string();
            continue;
        }
        let Some(op) = line.split_whitespace().next() else {
            continue;
        };
        if op.starts_with("v_mfma") || op.starts_with("ds_read") || op.starts_with("v_cvt_pk_f32_")
        {
            *out.entry(current.clone())
                .or_default()
                .entry(op.to_string())
                .or_default() += 1;
        }
    }
    out
}

/// One arch's toolchain: its compiler and a disassembler that knows it.
struct Arch {
    arch: &'static str,
    hip: HipCompiler,
    objdump: PathBuf,
    report: Vec<String>,
    started: std::time::Instant,
}

impl Arch {
    /// The toolchain for `arch`, or `None` after [`missing`] said why.
    fn open(arch: &'static str) -> Option<Arch> {
        let hip = match HipCompiler::for_arch(arch) {
            Ok(h) => h,
            Err(e) => {
                missing(arch, &e.to_string());
                return None;
            }
        };
        let objdump = match objdump() {
            Some((p, m)) if m >= objdump_min_major(arch) => p,
            Some((p, m)) => {
                missing(
                    arch,
                    &format!(
                        "{} is LLVM {m}; disassembling {arch} needs LLVM {}+",
                        p.display(),
                        objdump_min_major(arch)
                    ),
                );
                return None;
            }
            None => {
                missing(arch, "no llvm-objdump found (set GEMMTUNE_OBJDUMP)");
                return None;
            }
        };
        let me = Arch {
            arch,
            hip,
            objdump,
            report: Vec::new(),
            started: std::time::Instant::now(),
        };
        // A compiler that does not know the arch at all is a missing toolchain, not a
        // failing kernel (Debian's hipcc 5.2 stops at gfx90a).
        let empty = "#include <hip/hip_runtime.h>\nextern \"C\" __global__ void gt_empty() {}\n";
        if let Err(e) = me.compile("gt_empty", empty) {
            let first = e
                .to_string()
                .lines()
                .find(|l| l.contains("error"))
                .unwrap_or("")
                .to_string();
            missing(
                arch,
                &format!("{} cannot compile for it: {first}", me.hip.id()),
            );
            return None;
        }
        Some(me)
    }

    fn target(&self) -> Target {
        Target::arch(Vendor::Amd, self.arch)
    }

    fn compile(&self, symbol: &str, text: &str) -> Result<Vec<u8>, CompileError> {
        let src = common::kernels::single_wave_source(symbol, text.to_string());
        self.hip
            .compile(&src, &self.target())
            .map(|(code, _)| code.bytes)
    }

    /// The MFMA counts per function of a code object, and its metadata per kernel.
    fn inspect(
        &self,
        code: &[u8],
    ) -> (BTreeMap<String, BTreeMap<String, usize>>, Vec<KernelUsage>) {
        let elf = code_object::device_elf(code).expect("the code object holds an amdgcn ELF");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kernel.elf");
        std::fs::write(&path, elf).unwrap();
        let out = Command::new(&self.objdump)
            .arg("-d")
            .arg(format!("--mcpu={}", self.arch))
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{} failed: {}",
            self.objdump.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let usage = code_object::kernel_usage(code).expect("the code object has metadata");
        (insn_counts(&String::from_utf8_lossy(&out.stdout)), usage)
    }

    /// Fails unless the kernel spills nothing, uses no scratch, and runs wave64 as the
    /// arch's specs say.
    fn check_usage(&self, u: &KernelUsage, what: &str) -> Vec<String> {
        let mut bad = Vec::new();
        if u.vgpr_spills + u.sgpr_spills > 0 || u.scratch_bytes > 0 {
            bad.push(format!(
                "{what}: {} VGPR / {} SGPR spills, {} scratch bytes per lane",
                u.vgpr_spills, u.sgpr_spills, u.scratch_bytes
            ));
        }
        for spec in specs_of(self.arch) {
            if u.wavefront_size != spec.wave_size {
                bad.push(format!(
                    "{what}: compiled for wave{}, {} says wave{}",
                    u.wavefront_size, spec.name, spec.wave_size
                ));
            }
        }
        bad
    }

    fn note(&mut self, line: String) {
        println!("{line}");
        self.report.push(line);
    }

    /// Appends this arch's lines to `GEMMTUNE_ISA_REPORT` in one write.
    fn write_report(&self) {
        let Some(path) = std::env::var_os("GEMMTUNE_ISA_REPORT") else {
            return;
        };
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("GEMMTUNE_ISA_REPORT {path:?}: {e}"));
        let mut text = format!(
            "== {} ({}; {}; {:.0} s)\n",
            self.arch,
            self.hip.id(),
            self.objdump.display(),
            self.started.elapsed().as_secs_f64()
        );
        for l in &self.report {
            text.push_str(l);
            text.push('\n');
        }
        f.write_all(text.as_bytes()).unwrap();
    }
}

/// One kernel per [`MFMA`] row of the arch, each calling the row's builtin.
fn probe_source(arch: &str) -> (String, Vec<(String, &'static Mfma)>) {
    let mut text = String::from(
        "#include <hip/hip_runtime.h>\n\
         typedef short gt_s4 __attribute__((ext_vector_type(4)));\n\
         typedef _Float16 gt_h4 __attribute__((ext_vector_type(4)));\n\
         typedef _Float16 gt_h8 __attribute__((ext_vector_type(8)));\n\
         typedef int gt_i8 __attribute__((ext_vector_type(8)));\n\
         typedef float gt_f4 __attribute__((ext_vector_type(4)));\n\
         typedef float gt_f16 __attribute__((ext_vector_type(16)));\n\
         #if defined(__gfx950__)\n\
         typedef __bf16 gt_b8 __attribute__((ext_vector_type(8)));\n\
         #endif\n\
         #define GT_LD(T) (reinterpret_cast<const T*>(in)[threadIdx.x])\n\
         #define S4 GT_LD(gt_s4)\n#define H4 GT_LD(gt_h4)\n#define H8 GT_LD(gt_h8)\n\
         #define B8 GT_LD(gt_b8)\n#define L8 GT_LD(long)\n#define I8 GT_LD(gt_i8)\n\
         #define SC (scale[threadIdx.x])\n",
    );
    let mut kernels = Vec::new();
    for (i, r) in MFMA.iter().filter(|r| r.arch == arch).enumerate() {
        let name = format!("gt_probe_{i}");
        let regs = r.mi[0] * r.mi[1] / 64;
        text.push_str(&format!(
            "extern \"C\" __global__ void __launch_bounds__(64) {name}(float* out, const void* in, \
             const int* scale) {{\n    gt_f{regs} c = {{}};\n    c = {};\n    \
             for (int i = 0; i < {regs}; ++i) out[threadIdx.x * {regs} + i] = c[i];\n}}\n",
            r.call
        ));
        kernels.push((name, r));
    }
    (text, kernels)
}

/// The GEMM config checked for a row: a 128x128 tile of four waves, its depth the larger of
/// 32 and the instruction's K; layouts cycle so both LDS read paths of the atoms compile.
fn gemm_case(r: &Mfma, i: usize) -> (GemmProblem, KernelConfig) {
    let spec = &specs_of(r.arch)[0];
    let layout = ["TN", "NN", "NT", "TT"][i % 4];
    // 16-bit inputs write their own type; 8-bit inputs write bf16.
    let out = if r.ty.bytes() == 1 { Bf16 } else { r.ty };
    let p = common::kernels::problem(4096, 512, 4096, layout, r.ty, out, 0.0, 1);
    let base = KernelConfig::parse(
        "MT128x128x32_MI32x32x8_WG2x2_PGR2_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0",
    )
    .expect("a valid kernel name");
    let c = KernelConfig {
        depth_u: 32.max(r.mi[2]),
        mi: r.mi,
        ..base
    };
    let c = Space::for_problem(&p, spec).repair(&c).unwrap_or(c);
    if let Err(v) = constraints::check(&c, &p, spec) {
        panic!(
            "{} is invalid for {} on {}: {v}",
            c.name(),
            p.label(),
            spec.name
        );
    }
    assert_eq!(c.mi, r.mi, "repair changed the instruction of {}", c.name());
    (p, c)
}

/// `c` with TransposeLDS on, the transposed operands unpadded, checked valid for `p`; `None`
/// where `p` has no operand to transpose.
fn transpose_lds(c: &KernelConfig, p: &GemmProblem, arch: &str) -> Option<KernelConfig> {
    let t = common::kernels::with_transpose_lds(c, p)?;
    let spec = &specs_of(arch)[0];
    if let Err(v) = constraints::check(&t, p, spec) {
        panic!(
            "{} is invalid for {} on {}: {v}",
            t.name(),
            p.label(),
            spec.name
        );
    }
    Some(t)
}

/// LDS reads of fewer than 4 bytes (`ds_read_u8`, `ds_read_u16_d16_hi`, ...): one element of
/// a 16- or 8-bit operand per read.
fn narrow_lds_reads(counts: &BTreeMap<String, usize>) -> usize {
    counts
        .iter()
        .filter(|(op, _)| {
            ["ds_read_u8", "ds_read_i8", "ds_read_u16", "ds_read_i16"]
                .iter()
                .any(|n| op.starts_with(n))
        })
        .map(|(_, n)| n)
        .sum()
}

fn check_arch(arch: &'static str) {
    let Some(mut a) = Arch::open(arch) else {
        return;
    };
    let mut failures: Vec<String> = Vec::new();

    // Every instruction of the table, through its builtin.
    let (probe, kernels) = probe_source(arch);
    match a.compile("gt_probe_0", &probe) {
        Err(e) => failures.push(format!("the {arch} MFMA probe does not compile: {e}")),
        Ok(code) => {
            let (counts, usage) = a.inspect(&code);
            for (name, r) in &kernels {
                let n = counts
                    .get(name)
                    .and_then(|c| c.get(r.insn))
                    .copied()
                    .unwrap_or(0);
                a.note(format!(
                    "{arch} probe {:>4} {:>3}x{}x{:<3} {:<34} x{n}",
                    type_key(r.ty),
                    r.mi[0],
                    r.mi[1],
                    r.mi[2],
                    r.insn
                ));
                if n == 0 {
                    failures.push(format!(
                        "{arch}: {} did not emit {} (found {:?})",
                        r.call,
                        r.insn,
                        counts.get(name)
                    ));
                }
            }
            for u in &usage {
                failures.extend(a.check_usage(u, &format!("{arch} {}", u.name)));
            }
        }
    }

    // GEMM kernels from the template: one per instruction, and where the arch has 8-bit
    // instructions, the two mixes of e4m3 and e5m2 (one instruction each, named A's format
    // first).
    let mut cases: Vec<(GemmProblem, KernelConfig, &str)> = MFMA
        .iter()
        .filter(|r| r.arch == arch && in_template(r))
        .enumerate()
        .map(|(i, r)| {
            let (p, c) = gemm_case(r, i);
            (p, c, r.insn)
        })
        .collect();
    let fp8 = MFMA
        .iter()
        .find(|r| r.arch == arch && r.ty == F8 && r.mi == [32, 32, 16]);
    if let Some(r) = fp8 {
        for (ta, tb, insn) in [
            (F8, Bf8, "v_mfma_f32_32x32x16_fp8_bf8"),
            (Bf8, F8, "v_mfma_f32_32x32x16_bf8_fp8"),
        ] {
            let (mut p, c) = gemm_case(r, 0);
            (p.a_type, p.b_type) = (ta, tb);
            cases.push((p, c, insn));
        }
    }
    // The GEMV path on 8-bit inputs converts them two at a time with the arch's own
    // instruction (FNUZ on gfx942, OCP on gfx950), e4m3 and e5m2 alike.
    if fp8.is_some() {
        let gemv = KernelConfig::parse(
            "MT16x1x16_MI1x1x1_WG4x1_PGR2_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW16_SVW1_SU0_GV1",
        )
        .expect("a valid kernel name");
        for (ta, insn) in [(F8, "v_cvt_pk_f32_fp8_e32"), (Bf8, "v_cvt_pk_f32_bf8_e32")] {
            let mut p = common::kernels::problem(4096, 1, 4096, "TN", ta, Bf16, 0.0, 1);
            p.b_type = F8;
            if let Err(v) = constraints::check(&gemv, &p, &specs_of(arch)[0]) {
                panic!("{} is invalid for {}: {v}", gemv.name(), p.label());
            }
            cases.push((p, gemv, insn));
        }
    }
    // Every layout with an M- or N-contiguous operand once more with TransposeLDS: that
    // operand is then read from LDS in vectors, so the kernel has no LDS read narrower than
    // 4 bytes, where the same kernel without it gathers (one read per element).
    let transposed: Vec<(GemmProblem, KernelConfig, &str)> = cases
        .iter()
        .filter_map(|(p, c, insn)| Some((p.clone(), transpose_lds(c, p, arch)?, *insn)))
        .collect();
    let mut gathers: BTreeMap<(String, bool), usize> = BTreeMap::new();
    for (p, c, insn) in cases.into_iter().chain(transposed) {
        let src = codegen::generate(&c, &p, &a.target());
        let what = format!("{arch} {} {}", c.name(), p.label());
        let code = match a.compile(&src.launch.symbol, &src.text) {
            Ok(code) => code,
            Err(e) => {
                failures.push(format!("{what}: {e}"));
                continue;
            }
        };
        let (counts, usage) = a.inspect(&code);
        let mine = counts.get(&src.launch.symbol).cloned().unwrap_or_default();
        let u = usage
            .iter()
            .find(|u| u.name == src.launch.symbol)
            .cloned()
            .unwrap_or_default();
        let listed: Vec<String> = mine.iter().map(|(k, n)| format!("{k} x{n}")).collect();
        a.note(format!(
            "{arch} gemm  {} {}: {} | VGPR {} AGPR {} SGPR {} spills {}/{} scratch {}",
            c.name(),
            p.label(),
            listed.join(", "),
            u.vgprs,
            u.agprs,
            u.sgprs,
            u.vgpr_spills,
            u.sgpr_spills,
            u.scratch_bytes
        ));
        if !mine.contains_key(insn) {
            failures.push(format!("{what}: no {insn} in the kernel (found {mine:?})"));
        }
        let narrow = narrow_lds_reads(&mine);
        if !p.k_contiguous(true) || !p.k_contiguous(false) {
            let key = (format!("{} {}", p.label(), insn), c.tlds == 1);
            *gathers.entry(key).or_default() += narrow;
        }
        if c.tlds == 1 && narrow > 0 {
            failures.push(format!(
                "{what}: TransposeLDS left {narrow} LDS reads narrower than 4 bytes ({mine:?})"
            ));
        }
        if u.name.is_empty() {
            failures.push(format!("{what}: no metadata for {}", src.launch.symbol));
        }
        failures.extend(a.check_usage(&u, &what));
    }

    // The check above can fail: without TransposeLDS the same kernels gather.
    for ((what, tlds), narrow) in &gathers {
        if !tlds && *narrow == 0 {
            failures.push(format!(
                "{arch} {what}: no narrow LDS reads without TransposeLDS either; the check tests nothing"
            ));
        }
    }

    // The LDS limit of the specs is exactly what the compiler accepts.
    for spec in specs_of(arch) {
        let lds = spec.lds_bytes_per_workgroup;
        for (bytes, fits) in [(lds, true), (lds + 4, false)] {
            let text = format!(
                "#include <hip/hip_runtime.h>\n\
                 extern \"C\" __global__ void gt_lds(int* out) {{\n\
                 __shared__ int s[{}];\n\
                 s[threadIdx.x] = threadIdx.x;\n__syncthreads();\n\
                 out[threadIdx.x] = s[(threadIdx.x * 977) % {}];\n}}\n",
                bytes / 4,
                bytes / 4
            );
            let got = a.compile("gt_lds", &text);
            a.note(format!(
                "{arch} LDS {bytes} bytes ({} allows {lds}): {}",
                spec.name,
                if got.is_ok() { "accepted" } else { "rejected" }
            ));
            match (got, fits) {
                (Ok(_), false) => failures.push(format!(
                    "{arch}: {bytes} bytes of LDS compile, above {}'s {lds}",
                    spec.name
                )),
                (Err(e), true) => failures.push(format!(
                    "{arch}: {}'s {lds} bytes of LDS do not compile: {e}",
                    spec.name
                )),
                (Err(CompileError::Failed { log }), false) if !log.contains("local memory") => {
                    failures.push(format!(
                        "{arch}: {bytes} bytes rejected for another reason: {log}"
                    ))
                }
                _ => {}
            }
        }
    }
    a.write_report();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn gfx90a_machine_code() {
    check_arch("gfx90a");
}

#[test]
fn gfx942_machine_code() {
    check_arch("gfx942");
}

#[test]
fn gfx950_machine_code() {
    check_arch("gfx950");
}

#[test]
fn insn_counts_read_functions_and_exact_names() {
    let disasm = "\
0000000000001900 <gt_probe_0>:
\tv_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[16:23], 0 // 000000001900: D3AE0000
\tv_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[16:23], v[0:15], v24, v24
\ts_endpgm

0000000000001a00 <gt_probe_1>:
\tv_mfma_f32_16x16x16_bf16 v[0:3], v[4:5], v[4:5], 0
\tv_mfma_f32_16x16x16_bf16 v[0:3], v[4:5], v[4:5], v[0:3]
\tds_read_b64 v[6:7], v8 offset:64
\tv_add_u32_e32 v1, v2, v3
";
    let c = insn_counts(disasm);
    assert_eq!(c["gt_probe_0"]["v_mfma_f32_32x32x64_f8f6f4"], 1);
    assert_eq!(c["gt_probe_0"]["v_mfma_scale_f32_32x32x64_f8f6f4"], 1);
    assert_eq!(c["gt_probe_1"]["v_mfma_f32_16x16x16_bf16"], 2);
    assert_eq!(c["gt_probe_1"]["ds_read_b64"], 1);
    assert_eq!(c["gt_probe_1"].len(), 2);
    assert_eq!(c.len(), 2);
}
