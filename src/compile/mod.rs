//! Kernel compilation: source generation from a [`KernelConfig`], compiler drivers, a disk
//! cache, and a parallel pool.
//!
//! Flow: `(config, problem, target)` -> [`codegen`] produces HIP C++ source plus a
//! [`LaunchPlan`] -> a [`Compiler`] (NVRTC/nvcc on NVIDIA, hipcc/hiprtc on AMD, or the sim
//! compiler) produces a [`CodeObject`] -> [`cache`] stores it keyed by template hash, compiler
//! version, arch and canonical name -> [`pool::compile_batch`] does many at once on all cores.
//! A compile error is a per-config result (its stderr is kept), never a harness error.

pub mod amd;
pub mod aot;
pub mod cache;
pub mod codegen;
pub mod nvidia;
pub mod pool;
pub mod sim;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::problem::GemmProblem;
use crate::space::KernelConfig;
use crate::target::DeviceInfo;
pub use crate::target::{target_for, Target};

/// The compiler's verdict on one config.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CompileError {
    /// The compiler rejected the source; `log` is its full message.
    #[error("compilation failed: {log}")]
    Failed { log: String },
    /// The compiler itself could not be found or started.
    #[error("compiler unavailable: {0}")]
    Unavailable(String),
}

/// Machine-code formats a device can load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodeFormat {
    Ptx,
    Cubin,
    Hsaco,
    /// No machine code: the sim backend models the kernel from its config.
    Sim,
}

/// Compiled code for one kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeObject {
    pub format: CodeFormat,
    #[serde(with = "hex_bytes")]
    pub bytes: Vec<u8>,
}

/// How to launch a generated kernel (derived from config and problem by [`codegen`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchPlan {
    /// Symbol of the main GEMM kernel (`extern "C"`).
    pub symbol: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Dynamic LDS / shared memory bytes.
    pub shared_bytes: u32,
    /// f32 workspace bytes (split-K); 0 when none.
    pub workspace_bytes: u64,
    /// Whether the workspace must be zeroed before the main kernel (atomic split-K).
    pub zero_workspace: bool,
    /// Bytes of split-K and stream-K arrival flags: a buffer the backend zeroes once when it
    /// allocates it and passes as `flags`; every complete launch leaves it zero again. 0 when
    /// none.
    #[serde(default)]
    pub flags_bytes: u64,
    /// The A and B boxes when the kernel loads its tiles through the tensor memory
    /// accelerator: the backend then encodes a tensor map of A and of B into the arguments of
    /// every launch.
    #[serde(default)]
    pub tma: Option<[TmaBox; 2]>,
    /// The box in which the kernel stores its output tiles through a tensor map of D ((M, N,
    /// batch), `inner` elements of M by `outer` of N): the persistent kernel, and data-parallel
    /// warpgroup tiles where D allows; the backend encodes the map into the arguments.
    #[serde(default)]
    pub tma_d: Option<TmaBox>,
    /// Whether the kernel is persistent (PersistentKernel): its workgroups walk the tiles, so
    /// the backend may launch fewer than `grid` ([`LaunchPlan::grid_at_once`]). Every other
    /// kernel computes one tile (and split) per workgroup and needs its whole grid.
    #[serde(default)]
    pub persistent: bool,
    /// The box in which such a kernel loads C where beta reads it: a tensor map of C, laid
    /// out as D's (C and D share a type), in D's boxes.
    #[serde(default)]
    pub tma_c: Option<TmaBox>,
    /// Second kernel that turns the split-K workspace into D (reduction / alpha-beta).
    pub epilogue: Option<EpiloguePlan>,
    /// Kernels that pack an operand K-major into the workspace before the main kernel (A
    /// first); the main kernel reads the packed copy.
    #[serde(default)]
    pub packs: Vec<PackPlan>,
}

/// One operand-packing launch: `<name>_pack_a` or `_pack_b`, taking the GEMM's arguments and
/// the address of its packed copy, `workspace_offset` bytes into the workspace, after the
/// split-K partials. The main kernel then gets that address, the packed leading dimension and
/// stride (GemmProblem::with_packed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackPlan {
    pub is_a: bool,
    pub symbol: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub workspace_offset: u64,
    pub bytes: u64,
    /// Whether the copy is M- or N-major (the FMA path's PackMNMajor); else K-major.
    pub mn_major: bool,
    /// The copy's leading dimension and batch stride, in elements: what the main kernel
    /// reads the operand with.
    pub ld: i64,
    pub stride: i64,
}

impl LaunchPlan {
    /// The grid to launch where `at_once` workgroups fit on the GPU at once in whole clusters
    /// (None: no clusters): a persistent kernel no more than that, or its last clusters would
    /// run after the others instead of beside them; any other kernel its whole grid, or the
    /// tiles past `at_once` would never be computed.
    pub fn grid_at_once(&self, at_once: Option<u32>) -> [u32; 3] {
        let mut grid = self.grid;
        if let Some(most) = at_once.filter(|&most| self.persistent && most < grid[0]) {
            grid[0] = most;
        }
        grid
    }

    /// Workspace bytes the launch needs: the split-K partials and the packed operands.
    pub fn workspace_total(&self) -> u64 {
        self.packs
            .iter()
            .map(|p| p.workspace_offset + p.bytes)
            .fold(self.workspace_bytes, u64::max)
    }
}

/// One operand's tensor-map box: `inner` elements along the operand's contiguous dimension
/// (K when `k_major`, else M or N) by `outer` along the other, landing in shared memory with a
/// swizzle `swizzle_bytes` wide (the layouts of kernels/layout/gt_wgmma_tile.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TmaBox {
    pub k_major: bool,
    pub inner: u32,
    pub outer: u32,
    pub swizzle_bytes: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpiloguePlan {
    pub symbol: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

/// What the compiler reported about resources (NVIDIA: ptxas -v; AMD: the code object's notes).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    pub registers: Option<u32>,
    pub spill_bytes: Option<u32>,
    pub static_shared_bytes: Option<u32>,
}

/// One kernel ready to load and launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompiledKernel {
    pub config: KernelConfig,
    pub name: String,
    pub code: CodeObject,
    pub launch: LaunchPlan,
    pub resources: Resources,
    pub compile_ms: f64,
    pub cache_hit: bool,
}

/// A compiler driver. Implementations must be usable from many threads at once.
pub trait Compiler: Send + Sync {
    /// Name and version, part of the cache key and the database key (`nvrtc-13.0`).
    fn id(&self) -> String;
    /// Compiles generated source for `target`.
    fn compile(
        &self,
        source: &codegen::KernelSource,
        target: &Target,
    ) -> Result<(CodeObject, Resources), CompileError>;
}

/// Generates, compiles (or fetches from the cache) one config.
pub fn build_one(
    compiler: &dyn Compiler,
    cfg: &KernelConfig,
    problem: &GemmProblem,
    target: &Target,
    cache: Option<&cache::CompileCache>,
) -> Result<CompiledKernel, CompileError> {
    let source = codegen::generate(cfg, problem, target);
    let key = cache::CacheKey::new(&source, &compiler.id(), target, &cfg.name());
    let start = std::time::Instant::now();
    if let Some(hit) = cache.and_then(|c| c.get(&key)) {
        return Ok(CompiledKernel {
            config: *cfg,
            name: cfg.name(),
            code: hit.0,
            launch: source.launch.clone(),
            resources: hit.1,
            compile_ms: start.elapsed().as_secs_f64() * 1e3,
            cache_hit: true,
        });
    }
    let (code, resources) = compiler.compile(&source, target)?;
    if let Some(c) = cache {
        // A cache that cannot be written only costs a recompile next time.
        let _ = c.put(&key, &code, &resources);
    }
    Ok(CompiledKernel {
        config: *cfg,
        name: cfg.name(),
        code,
        launch: source.launch,
        resources,
        compile_ms: start.elapsed().as_secs_f64() * 1e3,
        cache_hit: false,
    })
}

/// Serialises code bytes as a hex string so kernels travel in JSON lines to the worker.
mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        let mut out = String::with_capacity(bytes.len() * 2);
        for b in bytes {
            out.push_str(&format!("{b:02x}"));
        }
        s.serialize_str(&out)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        if s.len() % 2 != 0 {
            return Err(serde::de::Error::custom("odd hex length"));
        }
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(serde::de::Error::custom))
            .collect()
    }
}

/// The compiler that serves a device's backend: the embedded ahead-of-time kernels first,
/// then the run-time compiler (NVRTC on NVIDIA; hiprtc on AMD, or ROCm's hipcc / amdclang++
/// where hiprtc is missing). `GEMMTUNE_COMPILER=nvcc|hipcc` picks the compiler binary instead,
/// and so does naming a HIP compiler in `GEMMTUNE_HIP_COMPILER[_<ARCH>]` ([`amd::toolchain`]).
pub fn compiler_for(
    info: &DeviceInfo,
    plants: &[crate::plant::Plant],
) -> Result<Box<dyn Compiler>, CompileError> {
    let wanted = std::env::var("GEMMTUNE_COMPILER").unwrap_or_default();
    let hip_named = [
        amd::toolchain::arch_var(&info.arch),
        amd::toolchain::COMPILER_VAR.to_string(),
    ]
    .iter()
    .any(|v| std::env::var(v).is_ok_and(|c| !c.trim().is_empty()));
    match info.backend.as_str() {
        // Simulated and replayed devices need no machine code.
        "sim" | "replay" => Ok(Box::new(sim::SimCompiler {
            plants: plants.to_vec(),
        })),
        "cuda" if wanted == "nvcc" => Ok(Box::new(aot::AotFirst {
            inner: nvidia::NvccCompiler::find()?,
        })),
        "cuda" => Ok(Box::new(aot::AotFirst {
            inner: nvidia::NvrtcCompiler::new()?,
        })),
        "hip" if wanted == "hipcc" || hip_named => Ok(Box::new(aot::AotFirst {
            inner: amd::HipCompiler::for_arch(&info.arch)?,
        })),
        "hip" => match amd::HiprtcCompiler::load() {
            Ok(rtc) => Ok(Box::new(aot::AotFirst { inner: rtc })),
            Err(_) => Ok(Box::new(aot::AotFirst {
                inner: amd::HipCompiler::for_arch(&info.arch)?,
            })),
        },
        other => Err(CompileError::Unavailable(format!(
            "no compiler for the {other} backend"
        ))),
    }
}
