//! Offline strategy evaluation on recorded sweeps.
//!
//! A sweep ([`Dataset`]) holds measurements of many configs of one problem. Each strategy is
//! run once per seed against a [`ReplayDevice`] serving that sweep, with only the evaluation
//! budget as a stop rule, and judged on the sweep's own medians (not on the noisy resamples
//! it saw): how many evaluations it needed to come within `tolerance` (2%) of the sweep's
//! best, and how good its best was after fixed budgets (25, 50, 100, 200 evaluations), and
//! for LLM-driven strategies what the model contributed ([`LlmAccount`], over all seeds).
//! [`eval_datasets`] does it for several sweeps at once, leave-one-shape-out: a strategy that
//! learns across shapes is given every other sweep as its corpus, never the one it is judged
//! on. [`record_sweep`] measures a list of configs into a dataset (the `sweep` command, and
//! the synthetic sim datasets the tests use).

use std::sync::Arc;

use crate::compile::sim::SimCompiler;
use crate::compile::Compiler;
use crate::device::replay::{Dataset, Provenance, ReplayDevice, SweepHeader, SweepWriter};
use crate::device::sim::SimDevice;
use crate::device::{Device, DeviceSelection, TimingOptions};
use crate::space::{KernelConfig, Space};

use super::corpus::{Corpus, ShapeRecords};
use super::driver::{run_search, NoKnownResults, SearchOptions, SearchResult};
use super::evaluator::{DeviceEvaluator, Evaluator};
use super::llm_account::LlmAccount;
use super::llm_port::SharedLlm;
use super::strategies::{self, StrategyOptions};
use super::strategy::{Strategy, StrategyError};
use super::SearchError;

/// The budgets reported by default.
pub const DEFAULT_BUDGETS: [usize; 4] = [25, 50, 100, 200];

type Maker = Box<dyn Fn() -> Result<Box<dyn Strategy>, StrategyError>>;

/// A strategy to evaluate: a name and how to build a fresh instance for each run.
pub struct Contender {
    pub name: String,
    make: Maker,
}

impl Contender {
    pub fn new(
        name: &str,
        make: impl Fn() -> Result<Box<dyn Strategy>, StrategyError> + 'static,
    ) -> Self {
        Contender {
            name: name.to_string(),
            make: Box::new(make),
        }
    }

    /// A strategy from the registry.
    pub fn registry(name: &str, options: StrategyOptions, llm: Option<SharedLlm>) -> Self {
        let n = name.to_string();
        Contender::new(name, move || strategies::build(&n, &options, llm.clone()))
    }
}

/// How the runs are set up.
#[derive(Debug, Clone)]
pub struct EvalSettings {
    pub batch_size: usize,
    /// Relative distance to the sweep's best that counts as found.
    pub tolerance: f64,
    pub timing: TimingOptions,
}

impl Default for EvalSettings {
    fn default() -> Self {
        EvalSettings {
            batch_size: 8,
            tolerance: 0.02,
            timing: TimingOptions::default(),
        }
    }
}

/// One strategy's scores over all seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyEval {
    pub strategy: String,
    /// Per seed: evaluations needed to come within the tolerance (`None`: never).
    pub evals_to_target: Vec<Option<usize>>,
    /// Median of `evals_to_target`, unreached runs counting as infinitely many.
    pub median_evals_to_target: Option<f64>,
    /// Per budget: the median over seeds of the best sweep median found within it.
    pub best_at_budget: Vec<(usize, Option<f64>)>,
    /// Invalid suggestions over all runs.
    pub invalid_suggestions: usize,
    /// What an LLM contributed, over all runs (LLM-driven strategies only).
    pub llm: Option<LlmAccount>,
}

/// The evaluation of every contender on one sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalReport {
    pub best_config: KernelConfig,
    pub best_us: f64,
    pub results: Vec<StrategyEval>,
}

/// The space a sweep covers: the full space narrowed to the values the sweep recorded, and
/// to the configs it recorded (its parameters' values do not combine freely: a sweep's LDS
/// layouts come in pairs of padding and swizzle), so a strategy never spends an evaluation
/// on a config the sweep cannot answer.
pub fn space_for_dataset(dataset: &Dataset) -> Space {
    let mut space = Space::for_problem(&dataset.header.problem, &dataset.header.hw);
    for d in space.domains.iter_mut() {
        let mut seen: Vec<i64> = dataset.records().map(|(c, _)| d.id.get(&c)).collect();
        seen.sort_unstable();
        seen.dedup();
        d.restrict(&seen);
    }
    space.only = Some(Arc::new(
        dataset.records().map(|(c, _)| c.canonical()).collect(),
    ));
    space
}

/// Runs every contender for every seed on the sweep.
pub fn eval_strategies(
    dataset: &Dataset,
    contenders: &[Contender],
    seeds: &[u64],
    budgets: &[usize],
    settings: &EvalSettings,
) -> Result<EvalReport, SearchError> {
    let (best_config, best_us) = dataset
        .best()
        .ok_or_else(|| SearchError::Invalid("the sweep has no timed config".into()))?;
    let space = space_for_dataset(dataset);
    let max_budget = budgets.iter().copied().max().unwrap_or(200).max(1);
    let threshold = best_us * (1.0 + settings.tolerance);
    let mut results = Vec::new();
    for contender in contenders {
        let mut evals_to_target = Vec::new();
        let mut per_budget: Vec<Vec<Option<f64>>> = vec![Vec::new(); budgets.len()];
        let mut invalid = 0;
        let mut accounts = Vec::new();
        for &seed in seeds {
            let run = run_once(dataset, &space, contender, seed, max_budget, settings)?;
            invalid += run.invalid_suggestions;
            accounts.extend(LlmAccount::of(&run.llm_rounds));
            // Judge on the sweep's medians, in the order the strategy measured configs.
            let truth: Vec<Option<f64>> = run
                .history
                .iter()
                .filter(|e| !e.reused)
                .map(|e| e.median_us.and_then(|_| dataset.median_us(&e.config)))
                .collect();
            evals_to_target.push(
                truth
                    .iter()
                    .position(|t| t.is_some_and(|t| t <= threshold))
                    .map(|i| i + 1),
            );
            for (slot, &b) in per_budget.iter_mut().zip(budgets) {
                slot.push(truth.iter().take(b).flatten().copied().reduce(f64::min));
            }
        }
        let as_f64: Vec<Option<f64>> = evals_to_target
            .iter()
            .map(|e| e.map(|v| v as f64))
            .collect();
        results.push(StrategyEval {
            strategy: contender.name.clone(),
            median_evals_to_target: median_of(&as_f64),
            evals_to_target,
            best_at_budget: budgets
                .iter()
                .copied()
                .zip(per_budget.iter().map(|v| median_of(v)))
                .collect(),
            invalid_suggestions: invalid,
            llm: LlmAccount::sum(&accounts),
        });
    }
    Ok(EvalReport {
        best_config,
        best_us,
        results,
    })
}

fn run_once(
    dataset: &Dataset,
    space: &Space,
    contender: &Contender,
    seed: u64,
    budget: usize,
    settings: &EvalSettings,
) -> Result<SearchResult, SearchError> {
    let mut device = ReplayDevice::new(dataset.clone());
    let compiler = SimCompiler { plants: Vec::new() };
    let mut timing = settings.timing.clone();
    timing.seed = seed;
    let mut evaluator =
        DeviceEvaluator::new(&mut device, &compiler, &dataset.header.problem, timing)?
            .with_compile_threads(1);
    let mut strategy = (contender.make)().map_err(|source| SearchError::Strategy {
        strategy: contender.name.clone(),
        source,
    })?;
    let opts = SearchOptions {
        batch_size: settings.batch_size,
        seed,
        retime_top: 0,
        ..SearchOptions::budget_only(budget)
    };
    run_search(
        space,
        strategy.as_mut(),
        &mut evaluator,
        &NoKnownResults,
        &opts,
        &mut (),
    )
}

/// One sweep's evaluation among several.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetEval {
    /// How the sweep is named in reports (its file name).
    pub label: String,
    /// The device it was recorded on (`sim:...` for the analytic model).
    pub device: String,
    /// When it was recorded (the date), if the sweep says.
    pub recorded: Option<String>,
    pub dataset_configs: usize,
    /// The space's default config, and its recorded median when the sweep has it: how far
    /// from the best a search that measured only the default would be.
    pub default_config: Option<KernelConfig>,
    pub default_us: Option<f64>,
    /// Shapes the learners were given (every other sweep's).
    pub corpus_shapes: usize,
    pub report: EvalReport,
}

/// Evaluates `names` (registry names) on every sweep of `datasets` (label, sweep). A
/// strategy that learns across shapes gets every other sweep as its corpus except those of
/// the same problem: leave-one-shape-out.
pub fn eval_datasets(
    datasets: &[(String, Dataset)],
    names: &[String],
    options: &StrategyOptions,
    llm: Option<SharedLlm>,
    seeds: &[u64],
    budgets: &[usize],
    settings: &EvalSettings,
) -> Result<Vec<DatasetEval>, SearchError> {
    let all = Corpus::new(
        datasets
            .iter()
            .map(|(_, d)| ShapeRecords::from_dataset(d))
            .collect(),
    );
    let mut out = Vec::new();
    for (label, dataset) in datasets {
        let corpus = Arc::new(all.without(&dataset.header.problem));
        let mut opts = options.clone();
        opts.corpus = Some(Arc::clone(&corpus));
        opts.device = dataset.header.device.name.clone();
        let contenders: Vec<Contender> = names
            .iter()
            .map(|n| Contender::registry(n, opts.clone(), llm.clone()))
            .collect();
        let report = eval_strategies(dataset, &contenders, seeds, budgets, settings)?;
        let default_config = space_for_dataset(dataset).default_config().ok();
        let default_us = default_config.and_then(|c| dataset.median_us(&c));
        out.push(DatasetEval {
            label: label.clone(),
            device: dataset.header.device.name.clone(),
            recorded: dataset
                .header
                .provenance
                .as_ref()
                .map(|p| p.date().to_string()),
            dataset_configs: dataset.len(),
            default_config,
            default_us,
            corpus_shapes: corpus.shapes().len(),
            report,
        });
    }
    Ok(out)
}

/// Median of values where `None` counts as larger than everything; `None` if the median
/// itself falls on an unreached run.
fn median_of(values: &[Option<f64>]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v: Vec<f64> = values.iter().map(|x| x.unwrap_or(f64::INFINITY)).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let m = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    m.is_finite().then_some(m)
}

/// Measures `configs` on a device and returns them as a sweep dataset; with a path, the
/// file is written as JSON lines while the sweep runs (the header, then each result as soon
/// as it is measured), so a killed sweep keeps what it measured; `on_batch` hears how many
/// configs are done after each batch.
pub fn record_sweep(
    device: &mut dyn Device,
    compiler: &dyn Compiler,
    space: &Space,
    configs: &[KernelConfig],
    timing: &TimingOptions,
    out: Option<&std::path::Path>,
    on_batch: &mut dyn FnMut(usize),
) -> Result<Dataset, SearchError> {
    device.set_problem(&space.problem, timing)?;
    let vendor = device.run_vendor(timing);
    let mut header = SweepHeader::new(
        space.problem.clone(),
        device.info().clone(),
        device.hw_spec().clone(),
        Some(vendor),
    );
    header.provenance = Some(Provenance::now());
    let mut writer = out
        .map(|path| SweepWriter::create(path, &header))
        .transpose()?;
    let mut data = Dataset::new(header);
    let mut evaluator = DeviceEvaluator::new(device, compiler, &space.problem, timing.clone())?;
    // Batches keep the parallel compile busy while a crash still loses little.
    let mut done = 0;
    for chunk in configs.chunks(32) {
        for r in evaluator.evaluate(chunk) {
            if let Some(w) = writer.as_mut() {
                w.append(&r.config, &r.outcome)?;
            }
            data.insert(&r.config, r.outcome);
        }
        done += chunk.len();
        on_batch(done);
    }
    Ok(data)
}

/// A sweep of every valid config of `space` on the sim model (the space must be small).
pub fn synthetic_dataset(
    space: &Space,
    timing: &TimingOptions,
    limit: u128,
) -> Result<Dataset, SearchError> {
    let configs = space.enumerate(limit)?;
    let mut device = SimDevice::new(&DeviceSelection {
        hw_spec: Some(space.hw.clone()),
        ..Default::default()
    })?;
    let compiler = SimCompiler { plants: Vec::new() };
    record_sweep(
        &mut device,
        &compiler,
        space,
        &configs,
        timing,
        None,
        &mut |_| {},
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_treats_unreached_as_infinite() {
        assert_eq!(median_of(&[Some(1.0), Some(3.0), None]), Some(3.0));
        assert_eq!(median_of(&[Some(1.0), None, None]), None);
        assert_eq!(median_of(&[Some(2.0), Some(4.0)]), Some(3.0));
        assert_eq!(median_of(&[]), None);
    }
}
