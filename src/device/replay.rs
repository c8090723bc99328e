//! `replay`: a [`Device`] that serves measurements recorded from a real GPU sweep.
//!
//! A sweep dataset holds one problem, the device it ran on (info and hw spec), the vendor
//! baseline, and per canonical config name the recorded [`Outcome`]. Strategies run against
//! it exactly as against a GPU, so they can be compared offline on real timings. A config
//! the sweep did not record is `LaunchFailed` ("not in the recorded sweep"). Timed configs
//! return a seeded bootstrap resample of their recorded samples: each run draws with
//! replacement, so strategies (and the final re-timing) see the real run-to-run noise.
//!
//! Two file forms are read: one JSON document (`{"format": "gemmtune-sweep", ...,
//! "records": [...]}`), or JSON lines: a header line followed by one record per line, which
//! is what [`SweepWriter`] appends while a sweep runs, so a crashed sweep keeps its data.
//! The header says where the sweep was recorded (the device with its driver and compiler)
//! and, from sweeps that record it, when and by which command ([`Provenance`]).

use std::collections::{BTreeMap, HashMap};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::{Device, DeviceError, DeviceInfo, Outcome, TimingOptions};
use crate::compile::CompiledKernel;
use crate::hw::HwSpec;
use crate::measure::stats::Stats;
use crate::problem::GemmProblem;
use crate::space::KernelConfig;

/// The `format` field every sweep file carries.
pub const SWEEP_FORMAT: &str = "gemmtune-sweep";
pub const SWEEP_VERSION: u32 = 1;

#[derive(Debug, Error)]
pub enum ReplayError {
    #[error("cannot read sweep {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write sweep {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("sweep {path}, line {line}: {message}")]
    Parse {
        path: String,
        line: usize,
        message: String,
    },
    #[error("sweep {path}: {message}")]
    Format { path: String, message: String },
}

/// What the sweep measured, and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepHeader {
    pub format: String,
    pub version: u32,
    pub problem: GemmProblem,
    pub device: DeviceInfo,
    pub hw: HwSpec,
    /// The vendor library's outcome on the same problem, when it was measured.
    #[serde(default)]
    pub vendor: Option<Outcome>,
    /// When and how it was recorded (absent from sweeps recorded before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

/// When and how a sweep was recorded; the device, its driver and compiler are in the header's
/// `device`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// UTC time the sweep started, `YYYY-MM-DDTHH:MM:SSZ`.
    pub recorded_at: String,
    /// The command line that recorded it.
    pub command: String,
    /// The gemmtune version that recorded it.
    pub gemmtune: String,
}

impl Provenance {
    /// This process, now.
    pub fn now() -> Self {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Provenance {
            recorded_at: utc(secs),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            gemmtune: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// The date part of `recorded_at`.
    pub fn date(&self) -> &str {
        self.recorded_at.split('T').next().unwrap_or("")
    }
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ` (the proleptic Gregorian calendar, from the
/// days-to-civil algorithm of Howard Hinnant's date library).
fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

impl SweepHeader {
    pub fn new(
        problem: GemmProblem,
        device: DeviceInfo,
        hw: HwSpec,
        vendor: Option<Outcome>,
    ) -> Self {
        SweepHeader {
            format: SWEEP_FORMAT.to_string(),
            version: SWEEP_VERSION,
            problem,
            device,
            hw,
            vendor,
            provenance: None,
        }
    }
}

/// One recorded config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRecord {
    /// Canonical kernel name.
    pub config: String,
    pub outcome: Outcome,
}

/// The whole document form.
#[derive(Serialize, Deserialize)]
struct Document {
    #[serde(flatten)]
    header: SweepHeader,
    records: Vec<SweepRecord>,
}

/// A recorded sweep in memory, records keyed by canonical config name.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    pub header: SweepHeader,
    records: BTreeMap<String, Outcome>,
}

impl Dataset {
    pub fn new(header: SweepHeader) -> Self {
        Dataset {
            header,
            records: BTreeMap::new(),
        }
    }

    /// Adds (or replaces) the outcome of a config.
    pub fn insert(&mut self, config: &KernelConfig, outcome: Outcome) {
        self.records.insert(config.name(), outcome);
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn outcome(&self, config: &KernelConfig) -> Option<&Outcome> {
        self.records.get(&config.name())
    }

    /// The recorded median of a config, when it was timed.
    pub fn median_us(&self, config: &KernelConfig) -> Option<f64> {
        self.outcome(config)
            .and_then(|o| o.samples())
            .and_then(Stats::of)
            .map(|s| s.median_us)
    }

    /// Every recorded config with its outcome, in name order.
    pub fn records(&self) -> impl Iterator<Item = (KernelConfig, &Outcome)> {
        self.records
            .iter()
            .filter_map(|(name, o)| KernelConfig::parse(name).ok().map(|c| (c, o)))
    }

    /// The fastest recorded config by median.
    pub fn best(&self) -> Option<(KernelConfig, f64)> {
        self.records()
            .filter_map(|(c, o)| o.samples().and_then(Stats::of).map(|s| (c, s.median_us)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Parses either file form; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ReplayError> {
        let trimmed = text.trim_start();
        // A document is one JSON value spanning the file; JSON lines fail that parse.
        if trimmed.starts_with('{') {
            if let Ok(doc) = serde_json::from_str::<Document>(text) {
                let mut d = Dataset::new(doc.header);
                d.check_header(origin)?;
                for r in doc.records {
                    d.add_record(r, origin, 0)?;
                }
                return Ok(d);
            }
        }
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (first_no, first) = lines.next().ok_or_else(|| ReplayError::Format {
            path: origin.to_string(),
            message: "empty file".into(),
        })?;
        let header: SweepHeader = serde_json::from_str(first).map_err(|e| ReplayError::Parse {
            path: origin.to_string(),
            line: first_no + 1,
            message: format!("expected the sweep header: {e}"),
        })?;
        let mut d = Dataset::new(header);
        d.check_header(origin)?;
        for (no, line) in lines {
            let r: SweepRecord = serde_json::from_str(line).map_err(|e| ReplayError::Parse {
                path: origin.to_string(),
                line: no + 1,
                message: e.to_string(),
            })?;
            d.add_record(r, origin, no + 1)?;
        }
        Ok(d)
    }

    pub fn load(path: &Path) -> Result<Self, ReplayError> {
        let text = std::fs::read_to_string(path).map_err(|source| ReplayError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// The one-document form.
    pub fn to_json(&self) -> String {
        let doc = Document {
            header: self.header.clone(),
            records: self
                .records
                .iter()
                .map(|(k, v)| SweepRecord {
                    config: k.clone(),
                    outcome: v.clone(),
                })
                .collect(),
        };
        serde_json::to_string_pretty(&doc).expect("a dataset always serialises")
    }

    /// Writes the JSON-lines form: the header line, then one record per line.
    pub fn save(&self, path: &Path) -> Result<(), ReplayError> {
        let mut w = SweepWriter::create(path, &self.header)?;
        for (name, outcome) in &self.records {
            w.record(&SweepRecord {
                config: name.clone(),
                outcome: outcome.clone(),
            })?;
        }
        Ok(())
    }

    fn check_header(&self, origin: &str) -> Result<(), ReplayError> {
        if self.header.format != SWEEP_FORMAT || self.header.version != SWEEP_VERSION {
            return Err(ReplayError::Format {
                path: origin.to_string(),
                message: format!(
                    "format `{}` version {} (expected `{SWEEP_FORMAT}` version {SWEEP_VERSION})",
                    self.header.format, self.header.version
                ),
            });
        }
        Ok(())
    }

    fn add_record(&mut self, r: SweepRecord, origin: &str, line: usize) -> Result<(), ReplayError> {
        let c = KernelConfig::parse(&r.config).map_err(|e| ReplayError::Parse {
            path: origin.to_string(),
            line,
            message: e.to_string(),
        })?;
        self.insert(&c, r.outcome);
        Ok(())
    }
}

/// Appends a sweep to a JSON-lines file as measurements happen.
pub struct SweepWriter {
    out: BufWriter<std::fs::File>,
    path: PathBuf,
}

impl SweepWriter {
    /// Creates (truncates) the file and writes the header line.
    pub fn create(path: &Path, header: &SweepHeader) -> Result<Self, ReplayError> {
        let file = std::fs::File::create(path).map_err(|source| ReplayError::Write {
            path: path.display().to_string(),
            source,
        })?;
        let mut w = SweepWriter {
            out: BufWriter::new(file),
            path: path.to_path_buf(),
        };
        let line = serde_json::to_string(header).expect("a header always serialises");
        w.line(&line)?;
        Ok(w)
    }

    /// Appends one record and flushes, so a crash loses at most the config being measured.
    pub fn append(&mut self, config: &KernelConfig, outcome: &Outcome) -> Result<(), ReplayError> {
        self.record(&SweepRecord {
            config: config.name(),
            outcome: outcome.clone(),
        })
    }

    fn record(&mut self, r: &SweepRecord) -> Result<(), ReplayError> {
        let line = serde_json::to_string(r).expect("a record always serialises");
        self.line(&line)
    }

    fn line(&mut self, line: &str) -> Result<(), ReplayError> {
        let err = |source| ReplayError::Write {
            path: self.path.display().to_string(),
            source,
        };
        writeln!(self.out, "{line}").map_err(err)?;
        self.out.flush().map_err(|source| ReplayError::Write {
            path: self.path.display().to_string(),
            source,
        })
    }
}

/// Serves a [`Dataset`] through the [`Device`] trait.
pub struct ReplayDevice {
    data: Dataset,
    info: DeviceInfo,
    problem_set: bool,
    /// Runs per config name so far: each run draws a different resample.
    runs: HashMap<String, u64>,
}

impl ReplayDevice {
    pub fn new(data: Dataset) -> Self {
        let mut info = data.header.device.clone();
        info.backend = "replay".to_string();
        ReplayDevice {
            data,
            info,
            problem_set: false,
            runs: HashMap::new(),
        }
    }

    pub fn dataset(&self) -> &Dataset {
        &self.data
    }

    fn resample(&mut self, key: &str, recorded: &Outcome, timing: &TimingOptions) -> Outcome {
        let Outcome::Timed {
            samples_us,
            verification,
        } = recorded
        else {
            return recorded.clone();
        };
        if samples_us.is_empty() {
            return recorded.clone();
        }
        let run = self.runs.entry(key.to_string()).or_insert(0);
        *run += 1;
        let mut h = Sha256::new();
        h.update(key.as_bytes());
        h.update(timing.seed.to_le_bytes());
        h.update(run.to_le_bytes());
        let digest = h.finalize();
        let mut seed = [0u8; 32];
        seed.copy_from_slice(&digest);
        let mut rng = rand_chacha::ChaCha8Rng::from_seed(seed);
        let n = timing.iters.max(1) as usize;
        let samples = (0..n)
            .map(|_| samples_us[rng.gen_range(0..samples_us.len())])
            .collect();
        Outcome::Timed {
            samples_us: samples,
            verification: verification.clone(),
        }
    }
}

impl Device for ReplayDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn hw_spec(&self) -> &HwSpec {
        &self.data.header.hw
    }

    fn set_problem(&mut self, p: &GemmProblem, _t: &TimingOptions) -> Result<(), DeviceError> {
        let recorded = &self.data.header.problem;
        if p.key() != recorded.key() {
            return Err(DeviceError::NotAvailable {
                backend: "replay",
                reason: format!(
                    "the sweep was recorded for {}, not {}",
                    recorded.label(),
                    p.label()
                ),
            });
        }
        self.problem_set = true;
        Ok(())
    }

    fn run_kernel(&mut self, k: &CompiledKernel, t: &TimingOptions) -> Outcome {
        if !self.problem_set {
            return Outcome::LaunchFailed {
                message: "no problem set on the device".into(),
            };
        }
        let name = k.config.name();
        match self.data.records.get(&name).cloned() {
            Some(recorded) => self.resample(&name, &recorded, t),
            None => Outcome::LaunchFailed {
                message: format!("{name} is not in the recorded sweep"),
            },
        }
    }

    fn run_vendor(&mut self, t: &TimingOptions) -> Outcome {
        match self.data.header.vendor.clone() {
            Some(v) => self.resample("vendor", &v, t),
            None => Outcome::LaunchFailed {
                message: "the recorded sweep has no vendor baseline".into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_772_625_845), "2026-03-04T12:04:05Z");
    }
}
