//! Ahead-of-time kernels: the code objects build.rs compiled from `kernels/default_set.txt`
//! (and the reference kernels), embedded in the binary so a common config runs without a
//! runtime compiler.
//!
//! Flow: `kernels/default_set.txt` (blocks of `#define`s exactly as [`codegen::defines`]
//! writes them) -> build.rs (nvcc / hipcc, when found) -> `$OUT_DIR/aot_kernels.rs` ->
//! [`lookup`] by (arch, defines). A build without toolchains embeds nothing; lookups miss.

use super::codegen::KernelSource;
use super::{CodeFormat, CodeObject, CompileError, Compiler, Resources, Target};

/// One embedded kernel.
#[derive(Debug)]
pub struct AotKernel {
    pub arch: &'static str,
    pub name: &'static str,
    pub defines: &'static str,
    pub code: &'static [u8],
    pub registers: Option<u32>,
    pub spill_bytes: Option<u32>,
}

mod generated {
    use super::AotKernel;
    include!(concat!(env!("OUT_DIR"), "/aot_kernels.rs"));
}

/// The kernels of the default set compiled into this binary.
pub fn kernels() -> &'static [AotKernel] {
    generated::AOT_KERNELS
}

/// The compiler that built the embedded objects (`nvcc-13.0.88`), if any were built.
pub fn compiler_id() -> Option<&'static str> {
    generated::AOT_COMPILER
}

/// The embedded reference/fill/compare module for `arch`, if the build made one.
pub fn reference_object(arch: &str) -> Option<&'static [u8]> {
    generated::AOT_REFERENCE
        .iter()
        .find(|(a, _)| *a == arch)
        .map(|(_, code)| *code)
}

/// The embedded object for exactly this generated kernel and target, if any.
pub fn lookup(source: &KernelSource, target: &Target) -> Option<(CodeObject, Resources)> {
    let k = kernels()
        .iter()
        .find(|k| k.arch == target.arch && k.name == source.name && k.defines == source.defines)?;
    let format = if k.arch.starts_with("gfx") {
        CodeFormat::Hsaco
    } else {
        CodeFormat::Cubin
    };
    Some((
        CodeObject {
            format,
            bytes: k.code.to_vec(),
        },
        Resources {
            registers: k.registers,
            spill_bytes: k.spill_bytes,
            static_shared_bytes: None,
        },
    ))
}

/// A compiler that serves embedded objects first and compiles the rest with `inner`.
pub struct AotFirst<C: Compiler> {
    pub inner: C,
}

impl<C: Compiler> Compiler for AotFirst<C> {
    fn id(&self) -> String {
        // Embedded objects come from the same kernel sources (same build), so a cache entry
        // is valid for either; the id still says both compilers were in play.
        match compiler_id() {
            Some(aot) => format!("{}+aot-{aot}", self.inner.id()),
            None => self.inner.id(),
        }
    }

    fn compile(
        &self,
        source: &KernelSource,
        target: &Target,
    ) -> Result<(CodeObject, Resources), CompileError> {
        match lookup(source, target) {
            Some(hit) => Ok(hit),
            None => self.inner.compile(source, target),
        }
    }
}

/// One block of `kernels/default_set.txt`: a header naming the problem and target, then the
/// `#define` lines. Header: `@ <vendor> <arch> <M> <N> <K> <layout> <dtype> <beta> <config>`.
#[derive(Debug, Clone, PartialEq)]
pub struct DefaultEntry {
    pub vendor: String,
    pub arch: String,
    pub problem: crate::problem::GemmProblem,
    pub config: String,
    pub defines: String,
}

/// Parses `kernels/default_set.txt` (lines starting with `//` are comments).
pub fn parse_default_set(text: &str) -> Result<Vec<DefaultEntry>, String> {
    let mut out: Vec<DefaultEntry> = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        if let Some(h) = t.strip_prefix("@ ") {
            let f: Vec<&str> = h.split_whitespace().collect();
            let bad = |why: &str| format!("default_set.txt:{}: {why}", no + 1);
            if f.len() != 9 {
                return Err(bad("header needs 9 fields"));
            }
            let num = |s: &str| s.parse::<i64>().map_err(|_| bad("bad number"));
            let mut p = crate::problem::GemmProblem::new(num(f[2])?, num(f[3])?, num(f[4])?);
            let layout: Vec<char> = f[5].chars().collect();
            if layout.len() != 2 {
                return Err(bad("layout must be two letters"));
            }
            p.trans_a = layout[0]
                .to_string()
                .parse()
                .map_err(|_| bad("bad layout"))?;
            p.trans_b = layout[1]
                .to_string()
                .parse()
                .map_err(|_| bad("bad layout"))?;
            let t: crate::problem::DataType = f[6].parse().map_err(|_| bad("bad dtype"))?;
            (p.a_type, p.b_type, p.c_type, p.d_type) = (t, t, t, t);
            p.beta = f[7].parse().map_err(|_| bad("bad beta"))?;
            p.lda = 0;
            p.ldb = 0;
            p.ldc = 0;
            p.ldd = 0;
            p.fill_defaults();
            out.push(DefaultEntry {
                vendor: f[0].to_string(),
                arch: f[1].to_string(),
                problem: p,
                config: f[8].to_string(),
                defines: String::new(),
            });
        } else if let Some(e) = out.last_mut() {
            e.defines.push_str(t);
            e.defines.push('\n');
        } else {
            return Err(format!(
                "default_set.txt:{}: text before the first header",
                no + 1
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::codegen;
    use crate::hw::Vendor;
    use crate::space::KernelConfig;

    const DEFAULT_SET: &str = include_str!("../../kernels/default_set.txt");

    /// The data file build.rs compiles must be exactly what codegen generates, or the embedded
    /// objects would silently never match a lookup.
    #[test]
    fn default_set_matches_codegen() {
        let entries = parse_default_set(DEFAULT_SET).unwrap();
        assert!(!entries.is_empty());
        for e in entries {
            let cfg = KernelConfig::parse(&e.config).unwrap();
            let vendor = match e.vendor.as_str() {
                "nvidia" => Vendor::Nvidia,
                "amd" => Vendor::Amd,
                other => panic!("unknown vendor {other}"),
            };
            let target = Target::arch(vendor, e.arch.clone());
            assert_eq!(
                e.defines,
                codegen::defines(&cfg, &e.problem, &target),
                "{} drifted from codegen; regenerate kernels/default_set.txt",
                e.config
            );
            let hw = match vendor {
                Vendor::Nvidia => crate::hw::HwSpec::by_name("H200").unwrap(),
                Vendor::Amd => crate::hw::HwSpec::by_name("MI300X").unwrap(),
            };
            crate::space::Space::for_problem(&e.problem, &hw)
                .check(&cfg)
                .unwrap_or_else(|v| panic!("{} is not valid: {v}", e.config));
        }
    }

    /// Blocks of one config name but other defines (layouts, types, beta) are different
    /// kernels: each must embed its own object, not whichever block compiled last.
    #[test]
    fn every_embedded_kernel_is_its_own_object() {
        let all = kernels();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                if a.arch == b.arch && a.defines != b.defines {
                    assert_ne!(
                        a.code, b.code,
                        "{} and {} ({}) embed the same object",
                        a.name, b.name, a.arch
                    );
                }
            }
        }
        // With the toolchains required for named archs (CI), every block of those was built.
        let required = std::env::var("GEMMTUNE_REQUIRE_TOOLCHAIN").as_deref() == Ok("1");
        if let (true, Ok(archs)) = (required, std::env::var("GEMMTUNE_ARCHS")) {
            let expected = parse_default_set(DEFAULT_SET)
                .unwrap()
                .iter()
                .filter(|e| archs.split(',').any(|a| a == e.arch))
                .count();
            assert_eq!(all.len(), expected, "a default kernel did not compile");
        }
    }

    /// The problems whose default configs form the default set (vendor, arch, problem).
    fn default_problems() -> Vec<(&'static str, &'static str, &'static str)> {
        vec![
            ("nvidia", "sm_90a", "16032 109 16384 TN bf16 0"),
            ("nvidia", "sm_90a", "4096 4096 4096 NN bf16 0"),
            ("nvidia", "sm_90a", "1024 1024 1024 NT bf16 1"),
            ("nvidia", "sm_90a", "512 512 512 TT f16 0"),
            ("nvidia", "sm_90a", "1024 1024 1024 NN f32 0"),
        ]
    }

    /// `GEMMTUNE_BLESS=1 cargo test --lib bless_default_set` rewrites kernels/default_set.txt
    /// from the space's default config of each problem above; otherwise it does nothing.
    #[test]
    fn bless_default_set() {
        if std::env::var("GEMMTUNE_BLESS").as_deref() != Ok("1") {
            return;
        }
        let mut text = String::from(
            "// The kernels build.rs compiles ahead of time (when nvcc / hipcc is found) and embeds.\n\
             // Each block: `@ <vendor> <arch> <M> <N> <K> <layout> <dtype> <beta> <config name>`,\n\
             // then the #define lines codegen::defines writes for it (a unit test checks they match).\n\
             // Regenerate: GEMMTUNE_BLESS=1 cargo test --lib bless_default_set\n",
        );
        for (vendor, arch, spec) in default_problems() {
            let entry = parse_default_set(&format!("@ {vendor} {arch} {spec} MT16x16x16_MI1x1x1_WG1x1_PGR1_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW1_SVW1_SU0\n")).unwrap();
            let p = &entry[0].problem;
            let hw = crate::hw::HwSpec::by_name(if vendor == "nvidia" { "H200" } else { "MI300X" })
                .unwrap();
            let cfg = crate::space::Space::for_problem(p, &hw)
                .default_config()
                .unwrap();
            let target = Target::arch(hw.vendor, arch);
            text.push_str(&format!("\n@ {vendor} {arch} {spec} {}\n", cfg.name()));
            text.push_str(&codegen::defines(&cfg, p, &target));
        }
        std::fs::write(
            concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/default_set.txt"),
            text,
        )
        .unwrap();
    }

    #[test]
    fn malformed_default_sets_are_rejected() {
        assert!(parse_default_set("#define X 1\n").is_err());
        assert!(parse_default_set("@ nvidia sm_90a 1 2\n").is_err());
        assert!(parse_default_set("@ nvidia sm_90a 1 2 3 XY bf16 0 N\n").is_err());
    }
}
