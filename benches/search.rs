//! Cost of the search's own work per round, with a 200-entry history: each strategy's
//! proposal, and building the LLM refinement prompt. Both must stay negligible next to
//! compiling and timing kernels.

use criterion::{criterion_group, criterion_main, Criterion};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use gemmtune::device::sim::model_time_us;
use gemmtune::device::Outcome;
use gemmtune::hw::HwSpec;
use gemmtune::problem::GemmProblem;
use gemmtune::search::prompt::PromptBuilder;
use gemmtune::search::strategies::{self, StrategyOptions};
use gemmtune::search::{History, ProposeCtx};
use gemmtune::space::Space;

/// The seed workload's space on H200 and 200 sampled configs timed by the sim model.
fn setup() -> (Space, History) {
    let hw = HwSpec::by_name("H200").expect("built-in spec");
    let space = Space::for_problem(&GemmProblem::new(16032, 109, 16384), &hw);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut history = History::new();
    while history.len() < 200 {
        let Some(c) = space.sample(&mut rng) else {
            break;
        };
        if history.contains(&c) {
            continue;
        }
        let t = model_time_us(&c, &space.problem, &space.hw);
        let outcome = if history.len().is_multiple_of(17) {
            Outcome::CompileFailed {
                stderr: "error: too many registers".into(),
            }
        } else {
            Outcome::modelled(vec![t, t * 1.01, t * 0.99])
        };
        history.push(history.len() / 16, c, outcome);
    }
    (space, history)
}

fn bench_proposals(c: &mut Criterion) {
    let (space, history) = setup();
    let mut group = c.benchmark_group("propose_200_history");
    for name in ["random", "pattern", "genetic"] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut strategy = strategies::build(name, &StrategyOptions::default(), None)
                    .expect("registered strategy");
                let mut rng = ChaCha8Rng::seed_from_u64(7);
                let mut ctx = ProposeCtx {
                    space: &space,
                    history: &history,
                    batch: 16,
                    remaining: 100,
                    round: 12,
                    rng: &mut rng,
                };
                strategy.propose(&mut ctx).expect("proposal")
            })
        });
    }
    group.finish();
}

fn bench_prompt(c: &mut Criterion) {
    let (space, history) = setup();
    c.bench_function("prompt_refinement_200_history", |b| {
        b.iter(|| PromptBuilder::new(&space).refinement_batch(&history, &[], 15, false))
    });
}

criterion_group!(benches, bench_proposals, bench_prompt);
criterion_main!(benches);
