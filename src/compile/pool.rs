//! Parallel compilation: a batch of configs compiled on all CPU cores (rayon), each result
//! kept per config in input order.

use rayon::prelude::*;

use super::cache::CompileCache;
use super::{build_one, CompileError, CompiledKernel, Compiler, Target};
use crate::problem::GemmProblem;
use crate::space::KernelConfig;

/// Compiles every config; `threads = 0` uses all cores.
pub fn compile_batch(
    compiler: &dyn Compiler,
    configs: &[KernelConfig],
    problem: &GemmProblem,
    target: &Target,
    cache: Option<&CompileCache>,
    threads: usize,
) -> Vec<Result<CompiledKernel, CompileError>> {
    let run = || {
        configs
            .par_iter()
            .map(|c| build_one(compiler, c, problem, target, cache))
            .collect()
    };
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    }
}
