//! `explicit`: ordered tuning steps, each a group of parameters swept from the current best.
//!
//! Default chain: tile shape (MT0, MT1) -> waves (WG0, WG1) -> DepthU -> pipelining (PGR,
//! PLR) -> LDS (LPA, LPB, SW) -> split-K (GSU, algorithm) -> mapping (WGM, SU) -> vector
//! widths (GRVW, SVW). A step runs to completion (its whole sweep measured) before the next
//! one starts from the new best. A step with `depends_on` is skipped when a step it depends
//! on brought no gain; with an LLM configured, a step without `skip_evaluation` is first put
//! to the model, which may decline it. Steps can be loaded from a TOML file:
//!
//! ```toml
//! [[step]]
//! id = "tile"
//! params = ["MT0", "MT1"]
//! skip_evaluation = true
//!
//! [[step]]
//! id = "depth"
//! params = ["DepthU"]
//! depends_on = ["tile"]
//! values = { DepthU = [32, 64] }
//! ```

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Deserialize;

use super::sweep;
use crate::search::llm_port::{timed_complete, SharedLlm};
use crate::search::prompt::{PromptBudget, PromptBuilder};
use crate::search::reply::extract_json;
use crate::search::reply_schema;
use crate::search::strategy::{LlmRound, Proposal, ProposeCtx, Strategy, StrategyError};
use crate::space::{KernelConfig, ParamId};

/// One tuning step.
#[derive(Debug, Clone, PartialEq)]
pub struct TuningStep {
    pub id: String,
    pub params: Vec<ParamId>,
    pub depends_on: Vec<String>,
    /// Run without asking the LLM first.
    pub skip_evaluation: bool,
    /// Values to sweep per parameter; parameters not listed sweep their whole domain.
    pub values: Vec<(ParamId, Vec<i64>)>,
}

impl TuningStep {
    fn new(id: &str, params: &[ParamId]) -> Self {
        TuningStep {
            id: id.to_string(),
            params: params.to_vec(),
            depends_on: Vec::new(),
            skip_evaluation: false,
            values: Vec::new(),
        }
    }
}

/// The default chain.
pub fn default_steps() -> Vec<TuningStep> {
    use ParamId::*;
    let mut tile = TuningStep::new("tile", &[MacroTile0, MacroTile1]);
    tile.skip_evaluation = true;
    vec![
        tile,
        // SwapAB changes which way the warpgroups slice the tile: tuned with their layout.
        TuningStep::new("waves", &[WavesM, WavesN, SwapAB]),
        TuningStep::new("depth", &[DepthU]),
        TuningStep::new(
            "pipelining",
            &[PrefetchGlobalRead, PrefetchLocalRead, ProducerWarp],
        ),
        TuningStep::new("lds", &[LdsPadA, LdsPadB, LdsSwizzle]),
        TuningStep::new("split-k", &[GlobalSplitU, GlobalSplitUAlgorithm]),
        TuningStep::new("mapping", &[WorkGroupMapping, StaggerU]),
        TuningStep::new("vector-widths", &[GlobalReadVectorWidth, StoreVectorWidth]),
    ]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepsFile {
    step: Vec<StepEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepEntry {
    id: String,
    params: Vec<String>,
    #[serde(default)]
    depends_on: Vec<String>,
    #[serde(default)]
    skip_evaluation: bool,
    #[serde(default)]
    values: BTreeMap<String, Vec<toml::Value>>,
}

/// Parses a steps file; `origin` names it in errors.
pub fn parse_steps(text: &str, origin: &str) -> Result<Vec<TuningStep>, StrategyError> {
    let bad = |message: String| StrategyError::Steps {
        path: origin.to_string(),
        message,
    };
    let file: StepsFile = toml::from_str(text).map_err(|e| bad(e.message().to_string()))?;
    let param = |name: &str, step: &str| {
        ParamId::from_name(name)
            .ok_or_else(|| bad(format!("step `{step}`: unknown parameter `{name}`")))
    };
    let mut steps: Vec<TuningStep> = Vec::new();
    for e in file.step {
        if steps.iter().any(|s| s.id == e.id) {
            return Err(bad(format!("step id `{}` is used twice", e.id)));
        }
        for d in &e.depends_on {
            if !steps.iter().any(|s| &s.id == d) {
                return Err(bad(format!(
                    "step `{}` depends on `{d}`, which is not an earlier step",
                    e.id
                )));
            }
        }
        let params = e
            .params
            .iter()
            .map(|p| param(p, &e.id))
            .collect::<Result<Vec<_>, _>>()?;
        if params.is_empty() {
            return Err(bad(format!("step `{}` sweeps no parameter", e.id)));
        }
        let mut values = Vec::new();
        for (name, vals) in &e.values {
            let id = param(name, &e.id)?;
            if !params.contains(&id) {
                return Err(bad(format!(
                    "step `{}` gives values for {name}, which it does not sweep",
                    e.id
                )));
            }
            let parsed = vals
                .iter()
                .map(|v| match v {
                    toml::Value::Integer(i) => Some(*i),
                    toml::Value::String(s) => id.parse_value(s),
                    _ => None,
                })
                .collect::<Option<Vec<i64>>>()
                .ok_or_else(|| {
                    bad(format!(
                        "step `{}`: a value of {name} is not a number or a value string",
                        e.id
                    ))
                })?;
            values.push((id, parsed));
        }
        steps.push(TuningStep {
            id: e.id,
            params,
            depends_on: e.depends_on,
            skip_evaluation: e.skip_evaluation,
            values,
        });
    }
    if steps.is_empty() {
        return Err(bad("no [[step]] entries".into()));
    }
    Ok(steps)
}

pub fn load_steps(path: &Path) -> Result<Vec<TuningStep>, StrategyError> {
    let text = std::fs::read_to_string(path).map_err(|e| StrategyError::Steps {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    parse_steps(&text, &path.display().to_string())
}

/// How a finished step went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepResult {
    Gain,
    NoGain,
    Skipped,
}

struct Active {
    step: usize,
    queue: Vec<KernelConfig>,
    best_at_start: Option<f64>,
}

pub struct Explicit {
    steps: Vec<TuningStep>,
    llm: Option<SharedLlm>,
    /// Configs swept per step at most (random subset of larger products).
    pub max_sweep: usize,
    /// Relative gain a step must bring to count for its dependants.
    pub min_gain: f64,
    next: usize,
    active: Option<Active>,
    results: HashMap<String, StepResult>,
}

impl Explicit {
    pub fn new(steps: Vec<TuningStep>, llm: Option<SharedLlm>) -> Self {
        Explicit {
            steps,
            llm,
            max_sweep: 256,
            min_gain: 0.0,
            next: 0,
            active: None,
            results: HashMap::new(),
        }
    }

    /// How each step finished so far, by id.
    pub fn step_results(&self) -> &HashMap<String, StepResult> {
        &self.results
    }

    /// Asks the LLM whether a step is worth running; `None` when it could not answer.
    fn llm_declines(
        &self,
        ctx: &ProposeCtx<'_>,
        step: &TuningStep,
        p: &mut Proposal,
    ) -> Option<String> {
        let llm = self.llm.as_ref()?;
        let limits = llm.limits();
        let reply_tokens = limits.max_reply_tokens.min(256);
        let mut pb = PromptBuilder::new(ctx.space);
        pb.budget = Some(PromptBudget::for_reply(&limits, reply_tokens));
        let mut req = pb.step_worth(ctx.history, &step.id, &step.params);
        req.schema = Some(reply_schema::verdict());
        req.max_tokens = Some(reply_tokens);
        let (reply, t) = timed_complete(llm.as_ref(), &req);
        p.llm_time += t;
        // The model judges steps here; the configs are the step's, so none counts as its.
        let round = p.llm.get_or_insert_with(LlmRound::default);
        round.requests += 1;
        round.wall_s += t.as_secs_f64();
        let text = match reply {
            Ok(r) => {
                round.input_tokens += r.input_tokens;
                round.output_tokens += r.output_tokens;
                p.warnings.extend(r.notices);
                r.text
            }
            Err(e) => {
                p.warnings.push(format!(
                    "step `{}`: {e}; running it without the LLM's opinion",
                    step.id
                ));
                return None;
            }
        };
        let v = extract_json(&text);
        let run = v
            .as_ref()
            .and_then(|v| v.get("run"))
            .and_then(|r| r.as_bool());
        let reason = v
            .as_ref()
            .and_then(|v| v.get("reason"))
            .and_then(|r| r.as_str())
            .unwrap_or("")
            .to_string();
        match run {
            Some(false) => Some(reason),
            Some(true) => None,
            None => {
                p.warnings.push(format!(
                    "step `{}`: the LLM's answer had no `run` field; running the step",
                    step.id
                ));
                None
            }
        }
    }
}

impl Strategy for Explicit {
    fn name(&self) -> &str {
        "explicit"
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        let mut p = Proposal::default();
        let n = ctx.want(ctx.batch);
        loop {
            if let Some(active) = &mut self.active {
                active.queue.retain(|c| !ctx.history.contains(c));
                if !active.queue.is_empty() {
                    let take = n.min(active.queue.len());
                    p.configs = active.queue.drain(..take).collect();
                    return Ok(p);
                }
                let best = ctx.history.best().and_then(|e| e.median_us);
                let gain = match (active.best_at_start, best) {
                    (None, Some(_)) => true,
                    (Some(b), Some(a)) => a < b * (1.0 - self.min_gain),
                    _ => false,
                };
                let id = self.steps[active.step].id.clone();
                p.notes.push(format!(
                    "step `{id}` {}",
                    if gain {
                        "improved the best"
                    } else {
                        "brought no gain"
                    }
                ));
                self.results.insert(
                    id,
                    if gain {
                        StepResult::Gain
                    } else {
                        StepResult::NoGain
                    },
                );
                self.active = None;
                continue;
            }
            let Some(step) = self.steps.get(self.next).cloned() else {
                p.exhausted = true;
                return Ok(p);
            };
            self.next += 1;
            if let Some(dep) = step
                .depends_on
                .iter()
                .find(|d| self.results.get(*d) != Some(&StepResult::Gain))
            {
                p.notes.push(format!(
                    "step `{}` skipped: `{dep}` brought no gain",
                    step.id
                ));
                self.results.insert(step.id.clone(), StepResult::Skipped);
                continue;
            }
            if !step.skip_evaluation {
                if let Some(reason) = self.llm_declines(ctx, &step, &mut p) {
                    p.notes
                        .push(format!("step `{}` skipped by the LLM: {reason}", step.id));
                    self.results.insert(step.id.clone(), StepResult::Skipped);
                    continue;
                }
            }
            let base = ctx.incumbent()?;
            let changes: Vec<(ParamId, Vec<i64>)> = step
                .params
                .iter()
                .map(|id| {
                    let vals = step
                        .values
                        .iter()
                        .find(|(p, _)| p == id)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_else(|| ctx.space.domain(*id).values.clone());
                    (*id, vals)
                })
                .collect();
            let queue = sweep(ctx, &base, &changes, self.max_sweep);
            p.notes.push(format!(
                "step `{}`: {} config(s) from {}",
                step.id,
                queue.len(),
                base.name()
            ));
            self.active = Some(Active {
                step: self.next - 1,
                queue,
                best_at_start: ctx.history.best().and_then(|e| e.median_us),
            });
        }
    }
}
