//! What `tune` and `tune-log` share: turning the search flags into a strategy, its options
//! and the driver's options, and connecting the LLM (cached replies, audited prompts).

use anyhow::Result;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::args::SearchArgs;
use super::UsageError;
use crate::hw::HwSpec;
use crate::llm::config::{LlmConfig, LlmOptions};
use crate::llm::port::{cli_client, ClientPort};
use crate::search::corpus::{Corpus, ShapeRecords};
use crate::search::driver::SearchOptions;
use crate::search::llm_port::SharedLlm;
use crate::search::strategies::{self, AutonomousOptions, FallbackMode, StrategyOptions};
use crate::search::{Strategy, StrategyError};
use crate::space::KernelConfig;
use crate::store::Store;

/// The LLM client stack for the given options (responses cached, prompts audited under
/// `audit_dir`), or `None` when no LLM is configured.
pub fn llm_port(opts: &LlmOptions, audit_dir: &Path) -> Result<Option<SharedLlm>> {
    if !opts.is_set() {
        return Ok(None);
    }
    let config = llm_config(opts)?;
    let cache = dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("gemmtune")
        .join("llm");
    let client = cli_client(&config, &cache, Some(audit_dir))?;
    Ok(Some(Arc::new(ClientPort::new(client))))
}

/// The LLM endpoint the `--llm-*` options describe; options it cannot use (a malformed
/// `--llm-url`, an unknown provider, a missing key variable) are usage errors.
pub fn llm_config(opts: &LlmOptions) -> Result<LlmConfig> {
    LlmConfig::from_options(opts).map_err(|e| UsageError(e.to_string()).into())
}

/// What the results database at `path` knows across shapes, for the model-based search:
/// `None` when the file does not exist or holds no usable measurement (rows of devices no
/// built-in spec describes, or of configs this build cannot read, are skipped).
pub fn corpus_from_db(path: &Path) -> Result<Option<Arc<Corpus>>> {
    if !path.exists() {
        return Ok(None);
    }
    let store = Store::open(path)?;
    let mut specs: HashMap<String, Option<Arc<HwSpec>>> = HashMap::new();
    let mut shapes: HashMap<(String, String), ShapeRecords> = HashMap::new();
    for row in store.corpus()? {
        let Some(hw) = specs
            .entry(row.device_name.clone())
            .or_insert_with_key(|d| HwSpec::for_device_name(d).map(Arc::new))
            .clone()
        else {
            continue;
        };
        let Ok(config) = KernelConfig::parse(&row.config_name) else {
            continue;
        };
        shapes
            .entry((row.problem.key(), row.device_name.clone()))
            .or_insert_with(|| ShapeRecords {
                problem: row.problem.clone(),
                hw,
                device: row.device_name.clone(),
                configs: Vec::new(),
            })
            .configs
            .push((config, row.median_us));
    }
    let corpus = Corpus::new(shapes.into_values().collect());
    Ok((!corpus.is_empty()).then(|| Arc::new(corpus)))
}

/// Strategies that move one small step per round need more rounds than the default five.
pub fn default_rounds(strategy: &str) -> Option<usize> {
    match strategy {
        "explicit" | "llm-iterative" | "autonomous" => None,
        _ => Some(5),
    }
}

impl SearchArgs {
    /// The strategy named by `--strategy`, or the default for whether an LLM is configured
    /// and whether there are measurements to learn from.
    pub fn strategy_name(&self, llm_configured: bool, has_corpus: bool) -> String {
        self.strategy
            .clone()
            .unwrap_or_else(|| strategies::default_name(llm_configured, has_corpus).to_string())
    }

    pub fn strategy_options(&self) -> StrategyOptions {
        StrategyOptions {
            fallback: match self.fallback.as_str() {
                "random" => FallbackMode::Random,
                "error" => FallbackMode::Error,
                _ => FallbackMode::Pattern,
            },
            initial_batch: self.llm_initial_batch,
            refinement_batch: self.llm_batch,
            temperature: self.llm_temperature,
            steps_file: self.steps.clone(),
            evaluate_steps: !self.no_step_evaluation,
            autonomous: AutonomousOptions {
                breakdown: !self.no_breakdown,
                replanning: !self.no_replanning,
                max_breakdowns: self.max_breakdowns,
                max_replanning: self.max_replanning,
                ..AutonomousOptions::default()
            },
            ..StrategyOptions::default()
        }
    }

    /// The driver's budget and convergence rules for a search with `strategy`.
    pub fn search_options(&self, strategy: &str) -> SearchOptions {
        SearchOptions {
            max_evals: self.max_evals,
            time_budget: self.time_budget.map(std::time::Duration::from_secs_f64),
            batch_size: self.batch_size.max(1),
            // Without --max-rounds, enough rounds for --max-evals to be spent: a budget of
            // 300 in rounds of 32 needs 10, not the default 5.
            max_rounds: self.max_rounds.or(default_rounds(strategy)
                .map(|r| r.max(self.max_evals.div_ceil(self.batch_size.max(1))))),
            patience: Some(self.patience),
            min_improvement: self.min_improvement,
            target_us: self.target_us,
            target_tflops: self.target_tflops,
            retime_top: self.retime,
            retime_rounds: self.retime_rounds as usize,
            seed: self.search_seed,
            ..SearchOptions::default()
        }
    }

    /// Builds the named strategy; a strategy that needs an LLM without one is a usage error.
    pub fn build_strategy(
        &self,
        name: &str,
        options: &StrategyOptions,
        llm: Option<SharedLlm>,
    ) -> Result<Box<dyn Strategy>> {
        match strategies::build(name, options, llm) {
            Ok(s) => Ok(s),
            Err(e @ StrategyError::NeedsLlm(_)) => Err(UsageError(format!(
                "{e}: configure one with --llm-url/--llm-model (and --llm-provider), or pick another --strategy ({})",
                strategies::names().join(", ")
            ))
            .into()),
            Err(e) => Err(UsageError(e.to_string()).into()),
        }
    }
}
