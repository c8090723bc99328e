//! How an [`Outcome`] is written to and read from the database, whole.
//!
//! The stored text is the outcome's own tagged JSON (`{"status":"timed",...}`) with one
//! difference: JSON has no NaN or infinity, and a kernel that writes NaNs produces exactly
//! those in its verification errors, so non-finite numbers are written as the strings
//! `"NaN"`, `"inf"` and `"-inf"` and read back as the same values (a `null` written by
//! another tool reads as NaN). To do that per field, the outcome passes through a mirror
//! of its variants; the conversions destructure every field, so a field added to
//! [`Outcome`] or [`Verification`] fails to compile here until the store handles it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::device::{Outcome, Verification};

pub(super) fn encode(outcome: &Outcome) -> serde_json::Result<String> {
    serde_json::to_string(&StoredOutcome::from(outcome.clone()))
}

pub(super) fn decode(text: &str) -> serde_json::Result<Outcome> {
    serde_json::from_str::<StoredOutcome>(text).map(Outcome::from)
}

/// Verification details alone (the `verification_json` column), same encoding.
pub(super) fn encode_verification(v: &Verification) -> serde_json::Result<String> {
    serde_json::to_string(&StoredVerification::from(v.clone()))
}

/// Timing samples alone (the `samples_json` column), same encoding.
pub(super) fn encode_samples(samples: &[f64]) -> serde_json::Result<String> {
    serde_json::to_string(&samples.iter().map(|&x| Num::of(x)).collect::<Vec<_>>())
}

#[derive(Serialize, Deserialize)]
struct StoredVerification {
    #[serde(with = "lossless")]
    max_abs_err: f64,
    #[serde(with = "lossless")]
    max_rel_err: f64,
    #[serde(with = "lossless")]
    rel_l2_err: f64,
    #[serde(with = "lossless")]
    tolerance: f64,
    passed: bool,
    method: String,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
enum StoredOutcome {
    Timed {
        #[serde(with = "lossless_vec")]
        samples_us: Vec<f64>,
        verification: StoredVerification,
    },
    Invalid {
        reason: String,
    },
    CompileFailed {
        stderr: String,
    },
    LaunchFailed {
        message: String,
    },
    Timeout {
        #[serde(with = "lossless")]
        after_s: f64,
    },
    WrongResult {
        verification: StoredVerification,
    },
}

impl From<Verification> for StoredVerification {
    fn from(v: Verification) -> Self {
        let Verification {
            max_abs_err,
            max_rel_err,
            rel_l2_err,
            tolerance,
            passed,
            method,
        } = v;
        StoredVerification {
            max_abs_err,
            max_rel_err,
            rel_l2_err,
            tolerance,
            passed,
            method,
        }
    }
}

impl From<StoredVerification> for Verification {
    fn from(v: StoredVerification) -> Self {
        let StoredVerification {
            max_abs_err,
            max_rel_err,
            rel_l2_err,
            tolerance,
            passed,
            method,
        } = v;
        Verification {
            max_abs_err,
            max_rel_err,
            rel_l2_err,
            tolerance,
            passed,
            method,
        }
    }
}

impl From<Outcome> for StoredOutcome {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Timed {
                samples_us,
                verification,
            } => StoredOutcome::Timed {
                samples_us,
                verification: verification.into(),
            },
            Outcome::Invalid { reason } => StoredOutcome::Invalid { reason },
            Outcome::CompileFailed { stderr } => StoredOutcome::CompileFailed { stderr },
            Outcome::LaunchFailed { message } => StoredOutcome::LaunchFailed { message },
            Outcome::Timeout { after_s } => StoredOutcome::Timeout { after_s },
            Outcome::WrongResult { verification } => StoredOutcome::WrongResult {
                verification: verification.into(),
            },
        }
    }
}

impl From<StoredOutcome> for Outcome {
    fn from(o: StoredOutcome) -> Self {
        match o {
            StoredOutcome::Timed {
                samples_us,
                verification,
            } => Outcome::Timed {
                samples_us,
                verification: verification.into(),
            },
            StoredOutcome::Invalid { reason } => Outcome::Invalid { reason },
            StoredOutcome::CompileFailed { stderr } => Outcome::CompileFailed { stderr },
            StoredOutcome::LaunchFailed { message } => Outcome::LaunchFailed { message },
            StoredOutcome::Timeout { after_s } => Outcome::Timeout { after_s },
            StoredOutcome::WrongResult { verification } => Outcome::WrongResult {
                verification: verification.into(),
            },
        }
    }
}

/// A number, or a string for the values JSON cannot hold.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Num {
    Finite(f64),
    Text(String),
    Null(()),
}

impl Num {
    fn of(x: f64) -> Num {
        if x.is_finite() {
            Num::Finite(x)
        } else if x.is_nan() {
            Num::Text("NaN".into())
        } else if x > 0.0 {
            Num::Text("inf".into())
        } else {
            Num::Text("-inf".into())
        }
    }

    fn value<E: serde::de::Error>(self) -> Result<f64, E> {
        match self {
            Num::Finite(x) => Ok(x),
            Num::Null(()) => Ok(f64::NAN),
            Num::Text(s) => match s.as_str() {
                "NaN" | "nan" => Ok(f64::NAN),
                "inf" | "Infinity" => Ok(f64::INFINITY),
                "-inf" | "-Infinity" => Ok(f64::NEG_INFINITY),
                other => Err(E::custom(format!("`{other}` is not a number"))),
            },
        }
    }
}

mod lossless {
    use super::*;

    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        Num::of(*x).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Num::deserialize(d)?.value()
    }
}

mod lossless_vec {
    use super::*;

    pub fn serialize<S: Serializer>(xs: &[f64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(xs.iter().map(|&x| Num::of(x)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Vec::<Num>::deserialize(d)?
            .into_iter()
            .map(Num::value)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verification(err: f64) -> Verification {
        Verification {
            max_abs_err: err,
            max_rel_err: f64::INFINITY,
            rel_l2_err: f64::NEG_INFINITY,
            tolerance: 1e-2,
            passed: false,
            method: "gpu-reference".into(),
        }
    }

    #[test]
    fn finite_outcomes_are_plain_outcome_json() {
        let o = Outcome::Timeout { after_s: 2.5 };
        let text = encode(&o).unwrap();
        assert_eq!(text, serde_json::to_string(&o).unwrap());
        assert_eq!(serde_json::from_str::<Outcome>(&text).unwrap(), o);
    }

    #[test]
    fn non_finite_numbers_survive() {
        let o = Outcome::WrongResult {
            verification: verification(f64::NAN),
        };
        let back = decode(&encode(&o).unwrap()).unwrap();
        let v = back.verification().unwrap();
        assert!(v.max_abs_err.is_nan());
        assert_eq!(v.max_rel_err, f64::INFINITY);
        assert_eq!(v.rel_l2_err, f64::NEG_INFINITY);
        let samples = decode(r#"{"status":"timed","samples_us":[1.5,null,"inf"],"verification":{"max_abs_err":0,"max_rel_err":0,"rel_l2_err":0,"tolerance":0.1,"passed":true,"method":"m"}}"#).unwrap();
        let s = samples.samples().unwrap();
        assert_eq!(s[0], 1.5);
        assert!(s[1].is_nan());
        assert_eq!(s[2], f64::INFINITY);
        assert!(decode(r#"{"status":"timeout","after_s":"soon"}"#).is_err());
    }
}
