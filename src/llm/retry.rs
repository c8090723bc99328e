//! When and how long to wait before trying a failed request again.
//!
//! The transports' shared HTTP loop asks [`RetryPolicy::delay`] for the pause before attempt
//! `n + 1`: exponential backoff from `base` (doubling each attempt, capped at `max_delay`),
//! scaled by a random factor in [0.5, 1.0] so that several clients hitting the same rate limit
//! do not retry in lockstep; a server's `Retry-After` is a floor (capped at `max_retry_after`
//! so a misbehaving server cannot stall a tuning run for hours).

use rand::Rng;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts after the first one.
    pub retries: u32,
    pub base: Duration,
    pub max_delay: Duration,
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: 3,
            base: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            retries: 0,
            ..RetryPolicy::default()
        }
    }

    pub fn max_attempts(&self) -> u32 {
        self.retries.saturating_add(1)
    }

    /// The pause after failed attempt number `attempt` (0-based), given the server's
    /// `Retry-After` if it sent one.
    pub fn delay(
        &self,
        attempt: u32,
        retry_after: Option<Duration>,
        rng: &mut impl Rng,
    ) -> Duration {
        let exp = self
            .base
            .saturating_mul(1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX))
            .min(self.max_delay);
        let jittered = exp.mul_f64(rng.gen_range(0.5..=1.0));
        match retry_after {
            Some(ra) => jittered.max(ra.min(self.max_retry_after)),
            None => jittered,
        }
    }
}

/// Reads a `Retry-After` header value given as delay-seconds (integer or decimal). The
/// HTTP-date form is not read: the rate-limiting LLM APIs send seconds, and an unreadable
/// value simply falls back to the exponential backoff.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    if secs.is_finite() && secs >= 0.0 {
        Some(Duration::from_secs_f64(secs.min(86_400.0)))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn backoff_grows_then_caps_and_stays_within_jitter_band() {
        let p = RetryPolicy {
            retries: 10,
            base: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            max_retry_after: Duration::from_secs(5),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for attempt in 0..12 {
            let full = (100u64 << attempt.min(20)).min(1000);
            let d = p.delay(attempt, None, &mut rng).as_millis() as u64;
            assert!(
                d >= full / 2 && d <= full,
                "attempt {attempt}: {d} not in [{}, {full}]",
                full / 2
            );
        }
    }

    #[test]
    fn retry_after_is_a_floor_with_a_cap() {
        let p = RetryPolicy {
            base: Duration::from_millis(10),
            max_retry_after: Duration::from_secs(3),
            ..RetryPolicy::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(
            p.delay(0, Some(Duration::from_secs(2)), &mut rng),
            Duration::from_secs(2)
        );
        assert_eq!(
            p.delay(0, Some(Duration::from_secs(600)), &mut rng),
            Duration::from_secs(3)
        );
    }

    #[test]
    fn parses_retry_after_seconds_only() {
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("0.25"), Some(Duration::from_millis(250)));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("NaN"), None);
    }
}
