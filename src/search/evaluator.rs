//! The evaluator: turns a batch of configs into outcomes.
//!
//! The driver hands each validated batch to an [`Evaluator`] and gets one [`EvalResult`] per
//! config back, in order, with the time split between compiling and benchmarking.
//! [`DeviceEvaluator`] does it in-process over any [`Device`] and [`Compiler`]: compile the
//! batch in parallel (a compile error becomes `CompileFailed`), then verify and time each
//! kernel on the device. With `SimDevice` + `SimCompiler` or `ReplayDevice` + `SimCompiler`
//! it needs no GPU. The bench pipeline provides the evaluator for isolated GPU workers.

use crate::bench::results::MemoryResults;
use crate::bench::session::BenchSession;
use crate::compile::Compiler;
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

    /// Measures configs again for the final ranking, in its `round` (0-based). Backends whose
    /// samples depend on a seed override this to draw fresh samples each round; the default
    /// measures them the same way again.
    fn retime(&mut self, configs: &[KernelConfig], _round: usize) -> Vec<EvalResult> {
        self.evaluate(configs)
    }
}

/// Compiles and runs configs in this process on one device, through a [`BenchSession`] that
/// keeps its results in memory (offline evaluation and tests; the CLI evaluates through a
/// session writing to the results database).
pub struct DeviceEvaluator<'a> {
    session: BenchSession<'a>,
}

impl<'a> DeviceEvaluator<'a> {
    /// Sets the problem on the device (allocating its buffers) and prepares to evaluate.
    pub fn new(
        device: &'a mut dyn Device,
        compiler: &'a dyn Compiler,
        problem: &GemmProblem,
        timing: TimingOptions,
    ) -> Result<Self, DeviceError> {
        let mut session = BenchSession::new(
            problem.clone(),
            timing,
            device,
            compiler,
            None,
            Box::new(MemoryResults::default()),
        )?;
        // The driver deduplicates; asking twice means measuring twice.
        session.force = true;
        session.ensure_problem()?;
        Ok(DeviceEvaluator { session })
    }

    /// Compile threads (0 = all cores).
    pub fn with_compile_threads(mut self, threads: usize) -> Self {
        self.session.compile_threads = threads;
        self
    }
}

impl Evaluator for DeviceEvaluator<'_> {
    fn evaluate(&mut self, configs: &[KernelConfig]) -> Vec<EvalResult> {
        self.session.evaluate(configs)
    }

    fn retime(&mut self, configs: &[KernelConfig], round: usize) -> Vec<EvalResult> {
        Evaluator::retime(&mut self.session, configs, round)
    }
}

impl Evaluator for BenchSession<'_> {
    fn evaluate(&mut self, configs: &[KernelConfig]) -> Vec<EvalResult> {
        let before = self.times;
        let rows = match self.measure(configs, &mut |_| {}) {
            Ok(rows) => rows,
            // The device could not even take the problem: every config fails the same way.
            Err(e) => {
                return configs
                    .iter()
                    .map(|c| EvalResult {
                        config: *c,
                        outcome: Outcome::LaunchFailed {
                            message: e.to_string(),
                        },
                        compile_ms: 0.0,
                        bench_ms: 0.0,
                    })
                    .collect()
            }
        };
        // Compiles run in parallel: charge each config its share of the batch's wall time.
        let n = configs.len().max(1) as f64;
        let compile_each = (self.times.compile_s - before.compile_s) * 1e3 / n;
        let bench_each = (self.times.bench_s - before.bench_s) * 1e3 / n;
        configs
            .iter()
            .zip(rows)
            .map(|(c, row)| EvalResult {
                config: *c,
                outcome: row.outcome,
                compile_ms: compile_each,
                bench_ms: bench_each,
            })
            .collect()
    }

    /// Re-times with a data/noise seed of its own per round and without reusing stored
    /// results, so a config that was lucky once is not lucky again by construction; with
    /// `vendor_in_retime`, the vendor library follows in the same round.
    fn retime(&mut self, configs: &[KernelConfig], round: usize) -> Vec<EvalResult> {
        let (force, seed) = (self.force, self.timing.seed);
        self.force = true;
        self.timing.seed = seed.wrapping_add(0x9E37_79B9u64.wrapping_mul(round as u64 + 1));
        let out = self.evaluate(configs);
        if self.vendor_in_retime {
            // A vendor failure here is not the search's: the caller times it again and
            // reports the error there.
            if let Ok(v) = self.vendor(true) {
                self.vendor_retimed.push(v);
            }
        }
        self.force = force;
        self.timing.seed = seed;
        out
    }
}
