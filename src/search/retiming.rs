//! The final re-timing: the search's leaders measured again, in rounds, before a winner is named.
//!
//! In: the top K configs of the history with their search medians, and a round count. Out: one
//! [`Retimed`] per leader, fastest first, and every measurement taken (for the time split).
//!
//! A search median is one draw of a noisy quantity, and a search of 160 draws keeps the luckiest
//! ones on top. One more draw each still leaves the winner to chance when two leaders are within
//! the run-to-run spread (a config whose time swings by 5-10% between calls wins about half of
//! the time). So every round measures every leader once, with a fresh data seed and the leaders
//! in a rotated order (no leader always runs right after the same neighbour), and a leader's
//! time is the median of its round medians: one slow or lucky round no longer decides. A leader
//! that fails any round (wrong result, crash, timeout) is out: a kernel that was wrong once is
//! not a winner.

use super::evaluator::{EvalResult, Evaluator};
use super::SearchError;
use crate::device::Outcome;
use crate::measure::stats::Stats;
use crate::space::KernelConfig;

/// A top config and its re-timed median.
#[derive(Debug, Clone, PartialEq)]
pub struct Retimed {
    pub config: KernelConfig,
    pub search_median_us: f64,
    /// The median of the round medians; `None` when a round failed (the config is then not a
    /// winner).
    pub retimed_median_us: Option<f64>,
    /// Each passed round's median, in round order.
    pub round_medians_us: Vec<f64>,
    /// The last passed round's outcome, or the first failure.
    pub outcome: Outcome,
}

/// What the rounds produced.
pub struct RetimeRun {
    /// One per leader, fastest re-timed first; failed leaders last.
    pub retimed: Vec<Retimed>,
    /// Every measurement of every round, in the order taken.
    pub results: Vec<EvalResult>,
}

/// Measures `leaders` (config, search median) `rounds` times (at least once) through
/// `evaluator` and ranks them by the median of their round medians.
pub fn retime_leaders(
    evaluator: &mut dyn Evaluator,
    leaders: &[(KernelConfig, f64)],
    rounds: usize,
) -> Result<RetimeRun, SearchError> {
    let n = leaders.len();
    let mut round_medians: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut outcome: Vec<Option<Outcome>> = vec![None; n];
    let mut failed = vec![false; n];
    let mut results = Vec::new();
    for round in 0..rounds.max(1) {
        let order: Vec<usize> = (0..n).map(|i| (i + round) % n).collect();
        let configs: Vec<KernelConfig> = order.iter().map(|&i| leaders[i].0).collect();
        let got = evaluator.retime(&configs, round);
        if got.len() != configs.len() {
            return Err(SearchError::EvaluatorMismatch {
                sent: configs.len(),
                got: got.len(),
            });
        }
        for (&i, r) in order.iter().zip(&got) {
            match r.outcome.samples().and_then(Stats::of) {
                Some(s) if !failed[i] => {
                    round_medians[i].push(s.median_us);
                    outcome[i] = Some(r.outcome.clone());
                }
                Some(_) => {}
                None => {
                    // The first failure is the one reported; later rounds cannot undo it.
                    if !failed[i] {
                        outcome[i] = Some(r.outcome.clone());
                    }
                    failed[i] = true;
                }
            }
        }
        results.extend(got);
    }
    let mut retimed: Vec<Retimed> = leaders
        .iter()
        .enumerate()
        .map(|(i, &(config, search_median_us))| Retimed {
            config,
            search_median_us,
            retimed_median_us: if failed[i] {
                None
            } else {
                Stats::of(&round_medians[i]).map(|s| s.median_us)
            },
            round_medians_us: round_medians[i].clone(),
            outcome: outcome[i]
                .clone()
                .expect("every leader is measured in the first round"),
        })
        .collect();
    retimed.sort_by(|a, b| {
        a.retimed_median_us
            .unwrap_or(f64::INFINITY)
            .total_cmp(&b.retimed_median_us.unwrap_or(f64::INFINITY))
    });
    Ok(RetimeRun { retimed, results })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(name: &str) -> KernelConfig {
        KernelConfig::parse(name).unwrap()
    }

    fn timed(us: f64) -> Outcome {
        Outcome::modelled(vec![us; 3])
    }

    /// Times by (config index, round); records the order each round measured in.
    struct Rounds {
        configs: Vec<KernelConfig>,
        times: Vec<[Option<f64>; 3]>,
        orders: Vec<Vec<usize>>,
    }

    impl Evaluator for Rounds {
        fn evaluate(&mut self, _: &[KernelConfig]) -> Vec<EvalResult> {
            unreachable!("the re-timing only re-times")
        }
        fn retime(&mut self, configs: &[KernelConfig], round: usize) -> Vec<EvalResult> {
            let idx: Vec<usize> = configs
                .iter()
                .map(|c| self.configs.iter().position(|x| x == c).unwrap())
                .collect();
            self.orders.push(idx.clone());
            idx.iter()
                .map(|&i| EvalResult {
                    config: self.configs[i],
                    outcome: match self.times[i][round] {
                        Some(t) => timed(t),
                        None => Outcome::LaunchFailed {
                            message: "illegal address".into(),
                        },
                    },
                    compile_ms: 0.0,
                    bench_ms: 1.0,
                })
                .collect()
        }
    }

    /// Three leaders timed `times[leader][round]` (None: the round fails), each with the
    /// search median `search_us`.
    fn three(times: Vec<[Option<f64>; 3]>, search_us: f64) -> (Rounds, Vec<(KernelConfig, f64)>) {
        let configs: Vec<KernelConfig> = ["WGM1", "WGM4", "WGM8"]
            .iter()
            .map(|w| {
                config(&format!(
                    "MT128x64x64_MI64x8x16_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU1_{w}_GRVW8_SVW8_SU0"
                ))
            })
            .collect();
        let leaders = configs.iter().map(|&c| (c, search_us)).collect();
        let ev = Rounds {
            configs,
            times,
            orders: Vec::new(),
        };
        (ev, leaders)
    }

    #[test]
    fn one_fast_round_does_not_make_a_winner() {
        // The first leader is lucky once (the search's sample and round 0), slow after.
        let (mut ev, leaders) = three(
            vec![
                [Some(9.0), Some(12.0), Some(12.5)],
                [Some(10.0), Some(10.2), Some(10.1)],
                [Some(11.0), Some(11.0), Some(11.0)],
            ],
            9.0,
        );
        let configs = ev.configs.clone();
        let run = retime_leaders(&mut ev, &leaders, 3).unwrap();
        assert_eq!(run.retimed[0].config, configs[1]);
        assert_eq!(run.retimed[0].retimed_median_us, Some(10.1));
        assert_eq!(run.retimed[0].round_medians_us, vec![10.0, 10.2, 10.1]);
        assert_eq!(run.retimed[1].config, configs[2]);
        assert_eq!(run.retimed[2].retimed_median_us, Some(12.0));
        assert_eq!(run.results.len(), 9);
        // Each round starts one leader further on.
        assert_eq!(ev.orders, vec![vec![0, 1, 2], vec![1, 2, 0], vec![2, 0, 1]]);
    }

    #[test]
    fn a_leader_that_fails_any_round_is_out() {
        let (mut ev, leaders) = three(
            vec![
                [Some(5.0), None, Some(5.0)],
                [Some(10.0), Some(10.0), Some(10.0)],
                [None, None, None],
            ],
            5.0,
        );
        let configs = ev.configs.clone();
        let run = retime_leaders(&mut ev, &leaders, 3).unwrap();
        assert_eq!(run.retimed[0].config, configs[1]);
        for failed in &run.retimed[1..] {
            assert_eq!(failed.retimed_median_us, None);
            assert_eq!(failed.outcome.status(), "launch_failed");
        }
    }

    #[test]
    fn zero_rounds_still_measure_once() {
        let (mut ev, leaders) = three(vec![[Some(3.0), None, None]; 3], 1.0);
        let run = retime_leaders(&mut ev, &leaders, 0).unwrap();
        assert_eq!(run.results.len(), 3);
        assert!(run.retimed.iter().all(|r| r.retimed_median_us == Some(3.0)));
    }
}
