//! Prompt text for the LLM-driven strategies.
//!
//! Every request is assembled from the same sections so the model always sees the same
//! facts: the terminology of every parameter (`ParamId::description`), the hardware spec,
//! the problem (dims, dtypes, layout, arithmetic intensity, roofline bound), the space as
//! JSON with its constraints, and — once there are results — the ranked history, the
//! failures with their reasons, rejected suggestions, and observations computed from the
//! data. Each strategy then adds its own question (a batch, one edit, a plan, ...).
//!
//! A prompt must leave room for the reply in the model's context. With a [`PromptBudget`]
//! the builder tries the [`DETAIL`] levels in turn, from everything down to the essentials,
//! and sends the first that fits the budget: fewer history rows (the rest summarised in one
//! line: how many, and the range of their times), failures as counts per status, compact
//! JSON. Tables are shortened by whole rows, never cut in the middle.

use serde_json::{json, Map, Value};

use super::history::History;
use super::llm_port::{LlmLimits, LlmRequest};
use super::observations;
use super::strategy::Rejected;
use crate::measure::stats::Rates;
use crate::space::{KernelConfig, ParamId, Space};

/// Rows of the ranked history table sent to the model (at full detail).
pub const HISTORY_ROWS: usize = 30;
/// Failed configs listed with their reasons (at full detail).
pub const FAILURE_ROWS: usize = 12;

/// How much of each section a prompt carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detail {
    pub history_rows: usize,
    pub failure_rows: usize,
    pub rejected_rows: usize,
    pub observation_lines: usize,
    /// Parameter descriptions in the terminology (names and abbreviations only without).
    pub descriptions: bool,
    /// The space JSON indented, with each parameter's description.
    pub pretty_space: bool,
}

/// The detail levels a prompt steps down through until it fits, most first.
pub const DETAIL: [Detail; 5] = [
    Detail {
        history_rows: HISTORY_ROWS,
        failure_rows: FAILURE_ROWS,
        rejected_rows: FAILURE_ROWS,
        observation_lines: 8,
        descriptions: true,
        pretty_space: true,
    },
    Detail {
        history_rows: 20,
        failure_rows: 8,
        rejected_rows: 8,
        observation_lines: 6,
        descriptions: true,
        pretty_space: false,
    },
    Detail {
        history_rows: 12,
        failure_rows: 4,
        rejected_rows: 4,
        observation_lines: 4,
        descriptions: true,
        pretty_space: false,
    },
    Detail {
        history_rows: 6,
        failure_rows: 0,
        rejected_rows: 2,
        observation_lines: 3,
        descriptions: false,
        pretty_space: false,
    },
    Detail {
        history_rows: 3,
        failure_rows: 0,
        rejected_rows: 0,
        observation_lines: 2,
        descriptions: false,
        pretty_space: false,
    },
];

/// Tokens a prompt may take, and how to count them before sending.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PromptBudget {
    pub prompt_tokens: usize,
    pub chars_per_token: f64,
}

impl PromptBudget {
    /// What is left of the context for the prompt once `reply_tokens` are set aside, less a
    /// margin for the chat template and the estimate's error (64 tokens and 4%).
    pub fn for_reply(limits: &LlmLimits, reply_tokens: u32) -> Self {
        let context = limits.context_tokens as usize;
        let margin = 64 + context / 25;
        PromptBudget {
            prompt_tokens: context.saturating_sub(reply_tokens as usize + margin),
            chars_per_token: limits.chars_per_token.max(0.5),
        }
    }

    /// Estimated tokens of a text.
    pub fn tokens(&self, text: &str) -> usize {
        (text.chars().count() as f64 / self.chars_per_token).ceil() as usize
    }

    pub fn fits(&self, system: &str, user: &str) -> bool {
        self.tokens(system) + self.tokens(user) <= self.prompt_tokens
    }
}

const SYSTEM: &str = "You are an expert GPU performance engineer tuning a parameterised GEMM \
kernel (Tensile-style parameters) for one exact problem on one GPU. You reason about tiles, \
wave quantisation, occupancy, LDS/shared memory, pipelining, memory coalescing and split-K. \
Every config you suggest must satisfy the listed constraints. Answer with JSON only.";

/// Builds requests for one space (problem + hardware).
pub struct PromptBuilder<'a> {
    pub space: &'a Space,
    pub temperature: f32,
    /// The most the prompt may take; `None` sends everything.
    pub budget: Option<PromptBudget>,
}

impl<'a> PromptBuilder<'a> {
    pub fn new(space: &'a Space) -> Self {
        PromptBuilder {
            space,
            temperature: 0.7,
            budget: None,
        }
    }

    fn request(&self, user: String) -> LlmRequest {
        LlmRequest {
            system: SYSTEM.to_string(),
            user,
            temperature: self.temperature,
            json: true,
            ..LlmRequest::default()
        }
    }

    /// The user message at the most detail that fits the budget (the least detail when none
    /// does: the server then says the prompt is too long, and the round falls back).
    fn fitted(&self, build: impl Fn(&Detail) -> String) -> String {
        let Some(budget) = &self.budget else {
            return build(&DETAIL[0]);
        };
        let mut text = String::new();
        for d in &DETAIL {
            text = build(d);
            if budget.fits(SYSTEM, &text) {
                break;
            }
        }
        text
    }

    /// Parameter names, abbreviations and meanings.
    pub fn terminology(&self) -> String {
        self.terminology_at(&DETAIL[0])
    }

    fn terminology_at(&self, d: &Detail) -> String {
        let mut s = String::from("TERMINOLOGY:\n");
        if !d.descriptions {
            let names: Vec<String> = ParamId::ALL
                .iter()
                .map(|p| format!("{} ({})", p.name(), p.short()))
                .collect();
            s.push_str(&format!("- parameters: {}\n", names.join(", ")));
        }
        for p in ParamId::ALL.iter().filter(|_| d.descriptions) {
            s.push_str(&format!(
                "- {} ({}): {}\n",
                p.name(),
                p.short(),
                p.description()
            ));
        }
        s.push_str("- Kernel names join the parameters: MT<MT0>x<MT1>x<DepthU>_MI<M>x<N>x<K>_WG<WavesM>x<WavesN>_PGR_PLR_LPA_LPB_SW_GSU<n>[A|R]_WGM_GRVW_SVW_SU.\n");
        s
    }

    pub fn hardware(&self) -> String {
        let hw = &self.space.hw;
        let t = self.space.problem.a_type;
        format!(
            "HARDWARE:\n- GPU: {} ({:?}, {})\n- Compute units: {}, wave/warp size {}, max {} threads per workgroup, max {} waves per CU\n- LDS/shared memory: {} KiB per workgroup, {} KiB per CU; {} registers per CU, max {} per thread\n- Memory: {:.0} GB, {:.0} GB/s; L2 {} MiB\n- Peak {} matrix throughput: {:.1} TFLOP/s\n",
            hw.name,
            hw.vendor,
            hw.arch,
            hw.compute_units,
            hw.wave_size,
            hw.max_threads_per_workgroup,
            hw.max_waves_per_cu,
            hw.lds_bytes_per_workgroup / 1024,
            hw.lds_bytes_per_cu / 1024,
            hw.registers_per_cu,
            hw.max_registers_per_thread,
            hw.memory_bytes as f64 / 1e9,
            hw.memory_bandwidth_gbps,
            hw.l2_bytes >> 20,
            t,
            hw.peak_tflops_for(t),
        )
    }

    pub fn problem(&self) -> String {
        let p = &self.space.problem;
        let hw = &self.space.hw;
        let ai = p.arithmetic_intensity();
        let ridge = hw.peak_tflops_of(p) * 1e12 / (hw.memory_bandwidth_gbps * 1e9);
        let bound = if ai < ridge {
            "memory-bound"
        } else {
            "compute-bound"
        };
        format!(
            "PROBLEM (column-major BLAS, D = alpha*op(A)*op(B) + beta*C):\n- M={} N={} K={} batch={}, transA={} transB={} ({})\n- types: A={} B={} C={} D={}, compute {}\n- lda={} ldb={} ldc={} ldd={}, alpha={} beta={}\n- {:.3} GFLOP, {:.1} MB compulsory traffic, arithmetic intensity {:.1} FLOP/byte (ridge point {:.1}): {}\n- roofline lower bound: {:.2} us\n",
            p.m,
            p.n,
            p.k,
            p.batch,
            p.trans_a,
            p.trans_b,
            p.layout(),
            p.a_type,
            p.b_type,
            p.c_type,
            p.d_type,
            p.compute_type,
            p.lda,
            p.ldb,
            p.ldc,
            p.ldd,
            p.alpha,
            p.beta,
            p.flops() / 1e9,
            p.min_bytes() / 1e6,
            ai,
            ridge,
            bound,
            hw.roofline_us(p.flops(), p.min_bytes(), p.a_type),
        )
    }

    /// The rules of `constraints::check`, in words, with this problem's numbers filled in.
    pub fn constraints(&self) -> Vec<String> {
        let hw = &self.space.hw;
        let p = &self.space.problem;
        let shapes = hw
            .mi_shapes_for(p)
            .iter()
            .map(|s| format!("{}x{}x{}", s[0], s[1], s[2]))
            .collect::<Vec<_>>();
        vec![
            format!("WavesM*WavesN*{} <= {} threads", hw.wave_size, hw.max_threads_per_workgroup),
            "LdsSwizzle=1 requires LdsPadA=0 and LdsPadB=0".into(),
            "MacroTile0 and MacroTile1 are multiples of 16; DepthU is a multiple of 8".into(),
            if shapes.is_empty() {
                "MatrixInstruction must be 1x1x1 (no matrix instructions for this type)".into()
            } else {
                format!("MatrixInstruction is one of {}", shapes.join(", "))
            },
            "MacroTile0/WavesM is a multiple of MI M, MacroTile1/WavesN a multiple of MI N, DepthU a multiple of MI K".into(),
            format!(
                "GlobalReadVectorWidth*{} bytes <= 16; DepthU and MacroTile0*DepthU, MacroTile1*DepthU are multiples of threads*GlobalReadVectorWidth; lda={} and ldb={} are multiples of it",
                p.a_type.bytes(), p.lda, p.ldb
            ),
            format!("StoreVectorWidth*{} bytes <= 16 and divides MacroTile0", p.d_type.bytes()),
            format!(
                "LDS bytes = PrefetchGlobalRead * (A tile + B tile, each row padded by LdsPad) * {} bytes, at least MacroTile0*MacroTile1*4 (epilogue), must be <= {}",
                p.a_type.bytes(), hw.lds_bytes_per_workgroup
            ),
            format!("estimated registers per thread (accumulators MT0*MT1/threads + fragments + staging + 40) <= {}", hw.max_registers_per_thread),
            format!("GlobalSplitU <= ceil(K/DepthU) = ceil({}/DepthU)", p.k),
            format!(
                "MacroTile0 <= {} and MacroTile1 <= {} (next power of two of M and N)",
                (p.m.max(16) as u64).next_power_of_two(),
                (p.n.max(16) as u64).next_power_of_two()
            ),
        ]
    }

    /// The space as JSON: per parameter its meaning, allowed values and default.
    pub fn space_json(&self) -> Value {
        self.space_json_at(true)
    }

    fn space_json_at(&self, descriptions: bool) -> Value {
        let mut params = Map::new();
        for d in &self.space.domains {
            let mut p = json!({
                "short": d.id.short(),
                "values": d.values.iter().map(|v| value_json(d.id, *v)).collect::<Vec<_>>(),
                "default": value_json(d.id, d.default),
            });
            if descriptions {
                p["description"] = json!(d.id.description());
            }
            params.insert(d.id.name().to_string(), p);
        }
        json!({ "parameters": params, "constraints": self.constraints() })
    }

    /// Ranked table of timed configs (top rows only) plus counts; the rows left out are
    /// summarised in one line.
    pub fn history_table(&self, history: &History, rows: usize) -> String {
        let ranked = history.ranked();
        let mut s = format!(
            "HISTORY ({} configs evaluated, {} timed, {} failed), fastest first:\n| Rank | Kernel | Median (us) | TFLOP/s | % of roofline |\n|---|---|---|---|---|\n",
            history.len(),
            ranked.len(),
            history.len() - ranked.len()
        );
        for (i, e) in ranked.iter().take(rows).enumerate() {
            let us = e.median_us.unwrap_or(f64::NAN);
            let r = Rates::of(us, &self.space.problem, &self.space.hw);
            s.push_str(&format!(
                "| {} | {} | {:.2} | {:.1} | {:.1} |\n",
                i + 1,
                e.config.name(),
                us,
                r.tflops,
                r.roofline_pct
            ));
        }
        if ranked.len() > rows {
            let hidden = &ranked[rows..];
            let us = |e: &&crate::search::history::Evaluation| e.median_us.unwrap_or(f64::NAN);
            s.push_str(&format!(
                "({} slower configs not shown, {:.2}-{:.2} us)\n",
                hidden.len(),
                hidden.first().map(us).unwrap_or(f64::NAN),
                hidden.last().map(us).unwrap_or(f64::NAN),
            ));
        }
        s
    }

    /// Failed configs: the count per status, then the latest `rows` with their reasons.
    pub fn failures(&self, history: &History, rows: usize) -> String {
        let fails = history.failures();
        if fails.is_empty() {
            return String::new();
        }
        let mut by_status: Vec<(&str, usize)> = Vec::new();
        for e in &fails {
            match by_status.iter_mut().find(|(s, _)| *s == e.outcome.status()) {
                Some((_, n)) => *n += 1,
                None => by_status.push((e.outcome.status(), 1)),
            }
        }
        let counts: Vec<String> = by_status.iter().map(|(s, n)| format!("{n} {s}")).collect();
        let mut s = format!("FAILED CONFIGS ({}: {}):\n", fails.len(), counts.join(", "));
        for e in fails.iter().rev().take(rows) {
            s.push_str(&format!(
                "- {}: {} ({})\n",
                e.config.name(),
                e.outcome.status(),
                e.outcome.reason()
            ));
        }
        s
    }

    pub fn rejected(&self, rejected: &[Rejected], rows: usize) -> String {
        if rejected.is_empty() {
            return String::new();
        }
        if rows == 0 {
            return format!(
                "{} OF YOUR EARLIER SUGGESTIONS BROKE THE RULES (not run).\n",
                rejected.len()
            );
        }
        let mut s = "YOUR EARLIER SUGGESTIONS THAT BROKE THE RULES (not run):\n".to_string();
        for r in rejected.iter().rev().take(rows) {
            s.push_str(&format!("- {}: {}\n", r.suggestion, r.reason));
        }
        s
    }

    pub fn observations(&self, history: &History) -> String {
        self.observations_at(history, DETAIL[0].observation_lines)
    }

    fn observations_at(&self, history: &History, lines: usize) -> String {
        let lines = observations::summarize(history, lines);
        if lines.is_empty() {
            return String::new();
        }
        let mut s = "OBSERVATIONS (computed from the measurements):\n".to_string();
        for l in lines {
            s.push_str(&format!("- {l}\n"));
        }
        s
    }

    fn best_line(&self, history: &History) -> String {
        match history.best() {
            Some(b) => format!(
                "BEST SO FAR: {} at {:.2} us\n{}\n",
                b.config.name(),
                b.median_us.unwrap_or(f64::NAN),
                config_json(&b.config)
            ),
            None => "BEST SO FAR: none timed yet\n".to_string(),
        }
    }

    /// Hardware, problem, terminology and space: the part every request shares.
    pub fn context(&self) -> String {
        self.context_at(&DETAIL[0])
    }

    fn context_at(&self, d: &Detail) -> String {
        let space = if d.pretty_space {
            serde_json::to_string_pretty(&self.space_json_at(true))
        } else {
            serde_json::to_string(&self.space_json_at(false))
        };
        format!(
            "{}\n{}\n{}\nCONFIG SPACE:\n{}\n",
            self.hardware(),
            self.problem(),
            self.terminology_at(d),
            space.unwrap_or_default()
        )
    }

    /// Results so far: table, failures, rejected suggestions, observations, best.
    pub fn results(&self, history: &History, rejected: &[Rejected]) -> String {
        self.results_at(history, rejected, &DETAIL[0])
    }

    fn results_at(&self, history: &History, rejected: &[Rejected], d: &Detail) -> String {
        format!(
            "{}\n{}{}{}\n{}",
            self.history_table(history, d.history_rows),
            self.failures(history, d.failure_rows),
            self.rejected(rejected, d.rejected_rows),
            self.observations_at(history, d.observation_lines),
            self.best_line(history)
        )
    }

    /// Round 1 of the batch strategy: diverse configs with reasoning. `names`: configs are
    /// written as kernel names (the reply schema lists the valid ones).
    pub fn initial_batch(&self, n: usize, names: bool) -> LlmRequest {
        let format = if names { NAMES_FORMAT } else { BATCH_FORMAT };
        self.request(self.fitted(|d| {
            format!(
                "{}\nGenerate {n} diverse configurations to benchmark. Include conservative configs (safe, \
                 close to the defaults), aggressive configs (push tile size, pipelining and vector widths to \
                 the limits the constraints allow) and exploratory configs (unusual combinations, e.g. split-K \
                 for small M*N). Give every parameter of each config.\n\n{format}",
                self.context_at(d),
            )
        }))
    }

    /// Rounds 2+ of the batch strategy: learn from the history.
    pub fn refinement_batch(
        &self,
        history: &History,
        rejected: &[Rejected],
        n: usize,
        names: bool,
    ) -> LlmRequest {
        let format = if names {
            REFINE_NAMES_FORMAT
        } else {
            REFINE_FORMAT
        };
        self.request(self.fitted(|d| {
            format!(
                "{}\n{}\nGenerate {n} NEW configurations (not in the history) that might beat the best. \
                 Exploit: variations of the top 3. Explore: regions the history has not covered. Escape: if the \
                 last rounds did not improve, try radically different configs.\n\n{format}",
                self.context_at(d),
                self.results_at(history, rejected, d),
            )
        }))
    }

    /// One edit of the best config (iterative strategy).
    pub fn iterative_edit(&self, history: &History, rejected: &[Rejected]) -> LlmRequest {
        let last = history
            .entries()
            .last()
            .map(|e| {
                format!(
                    "LAST TRIED: {} -> {}\n",
                    e.config.name(),
                    e.median_us
                        .map(|m| format!("{m:.2} us"))
                        .unwrap_or_else(|| format!(
                            "{} ({})",
                            e.outcome.status(),
                            e.outcome.reason()
                        ))
                )
            })
            .unwrap_or_default();
        self.request(self.fitted(|d| {
            format!(
                "{}\n{}{}\nPropose ONE modified configuration of the best config that you expect to be faster. \
                 Change one to three parameters and explain why.\n\nReturn JSON: {{\"reasoning\": \"...\", \"config\": {{\"<Parameter>\": <value>, ...}}}}",
                self.context_at(d),
                self.results_at(history, rejected, d),
                last
            )
        }))
    }

    /// A question about the results so far, at the detail that fits: the context, the
    /// results, then `ask` (which ends with the reply format).
    fn about_results(&self, history: &History, ask: &str) -> LlmRequest {
        self.request(self.fitted(|d| {
            format!(
                "{}\n{}\n{ask}",
                self.context_at(d),
                self.results_at(history, &[], d),
            )
        }))
    }

    /// Autonomous strategy: a plan of parameter changes.
    pub fn plan(&self, history: &History) -> LlmRequest {
        self.about_results(
            history,
            &format!(
                "Plan the tuning of this kernel as an ordered list of steps. Each step changes one or a \
                 few parameters of the best config to values worth measuring. Steps that are not parameter \
                 changes (profiling, rewriting code, compiler flags) cannot be executed.\n\n{STEPS_FORMAT}"
            ),
        )
    }

    /// Autonomous strategy: split a step into smaller ones.
    pub fn breakdown(&self, history: &History, step: &str) -> LlmRequest {
        self.about_results(
            history,
            &format!(
                "The next tuning step is:\n{step}\nIf it changes several parameters at once or tries many \
                 values, split it into smaller steps that can be measured one after another; otherwise return \
                 it unchanged as a single step.\n\n{STEPS_FORMAT}"
            ),
        )
    }

    /// Autonomous strategy: new steps after the plan ran out (empty list = done).
    pub fn replan(&self, history: &History, done: &[String]) -> LlmRequest {
        let done_list = done.iter().map(|d| format!("- {d}\n")).collect::<String>();
        self.about_results(
            history,
            &format!(
                "STEPS ALREADY EXECUTED:\n{done_list}\nDecide whether more tuning steps are worth trying. \
                 Return new steps, or an empty list if the kernel is tuned.\n\n{STEPS_FORMAT}"
            ),
        )
    }

    /// Explicit strategy: is this step worth running from the current best?
    pub fn step_worth(&self, history: &History, step: &str, params: &[ParamId]) -> LlmRequest {
        let names = params
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ");
        self.about_results(
            history,
            &format!(
                "The next tuning step is `{step}`: sweep {names} from the best config. Is it likely to \
                 improve performance for this problem on this GPU?\n\nReturn JSON: {{\"run\": true|false, \"reason\": \"...\"}}"
            ),
        )
    }
}

const BATCH_FORMAT: &str = "Return JSON:\n{\"configs\": [{\"reasoning\": \"why this config\", \"config\": {\"MacroTile0\": 128, \"MacroTile1\": 64, \"DepthU\": 64, \"MatrixInstruction\": \"16x8x16\", ...every parameter...}}, ...]}";

const NAMES_FORMAT: &str = "Return JSON:\n{\"configs\": [{\"reasoning\": \"why this config\", \"config\": \"<kernel name, e.g. MT128x64x64_MI16x8x16_WG2x2_...>\"}, ...]}\nEach config is a full kernel name.";

const REFINE_NAMES_FORMAT: &str = "Return JSON:\n{\"analysis\": \"what the results show\", \"strategy\": \"your plan for this round\", \"configs\": [{\"reasoning\": \"why\", \"config\": \"<kernel name>\"}, ...]}\nEach config is a full kernel name not yet in the history.";

const REFINE_FORMAT: &str = "Return JSON:\n{\"analysis\": \"what the results show\", \"strategy\": \"your plan for this round\", \"configs\": [{\"reasoning\": \"why\", \"config\": {\"<Parameter>\": <value>, ...}}, ...]}\nParameters you leave out keep the best config's value.";

const STEPS_FORMAT: &str = "Return JSON:\n{\"steps\": [{\"description\": \"what and why\", \"changes\": {\"<Parameter>\": [<value>, ...]}}, ...]}";

/// A config as the model should write it: parameter name -> value.
pub fn config_json(c: &KernelConfig) -> Value {
    let mut m = Map::new();
    for p in ParamId::ALL {
        m.insert(p.name().to_string(), value_json(p, p.get(c)));
    }
    Value::Object(m)
}

fn value_json(p: ParamId, v: i64) -> Value {
    match p {
        ParamId::MatrixInstruction => Value::String(p.format_value(v)),
        _ => Value::from(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::GemmProblem;
    use rand::SeedableRng;

    fn timed(us: f64) -> crate::device::Outcome {
        crate::device::Outcome::modelled(vec![us])
    }

    #[test]
    fn refinement_prompt_has_every_section() {
        let space = Space::for_problem(
            &GemmProblem::new(16032, 109, 16384),
            &HwSpec::by_name("MI300X").unwrap(),
        );
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut h = History::new();
        for i in 0..40 {
            let c = space.sample(&mut rng).unwrap();
            if i == 7 {
                h.push(
                    0,
                    c,
                    crate::device::Outcome::CompileFailed {
                        stderr: "\nerror: out of registers\n".into(),
                    },
                );
            } else {
                h.push(0, c, timed(100.0 + i as f64));
            }
        }
        let rejected = vec![Rejected {
            suggestion: "MT48x...".into(),
            reason: "tile-granularity: nope".into(),
        }];
        let req = PromptBuilder::new(&space).refinement_batch(&h, &rejected, 15, false);
        let u = &req.user;
        for needle in [
            "HARDWARE:",
            "MI300X",
            "M=16032 N=109 K=16384",
            "arithmetic intensity",
            "roofline lower bound",
            "TERMINOLOGY:",
            "GlobalSplitU (GSU)",
            "\"constraints\"",
            "\"LdsPadA\"",
            "| 1 | ",
            "(9 slower configs not shown, ",
            "FAILED CONFIGS (1: 1 ",
            "out of registers",
            "BROKE THE RULES",
            "tile-granularity: nope",
            "OBSERVATIONS",
            "BEST SO FAR",
            "Generate 15 NEW configurations",
            "\"analysis\"",
        ] {
            assert!(u.contains(needle), "missing `{needle}`");
        }
        assert!(req.json);
        // The config object written for the best round-trips through the reply parser.
        let best = h.best().unwrap().config;
        let back = crate::search::reply::config_from_value(
            &config_json(&best),
            &space.default_config().unwrap(),
        )
        .unwrap();
        assert_eq!(back, best);
    }

    #[test]
    fn a_budget_shortens_tables_by_whole_rows_until_the_prompt_fits() {
        let space = Space::for_problem(
            &GemmProblem::new(16032, 109, 16384),
            &HwSpec::by_name("H200").unwrap(),
        );
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut h = History::new();
        for i in 0..200 {
            h.push(0, space.sample(&mut rng).unwrap(), timed(50.0 + i as f64));
        }
        let full = PromptBuilder::new(&space).refinement_batch(&h, &[], 15, false);
        let limits = LlmLimits {
            context_tokens: 8192,
            max_reply_tokens: 2048,
            chars_per_token: 2.5,
        };
        let budget = PromptBudget::for_reply(&limits, 2048);
        assert!(
            !budget.fits(&full.system, &full.user),
            "the test needs a prompt too long"
        );
        let mut pb = PromptBuilder::new(&space);
        pb.budget = Some(budget);
        let fitted = pb.refinement_batch(&h, &[], 15, false);
        assert!(budget.fits(&fitted.system, &fitted.user));
        // Every table row that is there is whole, and the rest is summarised.
        let rows: Vec<&str> = fitted
            .user
            .lines()
            .filter(|l| l.starts_with("| "))
            .collect();
        assert!(rows.len() > 3 && rows.len() < 32, "{}", rows.len());
        for r in rows.iter().skip(1) {
            assert_eq!(r.matches(" | ").count(), 4, "{r}");
        }
        let shown = rows.len() - 1;
        assert!(fitted
            .user
            .contains(&format!("({} slower configs not shown, ", 200 - shown)));
        assert!(fitted.user.contains("BEST SO FAR"));
        // Without a budget nothing is left out but what the full detail leaves out.
        assert!(full.user.contains("(170 slower configs not shown, "));
    }
}
