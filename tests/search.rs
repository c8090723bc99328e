//! Search layer tests, all without a GPU: every strategy on the sim model and on a replayed
//! sweep, the driver's guarantees (validation, dedup, budget, convergence, re-timing,
//! determinism), the fallback wrapper, and the LLM strategies against a scripted model.

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;

use gemmtune::compile::sim::SimCompiler;
use gemmtune::device::replay::{Dataset, ReplayDevice, SweepHeader, SweepWriter};
use gemmtune::device::sim::{model_time_us, SimDevice};
use gemmtune::device::{Device, DeviceSelection, Outcome, TimingOptions};
use gemmtune::hw::HwSpec;
use gemmtune::problem::GemmProblem;
use gemmtune::search::driver::{
    run_search, NoKnownResults, SearchOptions, SearchResult, StopReason,
};
use gemmtune::search::eval::{
    eval_datasets, eval_strategies, space_for_dataset, synthetic_dataset, Contender, EvalSettings,
};
use gemmtune::search::strategies::{self, FallbackMode, StrategyOptions};
use gemmtune::search::{
    DeviceEvaluator, EvalResult, Evaluator, LlmError, ScriptedLlm, SearchError, StrategyError,
};
use gemmtune::space::{KernelConfig, Space};

fn problem() -> GemmProblem {
    GemmProblem::new(2048, 256, 4096)
}

/// A small space: a few hundred points, tens of valid configs.
fn small_space() -> Space {
    let hw = HwSpec::by_name("H200").unwrap();
    let mut s = Space::for_problem(&problem(), &hw);
    for (p, v) in [
        ("MI", "16x8x16"),
        ("MT0", "64,128,256"),
        ("MT1", "64,128"),
        ("DepthU", "32,64"),
        ("WG0", "1,2"),
        ("WG1", "1,2"),
        ("PGR", "2,3"),
        ("PLR", "1"),
        ("LPA", "8"),
        ("LPB", "8"),
        ("SW", "0"),
        ("GSU", "1,2"),
        ("GSUAlgo", "1"),
        ("WGM", "8"),
        ("GRVW", "8"),
        ("SVW", "4"),
        ("SU", "0"),
    ] {
        s.fix(p, v).unwrap();
    }
    s
}

fn valid_configs(s: &Space) -> Vec<KernelConfig> {
    s.enumerate(1_000_000).unwrap()
}

fn true_best(s: &Space) -> f64 {
    valid_configs(s)
        .iter()
        .map(|c| model_time_us(c, &s.problem, &s.hw))
        .fold(f64::INFINITY, f64::min)
}

fn timing() -> TimingOptions {
    TimingOptions {
        iters: 7,
        ..Default::default()
    }
}

/// Wraps an evaluator and checks what reaches it: only valid configs, never twice.
struct Checked<'a, E: Evaluator> {
    inner: E,
    space: &'a Space,
    seen: Rc<RefCell<Vec<KernelConfig>>>,
}

impl<E: Evaluator> Evaluator for Checked<'_, E> {
    fn evaluate(&mut self, configs: &[KernelConfig]) -> Vec<EvalResult> {
        let mut seen = self.seen.borrow_mut();
        for c in configs {
            self.space.check(c).unwrap_or_else(|v| {
                panic!("invalid config reached the evaluator: {} ({v})", c.name())
            });
            assert!(!seen.contains(c), "{} evaluated twice", c.name());
            seen.push(*c);
        }
        drop(seen);
        self.inner.evaluate(configs)
    }
    fn retime(&mut self, configs: &[KernelConfig], round: usize) -> Vec<EvalResult> {
        self.inner.retime(configs, round)
    }
}

fn run_on_sim(
    space: &Space,
    name: &str,
    opts: &SearchOptions,
    llm: Option<Arc<ScriptedLlm>>,
    sopts: &StrategyOptions,
) -> Result<(SearchResult, Vec<KernelConfig>), SearchError> {
    let mut device = SimDevice::new(&DeviceSelection {
        hw_spec: Some(space.hw.clone()),
        ..Default::default()
    })
    .unwrap();
    let compiler = SimCompiler { plants: vec![] };
    let ev = DeviceEvaluator::new(&mut device, &compiler, &space.problem, timing()).unwrap();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let mut checked = Checked {
        inner: ev,
        space,
        seen: seen.clone(),
    };
    let llm = llm.map(|l| l as Arc<dyn gemmtune::search::LlmPort>);
    let mut strategy = strategies::build(name, sopts, llm).unwrap();
    let r = run_search(
        space,
        strategy.as_mut(),
        &mut checked,
        &NoKnownResults,
        opts,
        &mut (),
    )?;
    let seen = seen.borrow().clone();
    Ok((r, seen))
}

#[test]
fn small_space_is_small_and_nontrivial() {
    let s = small_space();
    let n = valid_configs(&s).len();
    assert!((20..=300).contains(&n), "{n} valid configs");
    println!("{n} valid configs of {}", s.size());
}

fn budget_opts(max_evals: usize, seed: u64) -> SearchOptions {
    SearchOptions {
        batch_size: 8,
        seed,
        ..SearchOptions::budget_only(max_evals)
    }
}

/// The model time of the search's winner is within 2% of the space's true best.
fn assert_finds_best(space: &Space, r: &SearchResult, what: &str) {
    let best = true_best(space);
    let w = r
        .winner
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no winner"));
    let t = model_time_us(&w.config, &space.problem, &space.hw);
    assert!(
        t <= best * 1.02,
        "{what}: winner {} at {t:.2} us vs best {best:.2} us after {} evals",
        w.config.name(),
        r.evaluations
    );
}

#[test]
fn every_non_llm_strategy_finds_the_best_on_sim_and_stays_valid() {
    let s = small_space();
    let n = valid_configs(&s).len();
    for name in ["random", "pattern", "genetic", "exhaustive"] {
        let (r, seen) = run_on_sim(
            &s,
            name,
            &budget_opts(n, 3),
            None,
            &StrategyOptions::default(),
        )
        .unwrap();
        assert_eq!(r.invalid_suggestions, 0, "{name}");
        assert_eq!(seen.len(), r.evaluations, "{name}");
        assert!(r.evaluations <= n, "{name}");
        assert_finds_best(&s, &r, name);
        // The trace never gets worse.
        assert!(
            r.trace.windows(2).all(|w| w[1].best_us <= w[0].best_us),
            "{name}"
        );
    }
    // Explicit sweeps parameter groups once; on this separable space that reaches the best.
    let (r, _) = run_on_sim(
        &s,
        "explicit",
        &budget_opts(n, 3),
        None,
        &StrategyOptions::default(),
    )
    .unwrap();
    assert_eq!(r.stop, StopReason::Exhausted);
    assert!(
        r.evaluations < n,
        "explicit should not need the whole space"
    );
    assert_finds_best(&s, &r, "explicit");
}

#[test]
fn strategies_are_deterministic_under_a_seed() {
    let s = small_space();
    for name in ["random", "pattern", "genetic", "explicit"] {
        let (a, _) = run_on_sim(
            &s,
            name,
            &budget_opts(40, 11),
            None,
            &StrategyOptions::default(),
        )
        .unwrap();
        let (b, _) = run_on_sim(
            &s,
            name,
            &budget_opts(40, 11),
            None,
            &StrategyOptions::default(),
        )
        .unwrap();
        let names = |r: &SearchResult| {
            r.history
                .iter()
                .map(|e| e.config.name())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&a), names(&b), "{name}");
        assert_eq!(
            a.winner.map(|w| w.config),
            b.winner.map(|w| w.config),
            "{name}"
        );
    }
    let (a, _) = run_on_sim(
        &s,
        "random",
        &budget_opts(20, 1),
        None,
        &StrategyOptions::default(),
    )
    .unwrap();
    let (b, _) = run_on_sim(
        &s,
        "random",
        &budget_opts(20, 2),
        None,
        &StrategyOptions::default(),
    )
    .unwrap();
    assert_ne!(
        a.history.iter().map(|e| e.config).collect::<Vec<_>>(),
        b.history.iter().map(|e| e.config).collect::<Vec<_>>()
    );
}

fn dataset() -> Dataset {
    synthetic_dataset(&small_space(), &timing(), 1_000_000).unwrap()
}

/// Same configs, outcomes and header; samples equal up to float text round-off.
fn assert_same(a: &Dataset, b: &Dataset) {
    assert_eq!(a.header.problem, b.header.problem);
    assert_eq!(a.header.device, b.header.device);
    assert_eq!(a.header.hw, b.header.hw);
    assert_eq!(a.len(), b.len());
    for ((ca, oa), (cb, ob)) in a.records().zip(b.records()) {
        assert_eq!(ca, cb);
        assert_eq!(oa.status(), ob.status());
        let (sa, sb) = (
            oa.samples().unwrap_or_default(),
            ob.samples().unwrap_or_default(),
        );
        assert_eq!(sa.len(), sb.len());
        assert!(
            sa.iter()
                .zip(sb)
                .all(|(x, y)| (x - y).abs() <= 1e-12 * x.abs()),
            "{}",
            ca.name()
        );
    }
}

#[test]
fn replay_dataset_round_trips_and_serves_recorded_samples() {
    let s = small_space();
    let d = dataset();
    assert_eq!(d.len(), valid_configs(&s).len());
    let (best_cfg, best_us) = d.best().unwrap();
    assert!((best_us - true_best(&s)).abs() / true_best(&s) < 0.05);

    // Document form and JSON lines (as the sweep writer appends them) read back the same.
    assert_same(&Dataset::parse(&d.to_json(), "doc").unwrap(), &d);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sweep.jsonl");
    let mut w = SweepWriter::create(&path, &d.header).unwrap();
    for (c, o) in d.records() {
        w.append(&c, o).unwrap();
    }
    drop(w);
    assert_same(&Dataset::load(&path).unwrap(), &d);
    assert!(Dataset::parse("{\"format\": \"other\"}\n", "x").is_err());
    assert!(Dataset::parse("", "x").is_err());

    let mut dev = ReplayDevice::new(d.clone());
    let compiler = SimCompiler { plants: vec![] };
    let mut ev = DeviceEvaluator::new(&mut dev, &compiler, &s.problem, timing()).unwrap();
    let recorded: Vec<f64> = d.outcome(&best_cfg).unwrap().samples().unwrap().to_vec();
    let a = ev.evaluate(&[best_cfg]).remove(0);
    let b = ev.evaluate(&[best_cfg]).remove(0);
    for r in [&a, &b] {
        assert!(r
            .outcome
            .samples()
            .unwrap()
            .iter()
            .all(|x| recorded.contains(x)));
    }
    assert_ne!(a.outcome, b.outcome, "each run draws a fresh resample");
    // A config the sweep never measured.
    let mut other = best_cfg;
    other.wgm = 1;
    match ev.evaluate(&[other]).remove(0).outcome {
        Outcome::LaunchFailed { message } => assert!(message.contains("not in the recorded sweep")),
        o => panic!("{o:?}"),
    }
    // A different problem is refused.
    let mut dev = ReplayDevice::new(d);
    assert!(dev
        .set_problem(&GemmProblem::new(64, 64, 64), &timing())
        .is_err());
}

#[test]
fn every_non_llm_strategy_finds_the_best_on_replay() {
    let d = dataset();
    let space = space_for_dataset(&d);
    let n = d.len();
    let (best_cfg, best_us) = d.best().unwrap();
    for name in ["random", "pattern", "genetic", "exhaustive"] {
        let mut dev = ReplayDevice::new(d.clone());
        let compiler = SimCompiler { plants: vec![] };
        let ev = DeviceEvaluator::new(&mut dev, &compiler, &space.problem, timing()).unwrap();
        let seen = Rc::new(RefCell::new(Vec::new()));
        let mut checked = Checked {
            inner: ev,
            space: &space,
            seen,
        };
        let mut st = strategies::build(name, &StrategyOptions::default(), None).unwrap();
        let r = run_search(
            &space,
            st.as_mut(),
            &mut checked,
            &NoKnownResults,
            &budget_opts(n, 5),
            &mut (),
        )
        .unwrap();
        assert!(
            r.history.contains(&best_cfg),
            "{name} never measured the sweep's best"
        );
        let w = r.winner.unwrap();
        assert!(
            d.median_us(&w.config).unwrap() <= best_us * 1.02,
            "{name}: {}",
            w.config.name()
        );
    }
}

#[test]
fn offline_evaluation_reports_evals_to_target_and_budgets() {
    let d = dataset();
    let contenders = vec![
        Contender::registry("random", StrategyOptions::default(), None),
        Contender::registry("pattern", StrategyOptions::default(), None),
    ];
    let n = d.len();
    let rep = eval_strategies(
        &d,
        &contenders,
        &[1, 2, 3],
        &[10, 25, n],
        &EvalSettings::default(),
    )
    .unwrap();
    assert_eq!(rep.results.len(), 2);
    for r in &rep.results {
        assert_eq!(r.evals_to_target.len(), 3);
        // With a budget of the whole space every run gets there.
        assert!(
            r.evals_to_target.iter().all(|e| e.is_some_and(|e| e <= n)),
            "{r:?}"
        );
        let m = r.median_evals_to_target.unwrap();
        assert!(m >= 1.0 && m <= n as f64);
        let bests: Vec<f64> = r.best_at_budget.iter().map(|(_, b)| b.unwrap()).collect();
        assert!(bests.windows(2).all(|w| w[1] <= w[0]), "{bests:?}");
        assert!(*bests.last().unwrap() <= rep.best_us * 1.02);
    }
}

#[test]
fn driver_reuses_known_results_and_respects_budget() {
    let s = small_space();
    let all = valid_configs(&s);
    let known_cfg = all[0];
    // A stored result the driver must reuse, not measure again.
    let fake = Outcome::modelled(vec![1.0, 1.0, 1.0]);
    let known = move |c: &KernelConfig| (*c == known_cfg).then(|| fake.clone());
    let mut device = SimDevice::new(&DeviceSelection {
        hw_spec: Some(s.hw.clone()),
        ..Default::default()
    })
    .unwrap();
    let compiler = SimCompiler { plants: vec![] };
    let ev = DeviceEvaluator::new(&mut device, &compiler, &s.problem, timing()).unwrap();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let mut checked = Checked {
        inner: ev,
        space: &s,
        seen: seen.clone(),
    };
    let mut st = strategies::build("exhaustive", &StrategyOptions::default(), None).unwrap();
    let r = run_search(
        &s,
        st.as_mut(),
        &mut checked,
        &known,
        &budget_opts(20, 0),
        &mut (),
    )
    .unwrap();
    assert_eq!(r.evaluations, 20);
    assert_eq!(r.stop, StopReason::Budget);
    assert_eq!(r.reused, 1);
    assert!(
        !seen.borrow().contains(&known_cfg),
        "a stored config was measured again"
    );
    // The stored result is the (fake) best; re-timing measures it for real.
    assert_eq!(r.history.best().unwrap().config, known_cfg);
    assert_eq!(r.retime_evaluations, 9, "three leaders, three rounds");
}

/// A device-less evaluator with scripted times: `lucky` looks fast once, then slow.
struct Scripted {
    space: Space,
    lucky: KernelConfig,
}

fn timed(us: f64) -> Outcome {
    Outcome::modelled(vec![us; 3])
}

impl Evaluator for Scripted {
    fn evaluate(&mut self, configs: &[KernelConfig]) -> Vec<EvalResult> {
        configs
            .iter()
            .map(|c| {
                let t = if *c == self.lucky {
                    1.0
                } else {
                    model_time_us(c, &self.space.problem, &self.space.hw)
                };
                EvalResult {
                    config: *c,
                    outcome: timed(t),
                    compile_ms: 1.0,
                    bench_ms: 3.0,
                }
            })
            .collect()
    }
    fn retime(&mut self, configs: &[KernelConfig], _round: usize) -> Vec<EvalResult> {
        configs
            .iter()
            .map(|c| {
                let t = model_time_us(c, &self.space.problem, &self.space.hw)
                    * if *c == self.lucky { 10.0 } else { 1.0 };
                EvalResult {
                    config: *c,
                    outcome: timed(t),
                    compile_ms: 0.0,
                    bench_ms: 1.0,
                }
            })
            .collect()
    }
}

#[test]
fn final_retiming_ranks_by_the_retimed_median() {
    let s = small_space();
    let all = valid_configs(&s);
    let lucky = all[5];
    let mut ev = Scripted {
        space: s.clone(),
        lucky,
    };
    let mut st = strategies::build("exhaustive", &StrategyOptions::default(), None).unwrap();
    let r = run_search(
        &s,
        st.as_mut(),
        &mut ev,
        &NoKnownResults,
        &budget_opts(all.len(), 0),
        &mut (),
    )
    .unwrap();
    assert_eq!(r.history.best().unwrap().config, lucky);
    let w = r.winner.unwrap();
    assert_ne!(w.config, lucky, "the lucky sample must not win");
    assert_eq!(r.retimed.len(), 3);
    assert!(r
        .retimed
        .windows(2)
        .all(|p| p[0].retimed_median_us <= p[1].retimed_median_us));
    assert_eq!(r.retime_evaluations, 9, "three leaders, three rounds");
}

#[test]
fn convergence_rules_stop_the_search() {
    let s = small_space();
    // Exhaustive in enumeration order improves rarely: patience stops it.
    let opts = SearchOptions {
        batch_size: 4,
        max_rounds: None,
        patience: Some(2),
        ..SearchOptions::default()
    };
    let (r, _) = run_on_sim(&s, "exhaustive", &opts, None, &StrategyOptions::default()).unwrap();
    assert!(
        matches!(r.stop, StopReason::Converged | StopReason::Budget),
        "{:?}",
        r.stop
    );
    let opts = SearchOptions {
        batch_size: 4,
        patience: None,
        max_rounds: Some(3),
        ..SearchOptions::default()
    };
    let (r, _) = run_on_sim(&s, "random", &opts, None, &StrategyOptions::default()).unwrap();
    assert_eq!(
        (r.stop, r.rounds, r.evaluations),
        (StopReason::MaxRounds, 3, 12)
    );
    // A target every config meets stops after the first round.
    let opts = SearchOptions {
        batch_size: 4,
        target_us: Some(1e9),
        ..SearchOptions::default()
    };
    let (r, _) = run_on_sim(&s, "random", &opts, None, &StrategyOptions::default()).unwrap();
    assert_eq!((r.stop, r.rounds), (StopReason::TargetReached, 1));
    let opts = SearchOptions {
        batch_size: 4,
        target_tflops: Some(1e-6),
        ..SearchOptions::default()
    };
    let (r, _) = run_on_sim(&s, "random", &opts, None, &StrategyOptions::default()).unwrap();
    assert_eq!(r.stop, StopReason::TargetReached);
}

// ---- LLM strategies against the scripted model ----

fn names_json(cfgs: &[KernelConfig]) -> String {
    let items: Vec<String> = cfgs
        .iter()
        .map(|c| {
            format!(
                "{{\"reasoning\": \"try it\", \"config\": \"{}\"}}",
                c.name()
            )
        })
        .collect();
    format!(
        "{{\"analysis\": \"ok\", \"configs\": [{}]}}",
        items.join(", ")
    )
}

fn llm_opts(mode: FallbackMode) -> StrategyOptions {
    StrategyOptions {
        fallback: mode,
        initial_batch: 6,
        refinement_batch: 4,
        ..Default::default()
    }
}

#[test]
fn llm_batch_evaluates_exactly_the_valid_suggestions() {
    let s = small_space();
    let all = valid_configs(&s);
    let round1 = &all[..6];
    // Round 2: two valid, one outside the space, one malformed, in a fenced block with prose.
    let round2 = format!(
        "Sure!\n```json\n{{\"configs\": [\"{}\", {{\"config\": {{\"MT0\": 96}}}}, {{\"config\": {{\"Bogus\": 1}}}}, \"{}\",]}}\n```",
        all[10].name(),
        all[11].name()
    );
    let llm = Arc::new(ScriptedLlm::replying(&[&names_json(round1), &round2]));
    let opts = SearchOptions {
        batch_size: 8,
        max_rounds: Some(2),
        patience: None,
        ..SearchOptions::default()
    };
    let (r, seen) = run_on_sim(
        &s,
        "llm",
        &opts,
        Some(llm.clone()),
        &llm_opts(FallbackMode::Error),
    )
    .unwrap();
    let mut want: Vec<KernelConfig> = round1.to_vec();
    want.extend([all[10], all[11]]);
    assert_eq!(seen, want);
    assert_eq!(r.invalid_suggestions, 2);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs.iter().all(|q| q.json));
    // Round 1 asks for diverse configs; round 2 carries the ranked history and observations.
    assert!(reqs[0].user.contains("Generate 6 diverse configurations"));
    assert!(reqs[0].user.contains("DepthU (DU)") && reqs[0].user.contains("roofline lower bound"));
    assert!(reqs[1].user.contains("| Rank | Kernel |"));
    assert!(reqs[1].user.contains("OBSERVATIONS"));
    let best_after_round1 = r.history.entries()[..6]
        .iter()
        .min_by(|a, b| a.median_us.partial_cmp(&b.median_us).unwrap())
        .unwrap();
    assert!(reqs[1]
        .user
        .contains(&format!("BEST SO FAR: {}", best_after_round1.config.name())));
}

#[test]
fn fallback_takes_over_on_timeout_and_garbage() {
    let s = small_space();
    let llm = Arc::new(
        ScriptedLlm::new(vec![
            Err(LlmError::Timeout { after_s: 30.0 }),
            Ok("I am not sure what a GEMM is. {\"DepthU\": 48}".into()),
        ])
        .then(Err(LlmError::Transport("connection refused".into()))),
    );
    let opts = SearchOptions {
        batch_size: 5,
        max_rounds: Some(3),
        patience: None,
        ..SearchOptions::default()
    };
    let (r, seen) = run_on_sim(
        &s,
        "llm",
        &opts,
        Some(llm.clone()),
        &llm_opts(FallbackMode::Pattern),
    )
    .unwrap();
    assert_eq!(llm.requests().len(), 3);
    assert_eq!(
        r.warnings.len(),
        3,
        "one warning per fallback round: {:?}",
        r.warnings
    );
    assert!(r.warnings[0].contains("timed out") && r.warnings[0].contains("pattern"));
    // The garbage round's DepthU=48 suggestion is counted as invalid.
    assert_eq!(r.invalid_suggestions, 1);
    assert!(!seen.is_empty() && r.winner.is_some());
    // Random fallback works too.
    let llm = Arc::new(ScriptedLlm::replying(&[]));
    let (r, _) = run_on_sim(&s, "llm", &opts, Some(llm), &llm_opts(FallbackMode::Random)).unwrap();
    assert_eq!(r.evaluations, 15);
    // With `error` the first failure ends the search with the LLM's error.
    let llm = Arc::new(ScriptedLlm::new(vec![Err(LlmError::Timeout {
        after_s: 1.0,
    })]));
    let e = run_on_sim(&s, "llm", &opts, Some(llm), &llm_opts(FallbackMode::Error)).unwrap_err();
    assert!(
        matches!(
            e,
            SearchError::Strategy {
                source: StrategyError::Llm(LlmError::Timeout { .. }),
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn llm_strategies_need_an_llm_and_unknown_names_are_errors() {
    for name in ["llm", "llm-iterative", "autonomous"] {
        assert!(matches!(
            strategies::build(name, &StrategyOptions::default(), None),
            Err(StrategyError::NeedsLlm(_))
        ));
    }
    assert!(matches!(
        strategies::build("annealing", &StrategyOptions::default(), None),
        Err(StrategyError::Unknown { .. })
    ));
    assert_eq!(strategies::default_name(true, false), "llm");
    assert_eq!(strategies::default_name(true, true), "llm");
    assert_eq!(strategies::default_name(false, true), "model");
    assert_eq!(strategies::default_name(false, false), "pattern");
    assert!("bogus".parse::<FallbackMode>().is_err());
}

#[test]
fn llm_iterative_measures_the_start_then_one_edit_per_round() {
    let s = small_space();
    let start = s.default_config().unwrap();
    let all = valid_configs(&s);
    let edit = all
        .iter()
        .find(|c| **c != start && c.pgr != start.pgr)
        .copied()
        .unwrap();
    let reply = format!("{{\"reasoning\": \"deeper pipeline\", \"config\": {{\"PrefetchGlobalRead\": {}, \"MacroTile0\": {}, \"MT1\": {}, \"DU\": {}, \"WG\": [{}, {}], \"GSU\": {}}}}}", edit.pgr, edit.mt0, edit.mt1, edit.depth_u, edit.wg[0], edit.wg[1], edit.gsu);
    let llm = Arc::new(ScriptedLlm::replying(&[
        &reply,
        "{\"config\": {\"PGR\": 9}}",
    ]));
    let opts = SearchOptions {
        max_rounds: Some(3),
        patience: None,
        ..SearchOptions::default()
    };
    let (r, seen) = run_on_sim(
        &s,
        "llm-iterative",
        &opts,
        Some(llm.clone()),
        &llm_opts(FallbackMode::Pattern),
    )
    .unwrap();
    assert_eq!(&seen[..2], &[start, edit]);
    assert_eq!(llm.requests().len(), 2);
    assert!(llm.requests()[1].user.contains("LAST TRIED"));
    // The third round's reply was out of range: counted invalid, pattern took over.
    assert_eq!(r.invalid_suggestions, 1);
    assert_eq!(r.warnings.len(), 1);
    assert!(seen.len() > 2);
}

#[test]
fn autonomous_plans_validates_breaks_down_executes_and_replans() {
    let s = small_space();
    let plan = r#"{"steps": [
        {"description": "profile the kernel with a profiler"},
        {"description": "try deeper pipelines", "changes": {"PrefetchGlobalRead": [2, 3]}},
        {"description": "bigger tiles and split-K", "changes": {"MT0": [128, 256], "GSU": [1, 2]}},
        {"description": "odd depth", "changes": {"DepthU": [48]}}
    ]}"#;
    let breakdown = r#"[{"description": "bigger tiles", "changes": {"MacroTile0": [128, 256]}},
                        {"description": "split-K", "changes": {"GlobalSplitU": [2]}}]"#;
    let replan = r#"{"steps": []}"#;
    let llm = Arc::new(ScriptedLlm::replying(&[plan, breakdown, replan]));
    let sopts = StrategyOptions {
        autonomous: strategies::AutonomousOptions {
            max_breakdowns: 1,
            ..Default::default()
        },
        ..llm_opts(FallbackMode::Error)
    };
    let opts = SearchOptions {
        batch_size: 8,
        max_rounds: None,
        patience: None,
        ..SearchOptions::default()
    };
    let (r, seen) = run_on_sim(&s, "autonomous", &opts, Some(llm.clone()), &sopts).unwrap();
    assert_eq!(r.stop, StopReason::Exhausted);
    // The profiling step and the DepthU=48 step are not parameter changes in this space.
    assert_eq!(r.invalid_suggestions, 2);
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[1].user.contains("split it into smaller steps"));
    assert!(
        reqs[2].user.contains("STEPS ALREADY EXECUTED") && reqs[2].user.contains("bigger tiles")
    );
    assert!(!seen.is_empty());
    assert!(seen.iter().any(|c| c.gsu == 2));

    // Without breakdown and replanning the plan runs as given and no more requests are made.
    let llm = Arc::new(ScriptedLlm::replying(&[plan]));
    let sopts = StrategyOptions {
        autonomous: strategies::AutonomousOptions {
            breakdown: false,
            replanning: false,
            ..Default::default()
        },
        ..llm_opts(FallbackMode::Error)
    };
    let (r, _) = run_on_sim(&s, "autonomous", &opts, Some(llm.clone()), &sopts).unwrap();
    assert_eq!(llm.requests().len(), 1);
    assert_eq!(r.stop, StopReason::Exhausted);
}

#[test]
fn explicit_steps_from_toml_with_dependencies_and_llm_evaluation() {
    let s = small_space();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("steps.toml");
    std::fs::write(
        &path,
        r#"
[[step]]
id = "tile"
params = ["MT0", "MT1"]
skip_evaluation = true

[[step]]
id = "depth"
params = ["DepthU"]
values = { DepthU = [32] }

[[step]]
id = "split"
params = ["GSU"]
depends_on = ["depth"]
skip_evaluation = true

[[step]]
id = "pipe"
params = ["PGR"]
"#,
    )
    .unwrap();
    // The LLM declines `depth`, so `split` (which depends on it) is skipped; `pipe` runs.
    let llm = Arc::new(ScriptedLlm::replying(&[
        "```json\n{\"run\": false, \"reason\": \"DepthU is already right\"}\n```",
        "{\"run\": true}",
    ]));
    let sopts = StrategyOptions {
        steps_file: Some(path.clone()),
        ..Default::default()
    };
    let opts = SearchOptions {
        batch_size: 8,
        max_rounds: None,
        patience: None,
        ..SearchOptions::default()
    };
    let (r, seen) = run_on_sim(&s, "explicit", &opts, Some(llm.clone()), &sopts).unwrap();
    assert_eq!(r.stop, StopReason::Exhausted);
    assert_eq!(llm.requests().len(), 2);
    assert!(llm.requests()[0].user.contains("`depth`"));
    let start = s.default_config().unwrap();
    assert!(
        seen.iter().all(|c| c.gsu == start.gsu),
        "split step should have been skipped"
    );
    assert!(
        seen.iter().any(|c| c.pgr != start.pgr),
        "pipe step should have run"
    );
    // Bad files are errors that name the problem.
    std::fs::write(&path, "[[step]]\nid = \"a\"\nparams = [\"Nope\"]\n").unwrap();
    let e = strategies::build("explicit", &sopts, None).err().unwrap();
    assert!(e.to_string().contains("Nope"), "{e}");
    std::fs::write(
        &path,
        "[[step]]\nid = \"a\"\nparams = [\"DU\"]\ndepends_on = [\"later\"]\n",
    )
    .unwrap();
    assert!(strategies::build("explicit", &sopts, None).is_err());
}

#[test]
fn progress_events_report_the_search() {
    let s = small_space();
    let mut device = SimDevice::new(&DeviceSelection {
        hw_spec: Some(s.hw.clone()),
        ..Default::default()
    })
    .unwrap();
    let compiler = SimCompiler { plants: vec![] };
    let mut ev = DeviceEvaluator::new(&mut device, &compiler, &s.problem, timing()).unwrap();
    let mut st = strategies::build("random", &StrategyOptions::default(), None).unwrap();
    let mut evaluated = 0;
    let mut bests = Vec::new();
    let mut finished = None;
    let mut progress = |e: &gemmtune::search::Event| match e {
        gemmtune::search::Event::Evaluated { .. } => evaluated += 1,
        gemmtune::search::Event::NewBest { median_us, .. } => bests.push(*median_us),
        gemmtune::search::Event::Finished { stop } => finished = Some(*stop),
        _ => {}
    };
    let r = run_search(
        &s,
        st.as_mut(),
        &mut ev,
        &NoKnownResults,
        &budget_opts(16, 4),
        &mut progress,
    )
    .unwrap();
    assert_eq!(evaluated, 16);
    assert_eq!(finished, Some(StopReason::Budget));
    assert!(bests.windows(2).all(|w| w[1] < w[0]));
    assert_eq!(
        *bests.last().unwrap(),
        r.history.best().unwrap().median_us.unwrap()
    );
    let distinct: HashSet<_> = r.history.iter().map(|e| e.config).collect();
    assert_eq!(distinct.len(), 16);
    let _ = SweepHeader::new(s.problem.clone(), device_info(), s.hw.clone(), None);
}

fn device_info() -> gemmtune::device::DeviceInfo {
    SimDevice::new(&DeviceSelection::default())
        .unwrap()
        .info()
        .clone()
}

// ---- Learning across shapes ----

/// The small space's parameters on another problem: a family of related shapes.
fn shape_space(m: i64, n: i64, k: i64) -> Space {
    let hw = HwSpec::by_name("H200").unwrap();
    let mut s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
    for (p, v) in [
        ("MI", "16x8x16"),
        ("MT0", "64,128,256"),
        ("MT1", "64,128"),
        ("DepthU", "32,64"),
        ("WG0", "1,2"),
        ("WG1", "1,2"),
        ("PGR", "2,3"),
        ("PLR", "1"),
        ("LPA", "8"),
        ("LPB", "8"),
        ("SW", "0"),
        ("GSU", "1,2,4"),
        ("GSUAlgo", "1"),
        ("WGM", "8"),
        ("GRVW", "8"),
        ("SVW", "4"),
        ("SU", "0"),
        ("PW", "0"),
        ("SAB", "0"),
    ] {
        s.fix(p, v).unwrap();
    }
    s
}

fn shape_datasets() -> Vec<(String, Dataset)> {
    [
        (2048, 256, 4096),
        (4096, 256, 4096),
        (1024, 128, 8192),
        (8192, 128, 4096),
    ]
    .iter()
    .map(|&(m, n, k)| {
        (
            format!("{m}x{n}x{k}"),
            synthetic_dataset(&shape_space(m, n, k), &timing(), 1_000_000).unwrap(),
        )
    })
    .collect()
}

/// The measurements of every shape of [`shape_datasets`] but `problem`'s: what a database
/// holds before `problem` is tuned.
fn other_shapes(problem: &GemmProblem) -> Vec<gemmtune::search::corpus::ShapeRecords> {
    shape_datasets()
        .iter()
        .map(|(_, d)| gemmtune::search::corpus::ShapeRecords::from_dataset(d))
        .filter(|s| s.problem.key() != problem.key())
        .collect()
}

/// Judged on shapes it never saw (leave-one-shape-out), the model-based search, starting
/// from what the other shapes taught it, comes within 2% of each shape's best in fewer
/// evaluations than random search on most shapes and in fewer over all of them; without
/// anything to learn from it is the pattern search.
#[test]
fn the_model_learns_across_shapes_left_out_one_at_a_time() {
    let datasets = shape_datasets();
    let seeds: Vec<u64> = (1..=4).collect();
    let names = vec!["model".to_string(), "random".to_string()];
    let evals = eval_datasets(
        &datasets,
        &names,
        &StrategyOptions::default(),
        None,
        &seeds,
        &[32],
        &EvalSettings::default(),
    )
    .unwrap();
    assert_eq!(evals.len(), datasets.len());
    let (mut model_total, mut random_total, mut model_wins) = (0.0, 0.0, 0);
    for d in &evals {
        assert_eq!(
            d.corpus_shapes,
            datasets.len() - 1,
            "{}: leave one out",
            d.label
        );
        let median = |i: usize| d.report.results[i].median_evals_to_target.unwrap_or(33.0);
        let (m, r) = (median(0), median(1));
        println!("{}: model {m}, random {r}", d.label);
        model_total += m;
        random_total += r;
        model_wins += usize::from(m <= r);
    }
    assert!(model_wins * 2 > evals.len(), "model ahead on {model_wins}");
    assert!(
        model_total < random_total,
        "{model_total} vs {random_total}"
    );

    // Without measurements of other shapes, `model` starts as the pattern search does.
    let s = shape_space(2048, 256, 4096);
    let (alone, _) = run_on_sim(
        &s,
        "model",
        &budget_opts(16, 3),
        None,
        &StrategyOptions::default(),
    )
    .unwrap();
    let (pattern, _) = run_on_sim(
        &s,
        "pattern",
        &budget_opts(16, 3),
        None,
        &StrategyOptions::default(),
    )
    .unwrap();
    let first = |r: &SearchResult| {
        r.history
            .iter()
            .take(8)
            .map(|e| e.config)
            .collect::<Vec<_>>()
    };
    assert_eq!(first(&alone), first(&pattern));
}

/// A new shape starts from what similar shapes taught: the prior alone (no measurement of
/// the shape yet) ranks its configs far better than chance, and the first batch measures the
/// default config with the prior's best guesses.
#[test]
fn a_new_shape_starts_from_what_similar_shapes_taught() {
    use gemmtune::search::corpus::{Corpus, ShapeRecords};
    use gemmtune::search::features;
    let datasets = shape_datasets();
    let target = &datasets[0].1;
    let corpus = Corpus::new(
        datasets
            .iter()
            .map(|(_, d)| ShapeRecords::from_dataset(d))
            .collect(),
    )
    .without(&target.header.problem);
    let space = space_for_dataset(target);
    let prior = corpus
        .prior(&space.problem, &space.hw, &target.header.device.name)
        .expect("other shapes to learn from");
    let part = features::problem_features(&space.problem, &space.hw);
    let mut pairs: Vec<(f64, f64)> = target
        .records()
        .filter_map(|(c, _)| {
            let x = features::features(&part, &space.problem, &space.hw, &c);
            Some((prior.predict(&x).0, target.median_us(&c)?))
        })
        .collect();
    // Spearman's rank correlation of the prior's predictions with the measured times.
    let rank = |v: Vec<f64>| -> Vec<f64> {
        let mut idx: Vec<usize> = (0..v.len()).collect();
        idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
        let mut r = vec![0.0; v.len()];
        for (k, &i) in idx.iter().enumerate() {
            r[i] = k as f64;
        }
        r
    };
    let (a, b) = (
        rank(pairs.iter().map(|p| p.0).collect()),
        rank(pairs.iter().map(|p| p.1).collect()),
    );
    let n = a.len() as f64;
    let d2: f64 = a.iter().zip(&b).map(|(x, y)| (x - y).powi(2)).sum();
    let rho = 1.0 - 6.0 * d2 / (n * (n * n - 1.0));
    assert!(rho > 0.5, "rank correlation {rho:.2}");

    pairs.sort_by(|x, y| x.1.total_cmp(&y.1));
    let opts = StrategyOptions {
        corpus: Some(Arc::new(corpus)),
        device: target.header.device.name.clone(),
        ..StrategyOptions::default()
    };
    let mut strategy = strategies::build("model", &opts, None).unwrap();
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
    let history = gemmtune::search::History::new();
    let mut ctx = gemmtune::search::ProposeCtx {
        space: &space,
        history: &history,
        batch: 8,
        remaining: 100,
        round: 0,
        rng: &mut rng,
    };
    let first = strategy.propose(&mut ctx).unwrap().configs;
    assert_eq!(first.len(), 8);
    assert_eq!(first[0], space.default_config().unwrap());
    assert!(first.iter().all(|c| space.is_valid(c)));
    // The structural starts the pattern search measures first are measured here too.
    for c in space.extra_starts().iter().take(7) {
        assert!(first.contains(c), "{} not in the first batch", c.name());
    }
    // A large space, where the model cannot list every config: the same holds.
    let wide = Space::for_problem(&GemmProblem::new(16032, 260, 16384), &space.hw);
    let starts = wide.extra_starts();
    assert!(!starts.is_empty());
    let mut strategy = strategies::build("model", &opts, None).unwrap();
    let history = gemmtune::search::History::new();
    let mut ctx = gemmtune::search::ProposeCtx {
        space: &wide,
        history: &history,
        batch: 8,
        remaining: 100,
        round: 0,
        rng: &mut rng,
    };
    let first = strategy.propose(&mut ctx).unwrap().configs;
    for c in starts.iter().take(7) {
        assert!(first.contains(c), "{} not in the first batch", c.name());
    }
    // Right after the default and the starts come the moves from the default the model ranks
    // best (one parameter, or two coupled): ranked among the default's moves, which a space
    // this large does not list, not among whatever the random candidates held. A round twice
    // as large as the default and the starts: the local share (half the round) is full
    // before them, so no unranked neighbour of the default comes between.
    let default = wide.default_config().unwrap();
    let tokens =
        |c: &KernelConfig| -> HashSet<String> { c.name().split('_').map(str::to_string).collect() };
    let fixed = 1 + starts.len();
    let history = gemmtune::search::History::new();
    let propose_seeded = |seed: u64| {
        let mut strategy = strategies::build("model", &opts, None).unwrap();
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
        let mut ctx = gemmtune::search::ProposeCtx {
            space: &wide,
            history: &history,
            batch: 2 * fixed,
            remaining: 100,
            round: 0,
            rng: &mut rng,
        };
        strategy.propose(&mut ctx).unwrap().configs
    };
    let first = propose_seeded(7);
    assert!(
        fixed + strategies::model::NEAR_DEFAULT <= first.len(),
        "{fixed}"
    );
    // The same seed proposes the same batch, in the same order.
    assert_eq!(first, propose_seeded(7));
    for c in &first[fixed..fixed + strategies::model::NEAR_DEFAULT] {
        // A name token per parameter group: two changed parameters change at most two tokens
        // (four in the symmetric difference), one more where a suffix (PW1, PK1) comes or goes.
        let changed = tokens(c).symmetric_difference(&tokens(&default)).count();
        assert!(
            (1..=5).contains(&changed),
            "{} is not a move from the default {}",
            c.name(),
            default.name()
        );
    }
}

/// The model search is a function of the database and the seed: two searches over the same
/// measurements, handed over in different orders (a database's rows come grouped through a
/// hash map), propose the same batches in the same order.
#[test]
fn the_model_search_is_deterministic_for_a_database_and_a_seed() {
    use gemmtune::search::corpus::{Corpus, ShapeRecords};
    let target = shape_space(2048, 256, 4096);
    let others = other_shapes(&target.problem);
    assert!(others.len() >= 3);
    let mut reordered = others.clone();
    reordered.rotate_left(1);
    for s in &mut reordered {
        s.configs.reverse();
    }
    let run = |shapes: Vec<ShapeRecords>| {
        let opts = StrategyOptions {
            corpus: Some(Arc::new(Corpus::new(shapes))),
            device: device_info().name,
            ..StrategyOptions::default()
        };
        let (r, _) = run_on_sim(&target, "model", &budget_opts(32, 7), None, &opts).unwrap();
        r.history
            .iter()
            .map(|e| e.config.name())
            .collect::<Vec<_>>()
    };
    let first = run(others.clone());
    assert_eq!(first.len(), 32);
    assert_eq!(first, run(others), "the same corpus twice");
    assert_eq!(first, run(reordered), "the same corpus in another order");
}

/// With wide rounds (32 configs, as `tune` runs them on a GPU) half of every later round are
/// moves around the best configs so far: the model's two ranked moves (which may step two
/// parameters at once, so not counted here) and at least 14 of the pattern search's one-step
/// moves. Without them the model's own picks held 12 such moves on this shape. The first
/// round is not filled up with the prior's picks: at most a quarter of it beyond the default,
/// the starts and half a round of the default's neighbours (it held all 32 before).
#[test]
fn half_of_each_later_model_round_moves_around_the_best_so_far() {
    use gemmtune::search::corpus::Corpus;
    use std::collections::HashSet;
    // The whole space (the neighbourhoods of a bounded one are too small to tell).
    let target = Space::for_problem(
        &GemmProblem::new(2048, 256, 4096),
        &HwSpec::by_name("H200").unwrap(),
    );
    let opts = StrategyOptions {
        corpus: Some(Arc::new(Corpus::new(other_shapes(&target.problem)))),
        device: device_info().name,
        ..StrategyOptions::default()
    };
    let search = SearchOptions {
        batch_size: 32,
        ..budget_opts(64, 3)
    };
    let (r, _) = run_on_sim(&target, "model", &search, None, &opts).unwrap();
    let first: Vec<_> = r.history.iter().filter(|e| e.round == 0).collect();
    let second: Vec<_> = r.history.iter().filter(|e| e.round == 1).collect();
    assert_eq!(second.len(), 32);
    // A short first round (at most half of it): the default, the starts, the default's
    // ranked moves and a few picks of the prior's (`FIRST_PICKS`), so that the round which
    // moves around what they measured comes early.
    let picks = (32.0 * strategies::model::FIRST_PICKS).ceil() as usize;
    let most = 1 + target.extra_starts().len() + strategies::model::NEAR_DEFAULT + picks;
    assert!(
        first.len() > 1 && first.len() <= most && first.len() <= 16,
        "a first round of {} (at most {most})",
        first.len()
    );
    // The pattern search's beam: the three best of the first round.
    let mut ranked: Vec<_> = first
        .iter()
        .filter_map(|e| e.median_us.map(|t| (t, e.config)))
        .collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
    let around: HashSet<_> = ranked
        .iter()
        .take(3)
        .flat_map(|(_, c)| target.neighbors(c))
        .collect();
    let tried: HashSet<_> = first.iter().map(|e| e.config).collect();
    let untried = around.difference(&tried).count();
    let local = second.iter().filter(|e| around.contains(&e.config)).count();
    assert!(
        untried >= 16 && local >= 14,
        "{local} of 32 moves around the best so far, of {untried} untried"
    );
}

#[test]
fn the_default_strategy_is_the_model_with_measurements_and_fills_an_llm() {
    use gemmtune::search::corpus::{Corpus, ShapeRecords};
    let datasets = shape_datasets();
    let mut opts = StrategyOptions::default();
    assert_eq!(
        strategies::build("default", &opts, None).unwrap().name(),
        "pattern"
    );
    opts.corpus = Some(Arc::new(Corpus::new(
        datasets
            .iter()
            .map(|(_, d)| ShapeRecords::from_dataset(d))
            .collect(),
    )));
    assert_eq!(
        strategies::build("default", &opts, None).unwrap().name(),
        "model"
    );
    assert_eq!(strategies::filler_name(&opts), "model");
    // With an LLM: the LLM's batch, led and filled by the model.
    let s = shape_space(3072, 256, 4096);
    let llm = Arc::new(ScriptedLlm::replying(&["{\"configs\": []}"]).then(Ok("{}".into())));
    opts.initial_batch = 4;
    let (r, _) = run_on_sim(&s, "default", &budget_opts(16, 2), Some(llm), &opts).unwrap();
    assert_eq!(r.strategy, "llm");
    // The model fills the round it leads (its first round: the default, the starts, the
    // default's neighbours and a quarter of the round of its own picks).
    let first = &r.llm_rounds[0];
    let measured = r.history.iter().filter(|e| e.round == 0).count();
    assert!(
        first.fell_back && first.from_llm == 0 && first.filled > 0 && first.filled == measured,
        "{first:?}, {measured} measured"
    );
    assert!(
        r.warnings[0].contains("the model search proposes"),
        "{:?}",
        r.warnings
    );
}

// ---- Never worse than pattern, and honest accounting ----

#[test]
fn llm_rounds_start_from_pattern_fill_from_it_and_count_what_the_model_gave() {
    let s = small_space();
    let all = valid_configs(&s);
    let default = s.default_config().unwrap();
    let theirs: Vec<KernelConfig> = all
        .iter()
        .copied()
        .filter(|c| *c != default)
        .take(2)
        .collect();
    // One valid new config, one invalid, one already measured (the default, measured first).
    let reply = format!(
        "{{\"configs\": [\"{}\", {{\"config\": {{\"MT0\": 96}}}}, \"{}\"]}}",
        theirs[0].name(),
        default.name()
    );
    let llm = Arc::new(ScriptedLlm::replying(&[&reply, &names_json(&theirs[1..])]));
    let opts = SearchOptions {
        batch_size: 6,
        max_rounds: Some(2),
        patience: None,
        ..SearchOptions::default()
    };
    let (r, seen) = run_on_sim(
        &s,
        "llm",
        &opts,
        Some(llm.clone()),
        &llm_opts(FallbackMode::Pattern),
    )
    .unwrap();
    // The first batch starts with the pattern search's start, then the model's config, then
    // the pattern search fills it.
    assert_eq!(seen[0], default);
    assert_eq!(seen[1], theirs[0]);
    assert_eq!(r.history.entries()[..6].len(), 6);
    let round0 = &r.llm_rounds[0];
    assert_eq!(
        (round0.suggested, round0.valid, round0.from_llm),
        (3, 2, 1),
        "{round0:?}"
    );
    assert_eq!(round0.filled, 5);
    assert!(!round0.fell_back);
    let reqs = llm.requests();
    // Tokens as the scripted model counts them.
    assert_eq!(
        round0.input_tokens,
        gemmtune::search::llm_port::scripted_tokens(&reqs[0].system)
            + gemmtune::search::llm_port::scripted_tokens(&reqs[0].user)
    );
    assert_eq!(
        round0.output_tokens,
        gemmtune::search::llm_port::scripted_tokens(&reply)
    );
    // Every request carries its schema (the untried valid names, at most the batch), a
    // reply limit and a seed.
    for q in &reqs {
        let schema = &q.schema.as_ref().expect("a schema").schema;
        let items = &schema["properties"]["configs"];
        assert!(items["maxItems"].as_u64().unwrap() <= 6);
        assert!(items["items"]["properties"]["config"]["enum"].is_array());
        assert!(q.max_tokens.is_some() && q.seed.is_some());
    }
    let acct = gemmtune::search::LlmAccount::of(&r.llm_rounds).unwrap();
    assert_eq!(acct.rounds, 2);
    assert_eq!(acct.fallback_rounds, 0);
    assert!(
        (acct.valid_rate().unwrap() - 3.0 / 4.0).abs() < 1e-9,
        "{acct:?}"
    );
}

#[test]
fn requests_fit_the_models_context_and_seeds_get_their_own_replies() {
    let s = Space::for_problem(
        &GemmProblem::new(16032, 109, 16384),
        &HwSpec::by_name("H200").unwrap(),
    );
    let llm = Arc::new(
        ScriptedLlm::new(vec![])
            .then(Err(LlmError::Transport("down".into())))
            .with_context(4096, 2048),
    );
    let opts = SearchOptions {
        batch_size: 8,
        max_rounds: Some(3),
        patience: None,
        ..SearchOptions::default()
    };
    let (r, _) = run_on_sim(
        &s,
        "llm",
        &opts,
        Some(llm.clone()),
        &llm_opts(FallbackMode::Pattern),
    )
    .unwrap();
    assert_eq!(r.llm_rounds.len(), 3);
    assert!(r.llm_rounds.iter().all(|l| l.fell_back));
    let budget_of = |q: &gemmtune::search::LlmRequest| {
        // The strictest count the prompt budget could meet: two characters a token.
        (q.system.chars().count() + q.user.chars().count()) as u32 / 2 + q.max_tokens.unwrap()
    };
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 3);
    for q in &reqs {
        assert!(budget_of(q) <= 4096 + 1024, "{} tokens", budget_of(q));
        assert!(q.max_tokens.unwrap() <= 2048);
    }
    // A later round's prompt has history, summarised to fit.
    assert!(reqs[2].user.contains("| Rank | Kernel |"));
    // Another search seed sends other seeds (and so gets, and caches, other replies).
    let again = Arc::new(ScriptedLlm::new(vec![]).then(Err(LlmError::Transport("down".into()))));
    let opts2 = SearchOptions {
        seed: 99,
        ..opts.clone()
    };
    run_on_sim(
        &s,
        "llm",
        &opts2,
        Some(again.clone()),
        &llm_opts(FallbackMode::Pattern),
    )
    .unwrap();
    assert_ne!(reqs[0].seed, again.requests()[0].seed);
}

#[test]
fn replayed_spaces_hold_only_the_recorded_configs() {
    let d = dataset();
    let space = space_for_dataset(&d);
    let recorded: HashSet<KernelConfig> = d.records().map(|(c, _)| c).collect();
    let all = space.enumerate(1_000_000).unwrap();
    assert_eq!(all.len(), recorded.len());
    assert!(all.iter().all(|c| recorded.contains(c)));
    // A config of the same values the sweep did not record is not in the space.
    let mut other = all[0];
    other.lpa = 0;
    let err = space.check(&other).unwrap_err();
    assert!(err.rule == "recorded" || err.rule == "domain", "{err:?}");
}

#[test]
fn a_replay_starts_on_the_recorded_configs_nearest_the_starts_of_a_gpu_run() {
    // The GEMV dataset recorded GEMV kernels, but not every GEMV start.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/gemv_4096x1x4096_bf16.jsonl"
    );
    let d = Dataset::load(std::path::Path::new(path)).unwrap();
    let space = space_for_dataset(&d);
    let recorded: HashSet<KernelConfig> = d.records().map(|(c, _)| c.canonical()).collect();
    let full = Space::for_problem(&d.header.problem, &d.header.hw);
    assert!(full.gemv_starts().iter().any(|c| !recorded.contains(c)));
    let starts = space.extra_starts();
    assert!(starts.iter().all(|c| recorded.contains(c)), "{starts:?}");
    assert!(
        starts.iter().any(|c| c.gv == 1),
        "no GEMV start among {:?}",
        starts.iter().map(|c| c.name()).collect::<Vec<_>>()
    );
}

#[test]
fn offline_evaluation_accounts_for_what_the_llm_gave() {
    let d = dataset();
    let all: Vec<KernelConfig> = d.records().map(|(c, _)| c).collect();
    let llm: Arc<dyn gemmtune::search::LlmPort> =
        Arc::new(ScriptedLlm::new(vec![]).then(Ok(names_json(&all[..2]))));
    let contenders = vec![
        Contender::registry("llm", llm_opts(FallbackMode::Pattern), Some(llm)),
        Contender::registry("pattern", StrategyOptions::default(), None),
    ];
    let rep = eval_strategies(&d, &contenders, &[1, 2], &[16], &EvalSettings::default()).unwrap();
    let acct = rep.results[0]
        .llm
        .as_ref()
        .expect("the llm strategy is accounted");
    assert!(acct.rounds >= 4, "{acct:?}");
    // Both names are valid; after the first round they are measured, so later rounds fall
    // back, which the account says.
    assert_eq!(acct.valid, acct.suggested);
    assert!(
        acct.fallback_rounds >= 2 && acct.fallback_rounds < acct.rounds,
        "{acct:?}"
    );
    assert!(acct.input_tokens > 0);
    assert!(rep.results[1].llm.is_none());
}
