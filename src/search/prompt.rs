//! Prompt text for the LLM-driven strategies.
//!
//! Every request is assembled from the same sections so the model always sees the same
//! facts: the terminology of every parameter (`ParamId::description`), the hardware spec,
//! the problem (dims, dtypes, layout, arithmetic intensity, roofline bound), the space as
//! JSON with its constraints, and — once there are results — the ranked history, the
//! failures with their reasons, rejected suggestions, and observations computed from the
//! data. Each strategy then adds its own question (a batch, one edit, a plan, ...).

use serde_json::{json, Map, Value};

use super::history::History;
use super::llm_port::LlmRequest;
use super::observations;
use super::strategy::Rejected;
use crate::measure::stats::Rates;
use crate::space::{KernelConfig, ParamId, Space};

/// Rows of the ranked history table sent to the model.
pub const HISTORY_ROWS: usize = 30;
/// Failed configs listed with their reasons.
pub const FAILURE_ROWS: usize = 12;

const SYSTEM: &str = "You are an expert GPU performance engineer tuning a parameterised GEMM \
kernel (Tensile-style parameters) for one exact problem on one GPU. You reason about tiles, \
wave quantisation, occupancy, LDS/shared memory, pipelining, memory coalescing and split-K. \
Every config you suggest must satisfy the listed constraints. Answer with JSON only.";

/// Builds requests for one space (problem + hardware).
pub struct PromptBuilder<'a> {
    pub space: &'a Space,
    pub temperature: f32,
}

impl<'a> PromptBuilder<'a> {
    pub fn new(space: &'a Space) -> Self {
        PromptBuilder {
            space,
            temperature: 0.7,
        }
    }

    fn request(&self, user: String) -> LlmRequest {
        LlmRequest {
            system: SYSTEM.to_string(),
            user,
            temperature: self.temperature,
            json: true,
        }
    }

    /// Parameter names, abbreviations and meanings.
    pub fn terminology(&self) -> String {
        let mut s = String::from("TERMINOLOGY:\n");
        for p in ParamId::ALL {
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
        let ridge = hw.peak_tflops_for(p.a_type) * 1e12 / (hw.memory_bandwidth_gbps * 1e9);
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
            .mi_shapes(p.a_type)
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
        let mut params = Map::new();
        for d in &self.space.domains {
            params.insert(
                d.id.name().to_string(),
                json!({
                    "short": d.id.short(),
                    "description": d.id.description(),
                    "values": d.values.iter().map(|v| value_json(d.id, *v)).collect::<Vec<_>>(),
                    "default": value_json(d.id, d.default),
                }),
            );
        }
        json!({ "parameters": params, "constraints": self.constraints() })
    }

    /// Ranked table of timed configs (top rows only) plus counts.
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
            s.push_str(&format!(
                "({} slower configs not shown)\n",
                ranked.len() - rows
            ));
        }
        s
    }

    pub fn failures(&self, history: &History, rows: usize) -> String {
        let fails = history.failures();
        if fails.is_empty() {
            return String::new();
        }
        let mut s = format!("FAILED CONFIGS ({}):\n", fails.len());
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
        let mut s = "YOUR EARLIER SUGGESTIONS THAT BROKE THE RULES (not run):\n".to_string();
        for r in rejected.iter().rev().take(rows) {
            s.push_str(&format!("- {}: {}\n", r.suggestion, r.reason));
        }
        s
    }

    pub fn observations(&self, history: &History) -> String {
        let lines = observations::summarize(history, 8);
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
        format!(
            "{}\n{}\n{}\nCONFIG SPACE:\n{}\n",
            self.hardware(),
            self.problem(),
            self.terminology(),
            serde_json::to_string_pretty(&self.space_json()).unwrap_or_default()
        )
    }

    /// Results so far: table, failures, rejected suggestions, observations, best.
    pub fn results(&self, history: &History, rejected: &[Rejected]) -> String {
        format!(
            "{}\n{}{}{}\n{}",
            self.history_table(history, HISTORY_ROWS),
            self.failures(history, FAILURE_ROWS),
            self.rejected(rejected, FAILURE_ROWS),
            self.observations(history),
            self.best_line(history)
        )
    }

    /// Round 1 of the batch strategy: diverse configs with reasoning.
    pub fn initial_batch(&self, n: usize) -> LlmRequest {
        self.request(format!(
            "{}\nGenerate {n} diverse configurations to benchmark. Include conservative configs (safe, \
             close to the defaults), aggressive configs (push tile size, pipelining and vector widths to \
             the limits the constraints allow) and exploratory configs (unusual combinations, e.g. split-K \
             for small M*N). Give every parameter of each config.\n\n{}",
            self.context(),
            BATCH_FORMAT
        ))
    }

    /// Rounds 2+ of the batch strategy: learn from the history.
    pub fn refinement_batch(
        &self,
        history: &History,
        rejected: &[Rejected],
        n: usize,
    ) -> LlmRequest {
        self.request(format!(
            "{}\n{}\nGenerate {n} NEW configurations (not in the history) that might beat the best. \
             Exploit: variations of the top 3. Explore: regions the history has not covered. Escape: if the \
             last rounds did not improve, try radically different configs.\n\n{}",
            self.context(),
            self.results(history, rejected),
            REFINE_FORMAT
        ))
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
        self.request(format!(
            "{}\n{}{}\nPropose ONE modified configuration of the best config that you expect to be faster. \
             Change one to three parameters and explain why.\n\nReturn JSON: {{\"reasoning\": \"...\", \"config\": {{\"<Parameter>\": <value>, ...}}}}",
            self.context(),
            self.results(history, rejected),
            last
        ))
    }

    /// Autonomous strategy: a plan of parameter changes.
    pub fn plan(&self, history: &History) -> LlmRequest {
        self.request(format!(
            "{}\n{}\nPlan the tuning of this kernel as an ordered list of steps. Each step changes one or a \
             few parameters of the best config to values worth measuring. Steps that are not parameter \
             changes (profiling, rewriting code, compiler flags) cannot be executed.\n\n{}",
            self.context(),
            self.results(history, &[]),
            STEPS_FORMAT
        ))
    }

    /// Autonomous strategy: split a step into smaller ones.
    pub fn breakdown(&self, history: &History, step: &str) -> LlmRequest {
        self.request(format!(
            "{}\n{}\nThe next tuning step is:\n{step}\nIf it changes several parameters at once or tries many \
             values, split it into smaller steps that can be measured one after another; otherwise return \
             it unchanged as a single step.\n\n{}",
            self.context(),
            self.results(history, &[]),
            STEPS_FORMAT
        ))
    }

    /// Autonomous strategy: new steps after the plan ran out (empty list = done).
    pub fn replan(&self, history: &History, done: &[String]) -> LlmRequest {
        let done_list = done.iter().map(|d| format!("- {d}\n")).collect::<String>();
        self.request(format!(
            "{}\n{}\nSTEPS ALREADY EXECUTED:\n{done_list}\nDecide whether more tuning steps are worth trying. \
             Return new steps, or an empty list if the kernel is tuned.\n\n{}",
            self.context(),
            self.results(history, &[]),
            STEPS_FORMAT
        ))
    }

    /// Explicit strategy: is this step worth running from the current best?
    pub fn step_worth(&self, history: &History, step: &str, params: &[ParamId]) -> LlmRequest {
        let names = params
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ");
        self.request(format!(
            "{}\n{}\nThe next tuning step is `{step}`: sweep {names} from the best config. Is it likely to \
             improve performance for this problem on this GPU?\n\nReturn JSON: {{\"run\": true|false, \"reason\": \"...\"}}",
            self.context(),
            self.results(history, &[]),
        ))
    }
}

const BATCH_FORMAT: &str = "Return JSON:\n{\"configs\": [{\"reasoning\": \"why this config\", \"config\": {\"MacroTile0\": 128, \"MacroTile1\": 64, \"DepthU\": 64, \"MatrixInstruction\": \"16x8x16\", ...every parameter...}}, ...]}";

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
        let req = PromptBuilder::new(&space).refinement_batch(&h, &rejected, 15);
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
            "(9 slower configs not shown)",
            "FAILED CONFIGS (1)",
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
}
