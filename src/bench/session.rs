//! A bench session: one problem on one device, measuring batches of configs.
//!
//! Flow per batch: validate against the space (invalid -> `Outcome::Invalid`) -> reuse stored
//! results unless `force` -> compile the rest in parallel (errors -> `CompileFailed`) -> set the
//! problem on the device once -> verify and time each kernel -> record each outcome in the
//! store as soon as it exists. The vendor library is measured the same way, and
//! [`BenchSession::retime`] re-measures the leaders so a winner is never one lucky sample.
//! The search driver and the `bench` command both measure through this type.

use serde::{Deserialize, Serialize};
use std::time::Instant;

use super::results::{ResultKey, ResultStore};
pub use super::row::BenchRow;
use crate::compile::{cache::CompileCache, codegen, pool, Compiler, Target};
use crate::device::{Device, DeviceError, Outcome, TimingOptions};
use crate::measure::stats::{Rates, Stats};
use crate::problem::GemmProblem;
use crate::space::{KernelConfig, Space};

/// Progress notifications, for the CLI's output.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    Compiled {
        done: usize,
        failed: usize,
        seconds: f64,
    },
    Measured {
        row: &'a BenchRow,
    },
}

/// Wall time spent per phase, in seconds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct PhaseTimes {
    pub compile_s: f64,
    pub bench_s: f64,
}

pub struct BenchSession<'a> {
    pub problem: GemmProblem,
    pub space: Space,
    pub timing: TimingOptions,
    pub force: bool,
    pub compile_threads: usize,
    device: &'a mut dyn Device,
    compiler: &'a dyn Compiler,
    cache: Option<&'a CompileCache>,
    store: Box<dyn ResultStore + 'a>,
    target: Target,
    problem_set: bool,
    pub times: PhaseTimes,
    /// When set, each round of the search's final re-timing (this session as the
    /// [`Evaluator`](crate::search::evaluator::Evaluator)) also times the vendor library right
    /// after the leaders, into `vendor_retimed`: the vendor sees the same drift as they do.
    pub vendor_in_retime: bool,
    pub vendor_retimed: Vec<BenchRow>,
}

/// Name under which the vendor baseline is stored and reported.
pub fn vendor_name(vendor: crate::hw::Vendor) -> &'static str {
    match vendor {
        crate::hw::Vendor::Nvidia => "vendor:cublaslt",
        crate::hw::Vendor::Amd => "vendor:hipblaslt",
    }
}

impl<'a> BenchSession<'a> {
    pub fn new(
        problem: GemmProblem,
        timing: TimingOptions,
        device: &'a mut dyn Device,
        compiler: &'a dyn Compiler,
        cache: Option<&'a CompileCache>,
        store: Box<dyn ResultStore + 'a>,
    ) -> Result<Self, DeviceError> {
        problem.validate()?;
        let hw = device.hw_spec().clone();
        problem.check_fits(device.info().memory_bytes, timing.rotating_copies(&problem))?;
        let target = crate::compile::target_for(device.info());
        Ok(BenchSession {
            space: Space::for_problem(&problem, &hw),
            problem,
            timing,
            force: false,
            compile_threads: 0,
            device,
            compiler,
            cache,
            store,
            target,
            problem_set: false,
            times: PhaseTimes::default(),
            vendor_in_retime: false,
            vendor_retimed: Vec::new(),
        })
    }

    pub fn device(&self) -> &dyn Device {
        self.device
    }

    fn key(&self, name: &str) -> ResultKey {
        let info = self.device.info();
        ResultKey {
            device_name: info.name.clone(),
            arch: info.arch.clone(),
            driver_version: info.driver_version.clone(),
            compiler_version: self.compiler.id(),
            source_hash: codegen::template_hash(),
            problem_key: self.problem.key(),
            config_name: name.to_string(),
        }
    }

    fn row(&self, name: String, config: Option<KernelConfig>, outcome: Outcome) -> BenchRow {
        let stats = outcome.samples().and_then(Stats::of);
        let rates = stats.map(|s| Rates::of(s.median_us, &self.problem, self.device.hw_spec()));
        BenchRow {
            name,
            config,
            outcome,
            stats,
            rates,
            speedup_vs_vendor: None,
            reused: false,
            compile_ms: None,
            resources: None,
        }
    }

    pub fn ensure_problem(&mut self) -> Result<(), DeviceError> {
        if !self.problem_set {
            self.device.set_problem(&self.problem, &self.timing)?;
            self.problem_set = true;
        }
        Ok(())
    }

    fn record(&mut self, row: &BenchRow) {
        let key = self.key(&row.name);
        if let Err(e) = self.store.record(&key, &self.problem, row) {
            // Losing a record is serious but must not abort the measurements already running.
            eprintln!(
                "gemmtune: warning: could not store result for {}: {e}",
                row.name
            );
        }
    }

    /// Measures a batch of configs; rows come back in input order.
    pub fn measure(
        &mut self,
        configs: &[KernelConfig],
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Vec<BenchRow>, DeviceError> {
        let mut rows: Vec<Option<BenchRow>> = vec![None; configs.len()];
        let mut to_compile = Vec::new();
        for (i, c) in configs.iter().enumerate() {
            let c = c.canonical();
            if let Err(v) = self.space.check(&c) {
                let row = self.row(
                    c.name(),
                    Some(c),
                    Outcome::Invalid {
                        reason: v.to_string(),
                    },
                );
                on_event(Event::Measured { row: &row });
                rows[i] = Some(row);
                continue;
            }
            if !self.force {
                if let Some(outcome) = self.store.lookup(&self.key(&c.name())) {
                    let mut row = self.row(c.name(), Some(c), outcome);
                    row.reused = true;
                    on_event(Event::Measured { row: &row });
                    rows[i] = Some(row);
                    continue;
                }
            }
            to_compile.push((i, c));
        }

        let start = Instant::now();
        let cfgs: Vec<KernelConfig> = to_compile.iter().map(|(_, c)| *c).collect();
        let built = pool::compile_batch(
            self.compiler,
            &cfgs,
            &self.problem,
            &self.target,
            self.cache,
            self.compile_threads,
        );
        self.times.compile_s += start.elapsed().as_secs_f64();
        let failed = built.iter().filter(|b| b.is_err()).count();
        on_event(Event::Compiled {
            done: built.len(),
            failed,
            seconds: start.elapsed().as_secs_f64(),
        });

        for ((i, c), result) in to_compile.into_iter().zip(built) {
            let row = match result {
                Err(e) => {
                    let stderr = match e {
                        crate::compile::CompileError::Failed { log } => log,
                        other => other.to_string(),
                    };
                    self.row(c.name(), Some(c), Outcome::CompileFailed { stderr })
                }
                Ok(kernel) => {
                    self.ensure_problem()?;
                    let start = Instant::now();
                    let outcome = self.device.run_kernel(&kernel, &self.timing);
                    self.times.bench_s += start.elapsed().as_secs_f64();
                    let mut row = self.row(kernel.name.clone(), Some(c), outcome);
                    row.compile_ms = Some(kernel.compile_ms);
                    row.resources = Some(kernel.resources.clone());
                    row
                }
            };
            self.record(&row);
            on_event(Event::Measured { row: &row });
            rows[i] = Some(row);
        }
        Ok(rows
            .into_iter()
            .map(|r| r.expect("every row filled"))
            .collect())
    }

    /// Measures the vendor library (reusing a stored result unless `force` or `fresh`).
    pub fn vendor(&mut self, fresh: bool) -> Result<BenchRow, DeviceError> {
        let name = vendor_name(self.device.info().vendor).to_string();
        if !self.force && !fresh {
            if let Some(outcome) = self.store.lookup(&self.key(&name)) {
                let mut row = self.row(name, None, outcome);
                row.reused = true;
                return Ok(row);
            }
        }
        self.ensure_problem()?;
        let start = Instant::now();
        let outcome = self.device.run_vendor(&self.timing);
        self.times.bench_s += start.elapsed().as_secs_f64();
        let row = self.row(name, None, outcome);
        self.record(&row);
        Ok(row)
    }

    /// Re-measures the `top` fastest verified rows (and the vendor row, if given) now, side by
    /// side, in `rounds` rounds (at least one): each round measures the leaders in a rotated
    /// order, then the vendor library, so a drift of the GPU's clocks reaches both. Each row
    /// becomes its median round (the round whose median is the median of its rounds'), or its
    /// first failed round: a kernel that failed once is not a winner. The data seed stays the
    /// session's: a stored vendor or kernel row is then what a fresh measurement of the same
    /// problem gives on a deterministic backend, which a resumed run relies on.
    pub fn retime(
        &mut self,
        rows: &mut [BenchRow],
        vendor: Option<&mut BenchRow>,
        top: usize,
        rounds: usize,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), DeviceError> {
        let mut order: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].is_ok() && rows[i].config.is_some())
            .collect();
        order.sort_by(|&a, &b| {
            rows[a]
                .median_us()
                .unwrap_or(f64::MAX)
                .total_cmp(&rows[b].median_us().unwrap_or(f64::MAX))
        });
        order.truncate(top);
        if order.is_empty() {
            return Ok(());
        }
        let force = self.force;
        self.force = true;
        let measured = self.retime_rounds(rows, &order, vendor.is_some(), rounds, on_event);
        self.force = force;
        let (per_row, vendor_rounds) = measured?;
        for (&i, taken) in order.iter().zip(per_row) {
            rows[i] = median_round(taken);
        }
        if let Some(v) = vendor {
            *v = median_round(vendor_rounds);
        }
        Ok(())
    }

    /// The rounds of [`Self::retime`]: every round's row of each leader (in `order`'s order)
    /// and of the vendor library.
    fn retime_rounds(
        &mut self,
        rows: &[BenchRow],
        order: &[usize],
        with_vendor: bool,
        rounds: usize,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(Vec<Vec<BenchRow>>, Vec<BenchRow>), DeviceError> {
        let n = order.len();
        let mut per_row: Vec<Vec<BenchRow>> = vec![Vec::new(); n];
        let mut vendor_rounds = Vec::new();
        for round in 0..rounds.max(1) {
            let rotated: Vec<usize> = (0..n).map(|j| (j + round) % n).collect();
            let configs: Vec<KernelConfig> = rotated
                .iter()
                .filter_map(|&j| rows[order[j]].config)
                .collect();
            for (&j, row) in rotated.iter().zip(self.measure(&configs, on_event)?) {
                per_row[j].push(row);
            }
            if with_vendor {
                vendor_rounds.push(self.vendor(true)?);
            }
        }
        Ok((per_row, vendor_rounds))
    }
}

/// The row of the median round among `taken` (the lower middle for an even count), or the
/// first failed one.
fn median_round(mut taken: Vec<BenchRow>) -> BenchRow {
    if let Some(failed) = taken.iter().position(|r| !r.is_ok()) {
        return taken.swap_remove(failed);
    }
    taken.sort_by(|a, b| {
        a.median_us()
            .unwrap_or(f64::MAX)
            .total_cmp(&b.median_us().unwrap_or(f64::MAX))
    });
    let mid = (taken.len() - 1) / 2;
    taken.swap_remove(mid)
}

/// Fills `speedup_vs_vendor` of every row from the vendor row's median.
pub fn attach_speedups(rows: &mut [BenchRow], vendor: Option<&BenchRow>) {
    let Some(v) = vendor.and_then(|v| v.median_us()) else {
        return;
    };
    for r in rows {
        r.speedup_vs_vendor = r.median_us().filter(|_| r.is_ok()).map(|m| v / m);
    }
}

/// Index of the fastest verified row. A wrong kernel can never be the winner.
pub fn winner(rows: &[BenchRow]) -> Option<usize> {
    (0..rows.len())
        .filter(|&i| rows[i].is_ok())
        .min_by(|&a, &b| {
            rows[a]
                .median_us()
                .unwrap_or(f64::MAX)
                .total_cmp(&rows[b].median_us().unwrap_or(f64::MAX))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::results::MemoryResults;
    use crate::compile::sim::SimCompiler;
    use crate::device::sim::SimDevice;
    use crate::device::{DeviceSelection, TimingOptions};

    fn row(name: &str, median: Option<f64>) -> BenchRow {
        let outcome = match median {
            Some(t) => Outcome::modelled(vec![t]),
            None => Outcome::LaunchFailed {
                message: "illegal address".into(),
            },
        };
        BenchRow {
            name: name.into(),
            config: None,
            stats: outcome.samples().and_then(Stats::of),
            outcome,
            rates: None,
            speedup_vs_vendor: None,
            reused: false,
            compile_ms: None,
            resources: None,
        }
    }

    #[test]
    fn a_row_is_its_median_round_or_its_first_failure() {
        let rounds = vec![
            row("a", Some(12.0)),
            row("b", Some(10.0)),
            row("c", Some(11.0)),
        ];
        assert_eq!(median_round(rounds).name, "c");
        let even = vec![row("a", Some(12.0)), row("b", Some(10.0))];
        assert_eq!(median_round(even).name, "b");
        let failed = vec![row("a", Some(1.0)), row("b", None), row("c", None)];
        assert_eq!(median_round(failed).name, "b");
    }

    /// The simulated device, compiler and in-memory results a test session runs on.
    struct Sim {
        device: SimDevice,
        compiler: SimCompiler,
        results: MemoryResults,
    }

    impl Sim {
        fn new() -> Sim {
            Sim {
                device: SimDevice::new(&DeviceSelection::default()).unwrap(),
                compiler: SimCompiler { plants: vec![] },
                results: MemoryResults::default(),
            }
        }

        /// A session for a small skinny problem.
        fn session(&mut self) -> BenchSession<'_> {
            BenchSession::new(
                GemmProblem::new(1024, 109, 2048),
                TimingOptions::default(),
                &mut self.device,
                &self.compiler,
                None,
                Box::new(&mut self.results),
            )
            .unwrap()
        }
    }

    #[test]
    fn retiming_measures_every_leader_and_the_vendor_in_each_round() {
        let mut sim = Sim::new();
        let mut session = sim.session();
        let configs = crate::bench::defaults::default_configs(&session.space, 4);
        let mut rows = session.measure(&configs, &mut |_| {}).unwrap();
        let mut vendor = session.vendor(false).unwrap();
        session
            .retime(&mut rows, Some(&mut vendor), 2, 3, &mut |_| {})
            .unwrap();
        assert!(vendor.is_ok());
        assert!(rows.iter().all(BenchRow::is_ok));
        drop(session);
        // Four measured, one vendor, then three rounds of two leaders and the vendor.
        assert_eq!(sim.results.writes, 4 + 1 + 3 * (2 + 1));
    }

    #[test]
    fn the_search_retiming_times_the_vendor_in_its_rounds_when_asked() {
        use crate::search::evaluator::Evaluator;
        let mut sim = Sim::new();
        let mut session = sim.session();
        let configs = crate::bench::defaults::default_configs(&session.space, 2);
        Evaluator::retime(&mut session, &configs, 0);
        assert!(session.vendor_retimed.is_empty());
        session.vendor_in_retime = true;
        for round in 0..3 {
            let got = Evaluator::retime(&mut session, &configs, round);
            assert_eq!(got.len(), configs.len());
        }
        assert_eq!(session.vendor_retimed.len(), 3);
        assert!(session.vendor_retimed.iter().all(BenchRow::is_ok));
    }
}
