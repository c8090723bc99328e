//! The evaluator: turns a batch of configs into outcomes.
//!
//! The driver hands each validated batch to an [`Evaluator`] and gets one [`EvalResult`] per
//! config back, in order, with the time split between compiling and benchmarking.
//! [`DeviceEvaluator`] does it in-process over any [`Device`] and [`Compiler`]: compile the
//! batch in parallel (a compile error becomes `CompileFailed`), then verify and time each
//! kernel on the device. With `SimDevice` + `SimCompiler` or `ReplayDevice` + `SimCompiler`
//! it needs no GPU. The bench pipeline provides the evaluator for isolated GPU workers.

use std::time::Instant;

use crate::compile::cache::CompileCache;
use crate::compile::{pool, CompileError, Compiler, Target};
use crate::device::{Device, DeviceError, Outcome, TimingOptions};
use crate::problem::GemmProblem;
use crate::space::KernelConfig;

/// What happened to one config.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalResult {
    pub config: KernelConfig,
    pub outcome: Outcome,
    /// Time spent compiling this config (0 on a cache hit is fine).
    pub compile_ms: f64,
    /// Time spent verifying and timing it on the device.
    pub bench_ms: f64,
}

/// Evaluates batches of configs for one problem.
pub trait Evaluator {
    /// One result per config, in the same order.
    fn evaluate(&mut self, configs: &[KernelConfig]) -> Vec<EvalResult>;

    /// Measures configs again for the final ranking. Backends whose samples depend on a seed
    /// override this to draw fresh samples; the default measures them the same way again.
    fn retime(&mut self, configs: &[KernelConfig]) -> Vec<EvalResult> {
        self.evaluate(configs)
    }
}

/// Compiles and runs configs in this process on one device.
pub struct DeviceEvaluator<'a> {
    device: &'a mut dyn Device,
    compiler: &'a dyn Compiler,
    cache: Option<CompileCache>,
    target: Target,
    problem: GemmProblem,
    timing: TimingOptions,
    /// Compile threads (0 = all cores).
    pub compile_threads: usize,
    retimes: u64,
}

impl<'a> DeviceEvaluator<'a> {
    /// Sets the problem on the device (allocating its buffers) and prepares to evaluate.
    pub fn new(
        device: &'a mut dyn Device,
        compiler: &'a dyn Compiler,
        problem: &GemmProblem,
        timing: TimingOptions,
    ) -> Result<Self, DeviceError> {
        device.set_problem(problem, &timing)?;
        let hw = device.hw_spec();
        let target = Target {
            vendor: hw.vendor,
            arch: hw.arch.clone(),
        };
        Ok(DeviceEvaluator {
            device,
            compiler,
            cache: None,
            target,
            problem: problem.clone(),
            timing,
            compile_threads: 0,
            retimes: 0,
        })
    }

    /// Keeps compiled kernels in a disk cache between runs.
    pub fn with_cache(mut self, cache: CompileCache) -> Self {
        self.cache = Some(cache);
        self
    }

    fn run(&mut self, configs: &[KernelConfig], timing: &TimingOptions) -> Vec<EvalResult> {
        let start = Instant::now();
        let built = pool::compile_batch(
            self.compiler,
            configs,
            &self.problem,
            &self.target,
            self.cache.as_ref(),
            self.compile_threads,
        );
        // Compiles run in parallel: charge each config its share of the batch's wall time.
        let compile_each = start.elapsed().as_secs_f64() * 1e3 / configs.len().max(1) as f64;
        configs
            .iter()
            .zip(built)
            .map(|(cfg, b)| {
                let t = Instant::now();
                let outcome = match b {
                    Ok(kernel) => self.device.run_kernel(&kernel, timing),
                    Err(CompileError::Failed { log }) => Outcome::CompileFailed { stderr: log },
                    Err(CompileError::Unavailable(why)) => Outcome::CompileFailed {
                        stderr: format!("compiler unavailable: {why}"),
                    },
                };
                EvalResult {
                    config: *cfg,
                    outcome,
                    compile_ms: compile_each,
                    bench_ms: t.elapsed().as_secs_f64() * 1e3,
                }
            })
            .collect()
    }
}

impl Evaluator for DeviceEvaluator<'_> {
    fn evaluate(&mut self, configs: &[KernelConfig]) -> Vec<EvalResult> {
        let timing = self.timing.clone();
        self.run(configs, &timing)
    }

    /// Re-times with a different data/noise seed each call, so a config that was lucky once
    /// is not lucky again by construction.
    fn retime(&mut self, configs: &[KernelConfig]) -> Vec<EvalResult> {
        self.retimes += 1;
        let mut timing = self.timing.clone();
        timing.seed = timing.seed.wrapping_add(0x9E37_79B9 * self.retimes);
        self.run(configs, &timing)
    }
}
