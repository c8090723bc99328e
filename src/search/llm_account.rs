//! What an LLM contributed to a search, from its per-round records: the run summary, the
//! JSON result, the database and `eval-strategies` all report these same figures.
//!
//! The valid rate is valid suggestions over all suggestions (a name or object the space
//! rejects counts against it); a fallback round is one where the model was to propose but
//! no config of the batch came from it (it failed, or said nothing valid and new); tokens are what the endpoint
//! counted (cached replies cost none); wall time is the time spent waiting on the model.

use serde::Serialize;
use serde_json::{json, Value};

use super::strategy::LlmRound;

/// The totals of a search's LLM rounds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LlmAccount {
    /// Rounds in which the model was asked (or would have been, had it not failed).
    pub rounds: usize,
    pub requests: usize,
    pub suggested: usize,
    pub valid: usize,
    pub from_llm: usize,
    pub filled: usize,
    pub fallback_rounds: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub wall_s: f64,
}

impl LlmAccount {
    /// The totals of `rounds`; `None` when the search used no LLM.
    pub fn of(rounds: &[LlmRound]) -> Option<Self> {
        if rounds.is_empty() {
            return None;
        }
        let mut a = LlmAccount {
            rounds: rounds.len(),
            ..Default::default()
        };
        for r in rounds {
            a.requests += r.requests;
            a.suggested += r.suggested;
            a.valid += r.valid;
            a.from_llm += r.from_llm;
            a.filled += r.filled;
            a.fallback_rounds += usize::from(r.fell_back);
            a.input_tokens += r.input_tokens;
            a.output_tokens += r.output_tokens;
            a.wall_s += r.wall_s;
        }
        Some(a)
    }

    /// The totals of several searches (the seeds of an offline evaluation).
    pub fn sum<'a>(accounts: impl IntoIterator<Item = &'a LlmAccount>) -> Option<Self> {
        let mut total: Option<LlmAccount> = None;
        for a in accounts {
            let t = total.get_or_insert_with(LlmAccount::default);
            t.rounds += a.rounds;
            t.requests += a.requests;
            t.suggested += a.suggested;
            t.valid += a.valid;
            t.from_llm += a.from_llm;
            t.filled += a.filled;
            t.fallback_rounds += a.fallback_rounds;
            t.input_tokens += a.input_tokens;
            t.output_tokens += a.output_tokens;
            t.wall_s += a.wall_s;
        }
        total
    }

    /// Valid suggestions over all suggestions; `None` when the model suggested nothing.
    pub fn valid_rate(&self) -> Option<f64> {
        (self.suggested > 0).then(|| self.valid as f64 / self.suggested as f64)
    }

    /// Mean wall time per round, in seconds.
    pub fn wall_per_round_s(&self) -> f64 {
        self.wall_s / self.rounds.max(1) as f64
    }

    /// No config of the whole search came from the model.
    pub fn contributed_nothing(&self) -> bool {
        self.from_llm == 0
    }

    /// One line for the run summary.
    pub fn describe(&self) -> String {
        format!(
            "LLM: {} of {} configs measured came from the model; {} valid of {} suggested ({}); {} of {} rounds fell back; {} + {} tokens; {:.1} s waiting ({:.1} s per round)",
            self.from_llm,
            self.from_llm + self.filled,
            self.valid,
            self.suggested,
            self.valid_rate()
                .map(|r| format!("{:.0}%", r * 100.0))
                .unwrap_or_else(|| "-".into()),
            self.fallback_rounds,
            self.rounds,
            self.input_tokens,
            self.output_tokens,
            self.wall_s,
            self.wall_per_round_s(),
        )
    }

    pub fn to_json(&self, rounds: &[LlmRound]) -> Value {
        json!({
            "rounds": self.rounds,
            "requests": self.requests,
            "suggested": self.suggested,
            "valid": self.valid,
            "valid_rate": self.valid_rate(),
            "from_llm": self.from_llm,
            "filled": self.filled,
            "fallback_rounds": self.fallback_rounds,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "wall_s": self.wall_s,
            "wall_per_round_s": self.wall_per_round_s(),
            "per_round": rounds,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_rates_and_fallback_rounds() {
        assert_eq!(LlmAccount::of(&[]), None);
        let rounds = [
            LlmRound {
                requests: 1,
                suggested: 8,
                valid: 6,
                from_llm: 5,
                filled: 3,
                input_tokens: 100,
                output_tokens: 40,
                wall_s: 2.0,
                ..Default::default()
            },
            LlmRound {
                requests: 1,
                suggested: 4,
                valid: 0,
                filled: 8,
                fell_back: true,
                wall_s: 1.0,
                ..Default::default()
            },
            LlmRound::fell_back(std::time::Duration::from_secs(3), 0, 8),
        ];
        let a = LlmAccount::of(&rounds).unwrap();
        assert_eq!((a.rounds, a.requests, a.fallback_rounds), (3, 3, 2));
        assert_eq!(a.valid_rate(), Some(0.5));
        assert_eq!(a.wall_per_round_s(), 2.0);
        assert!(!a.contributed_nothing());
        assert!(a
            .describe()
            .contains("5 of 24 configs measured came from the model"));
        let two = LlmAccount::sum([&a, &a]).unwrap();
        assert_eq!((two.rounds, two.input_tokens), (6, 200));
    }
}
