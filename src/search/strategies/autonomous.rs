//! `autonomous`: plan-and-solve over kernel parameters.
//!
//! plan (the LLM lists steps, each a parameter-change intent) -> validate each step (a step
//! that changes no parameter of this space, or only to values outside it, is rejected and
//! counted as an invalid suggestion) -> optional breakdown (the LLM splits a large step into
//! smaller ones, at most `max_breakdowns` times) -> execute (the step's changes applied to
//! the current best become configs) -> when the plan runs out, optional replanning (at most
//! `max_replanning` times; an empty plan ends the search). Breakdown and replanning can be
//! switched off. Every request carries the steps' reply schema (each parameter's domain)
//! and is sized to the model's context; each round reports what the model contributed.

use std::collections::VecDeque;

use serde_json::Value;

use super::sweep;
use crate::search::llm_port::{timed_complete, LlmRequest, SharedLlm};
use crate::search::prompt::{PromptBudget, PromptBuilder};
use crate::search::reply::extract_json;
use crate::search::reply_schema;
use crate::search::strategy::{LlmRound, Proposal, ProposeCtx, Rejected, Strategy, StrategyError};
use crate::space::{KernelConfig, ParamId, Space};

#[derive(Debug, Clone, PartialEq)]
pub struct AutonomousOptions {
    pub breakdown: bool,
    pub replanning: bool,
    pub max_breakdowns: usize,
    pub max_replanning: usize,
    /// Configs one step may produce at most.
    pub max_step_configs: usize,
}

impl Default for AutonomousOptions {
    fn default() -> Self {
        AutonomousOptions {
            breakdown: true,
            replanning: true,
            max_breakdowns: 3,
            max_replanning: 3,
            max_step_configs: 64,
        }
    }
}

/// One validated step: what it intends and the parameter values it tries.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanStep {
    pub description: String,
    pub changes: Vec<(ParamId, Vec<i64>)>,
}

impl PlanStep {
    fn combinations(&self) -> usize {
        self.changes.iter().map(|(_, v)| v.len().max(1)).product()
    }

    fn summary(&self) -> String {
        let ch = self
            .changes
            .iter()
            .map(|(p, v)| {
                format!(
                    "{}={}",
                    p.name(),
                    v.iter()
                        .map(|x| p.format_value(*x))
                        .collect::<Vec<_>>()
                        .join("|")
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        format!("{} [{ch}]", self.description)
    }
}

/// Reads `{"steps": [{"description", "changes": {Param: [values]}}]}` (or a bare list, or
/// `{"parameter": P, "values": [...]}` steps) and validates each step against the space.
pub fn parse_steps(text: &str, space: &Space) -> (Vec<PlanStep>, Vec<Rejected>) {
    let mut steps = Vec::new();
    let mut rejected = Vec::new();
    let items: Vec<Value> = match extract_json(text) {
        Some(Value::Array(a)) => a,
        Some(v) => match v.get("steps").or_else(|| v.get("plan")) {
            Some(Value::Array(a)) => a.clone(),
            _ => vec![v],
        },
        None => {
            rejected.push(Rejected {
                suggestion: text.chars().take(160).collect(),
                reason: "the reply contains no JSON plan".into(),
            });
            return (steps, rejected);
        }
    };
    for item in items {
        match validate_step(&item, space) {
            Ok(s) => steps.push(s),
            Err(reason) => rejected.push(Rejected {
                suggestion: item.to_string().chars().take(160).collect(),
                reason,
            }),
        }
    }
    (steps, rejected)
}

fn validate_step(item: &Value, space: &Space) -> Result<PlanStep, String> {
    let description = ["description", "step", "intent", "name"]
        .iter()
        .find_map(|k| item.get(*k).and_then(|v| v.as_str()))
        .unwrap_or("")
        .to_string();
    let mut raw: Vec<(String, Value)> = Vec::new();
    if let Some(Value::Object(ch)) = item.get("changes").or_else(|| item.get("parameters")) {
        raw.extend(ch.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    if let Some(p) = item
        .get("parameter")
        .or_else(|| item.get("param"))
        .and_then(|p| p.as_str())
    {
        let v = item
            .get("values")
            .or_else(|| item.get("value"))
            .cloned()
            .unwrap_or(Value::Null);
        raw.push((p.to_string(), v));
    }
    if raw.is_empty() {
        return Err(format!("`{description}` is not a parameter change"));
    }
    let mut changes = Vec::new();
    let mut problems = Vec::new();
    for (name, v) in raw {
        let Some(id) = ParamId::from_name(&name) else {
            problems.push(format!("`{name}` is not a parameter of this space"));
            continue;
        };
        let list = match v {
            // An empty list leaves the parameter as it is (the reply schema lists them all).
            Value::Array(a) if a.is_empty() => continue,
            Value::Array(a) => a,
            other => vec![other],
        };
        let dom = space.domain(id);
        let vals: Vec<i64> = list
            .iter()
            .filter_map(|x| match x {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => id.parse_value(s),
                _ => None,
            })
            .filter(|x| dom.contains(*x))
            .fold(Vec::new(), |mut acc, x| {
                if !acc.contains(&x) {
                    acc.push(x);
                }
                acc
            });
        if vals.is_empty() {
            problems.push(format!("no value given for {} is in the space", id.name()));
        } else {
            changes.push((id, vals));
        }
    }
    if changes.is_empty() {
        return Err(format!("`{description}`: {}", problems.join("; ")));
    }
    Ok(PlanStep {
        description,
        changes,
    })
}

pub struct Autonomous {
    llm: SharedLlm,
    pub options: AutonomousOptions,
    queue: VecDeque<PlanStep>,
    planned: bool,
    breakdowns: usize,
    replans: usize,
    done: Vec<String>,
    pending: Vec<KernelConfig>,
}

impl Autonomous {
    pub fn new(llm: SharedLlm, options: AutonomousOptions) -> Self {
        Autonomous {
            llm,
            options,
            queue: VecDeque::new(),
            planned: false,
            breakdowns: 0,
            replans: 0,
            done: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Steps executed so far, in order.
    pub fn executed(&self) -> &[String] {
        &self.done
    }

    /// Sends a planning request (with the steps' schema and a reply limit) and reads the
    /// steps; the round's accounting in `p.llm` counts it.
    fn ask(
        &self,
        req: LlmRequest,
        space: &Space,
        p: &mut Proposal,
    ) -> Result<Vec<PlanStep>, StrategyError> {
        let mut req = req;
        req.schema = Some(reply_schema::steps(space));
        req.max_tokens = Some(self.reply_tokens());
        let (reply, t) = timed_complete(self.llm.as_ref(), &req);
        p.llm_time += t;
        let round = p.llm.get_or_insert_with(LlmRound::default);
        round.requests += 1;
        round.wall_s += t.as_secs_f64();
        let reply = reply?;
        round.input_tokens += reply.input_tokens;
        round.output_tokens += reply.output_tokens;
        p.warnings.extend(reply.notices);
        let (steps, rejected) = parse_steps(&reply.text, space);
        round.suggested += steps.len() + rejected.len();
        round.valid += steps.len();
        p.rejected.extend(rejected);
        Ok(steps)
    }

    /// The reply limit of a planning request: what the user allows, at most half the context.
    fn reply_tokens(&self) -> u32 {
        let l = self.llm.limits();
        l.max_reply_tokens.min(l.context_tokens / 2).max(1)
    }

    fn prompts<'s>(&self, space: &'s Space) -> PromptBuilder<'s> {
        let mut pb = PromptBuilder::new(space);
        pb.budget = Some(PromptBudget::for_reply(
            &self.llm.limits(),
            self.reply_tokens(),
        ));
        pb
    }
}

impl Strategy for Autonomous {
    fn name(&self) -> &str {
        "autonomous"
    }

    fn propose(&mut self, ctx: &mut ProposeCtx<'_>) -> Result<Proposal, StrategyError> {
        let mut p = Proposal::default();
        let n = ctx.want(ctx.batch);
        // Each pass either returns or consumes a step or an LLM allowance, so this ends.
        loop {
            self.pending.retain(|c| !ctx.history.contains(c));
            if !self.pending.is_empty() {
                let take = n.min(self.pending.len());
                p.configs = self.pending.drain(..take).collect();
                // Every config executes a step of the model's plan.
                p.llm.get_or_insert_with(LlmRound::default).from_llm = p.configs.len();
                return Ok(p);
            }
            let pb = self.prompts(ctx.space);
            if !self.planned {
                let steps = self.ask(pb.plan(ctx.history), ctx.space, &mut p)?;
                if steps.is_empty() {
                    return Err(StrategyError::NoValidSuggestion {
                        rejected: std::mem::take(&mut p.rejected),
                        duplicates: 0,
                    });
                }
                self.planned = true;
                p.notes.push(format!("plan: {} step(s)", steps.len()));
                self.queue.extend(steps);
                continue;
            }
            if let Some(step) = self.queue.pop_front() {
                let large = step.changes.len() > 1 || step.combinations() > n;
                if self.options.breakdown && large && self.breakdowns < self.options.max_breakdowns
                {
                    self.breakdowns += 1;
                    match self.ask(
                        pb.breakdown(ctx.history, &step.summary()),
                        ctx.space,
                        &mut p,
                    ) {
                        Ok(sub) if sub.len() > 1 => {
                            p.notes.push(format!(
                                "step `{}` broken into {} steps",
                                step.description,
                                sub.len()
                            ));
                            for s in sub.into_iter().rev() {
                                self.queue.push_front(s);
                            }
                            continue;
                        }
                        Ok(_) => {}
                        Err(e) => p.warnings.push(format!(
                            "breakdown of `{}`: {e}; executing it whole",
                            step.description
                        )),
                    }
                }
                let base = ctx.incumbent()?;
                let configs = sweep(ctx, &base, &step.changes, self.options.max_step_configs);
                p.notes.push(format!(
                    "step: {} -> {} config(s)",
                    step.summary(),
                    configs.len()
                ));
                self.done.push(step.summary());
                self.pending = configs;
                continue;
            }
            if !self.options.replanning || self.replans >= self.options.max_replanning {
                p.exhausted = true;
                return Ok(p);
            }
            self.replans += 1;
            match self.ask(pb.replan(ctx.history, &self.done), ctx.space, &mut p) {
                Ok(steps) if steps.is_empty() => {
                    p.notes
                        .push("replanning: the LLM proposes no further steps".into());
                    p.exhausted = true;
                    return Ok(p);
                }
                Ok(steps) => {
                    p.notes
                        .push(format!("replan #{}: {} step(s)", self.replans, steps.len()));
                    self.queue.extend(steps);
                }
                Err(e) => return Err(e),
            }
        }
    }
}
