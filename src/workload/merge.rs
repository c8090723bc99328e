//! `gemmtune merge DIR...`: shard outputs back into one report.
//!
//! Flow: each directory's [`Manifest`] is read and checked (same workload, same shard count,
//! no shard twice; a missing shard is a warning, the report then covers what exists); the
//! GEMMs each shard owns are taken from its `workload.csv` and `raw_results.csv`; the log
//! lines that could not be read come from every shard's `unread_lines.csv`, each line once
//! (every shard parsed the same logs); the GEMMs' measurements are copied from the shard's
//! database into the merged one (skipping any already there, so merging twice adds nothing);
//! then the report is written exactly as a single run writes it, so merging N shards of a log
//! gives the report of one run over it.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::manifest::Manifest;
use super::outputs::{ensure_writable, write, Report, RAW_CSV, UNREAD_CSV, WORKLOAD_CSV};
use super::record::{read_records, read_workload, GemmRecord};
use super::selection::WorkloadGemm;
use super::shard::Shard;
use super::summary::{Heading, Summary};
use super::unread;
use super::WorkloadError;
use crate::problem::log::LogIssue;
use crate::store::{NewRun, RunStatus, Store};

pub struct MergeOptions {
    pub dirs: Vec<PathBuf>,
    pub out: PathBuf,
    /// Keep/drop margin; default: the shards' own.
    pub min_uplift: Option<f64>,
    pub command_line: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct MergeOutcome {
    pub workload: Vec<WorkloadGemm>,
    pub records: Vec<GemmRecord>,
    pub summary: Summary,
    /// The log lines that could not be read, from all shards, each once.
    pub unread_lines: Vec<LogIssue>,
    pub min_uplift: f64,
    pub measurements_copied: usize,
    pub warnings: Vec<String>,
    pub files: Vec<PathBuf>,
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

pub fn merge(o: &MergeOptions) -> Result<MergeOutcome, WorkloadError> {
    if o.dirs.is_empty() {
        return Err(WorkloadError::Usage(
            "give at least one directory to merge".into(),
        ));
    }
    let mut shards: Vec<(PathBuf, Manifest)> = Vec::new();
    for d in &o.dirs {
        shards.push((d.clone(), Manifest::load(d)?));
    }
    ensure_writable(&o.out)?;
    let _lock = super::lock::lock(&o.out)?;
    if let Some((d, _)) = shards.iter().find(|(d, _)| same_dir(d, &o.out)) {
        return Err(WorkloadError::Usage(format!(
            "the merged report would overwrite the shard directory {}; choose another --out",
            d.display()
        )));
    }
    let (first_dir, first) = &shards[0];
    let mut warnings = Vec::new();
    let mut by_index: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, (d, m)) in shards.iter().enumerate() {
        if m.workload_fingerprint != first.workload_fingerprint {
            return Err(WorkloadError::Usage(format!(
                "{} tuned another workload than {} (logs {} vs {})",
                d.display(),
                first_dir.display(),
                m.logs.join(", "),
                first.logs.join(", ")
            )));
        }
        if m.shard.count != first.shard.count {
            return Err(WorkloadError::Usage(format!(
                "{} is shard {} but {} is shard {}: shards of one split have the same count",
                d.display(),
                m.shard,
                first_dir.display(),
                first.shard
            )));
        }
        if let Some(&j) = by_index.get(&m.shard.index) {
            return Err(WorkloadError::Usage(format!(
                "shard {} given twice: {} and {}",
                m.shard,
                shards[j].0.display(),
                d.display()
            )));
        }
        by_index.insert(m.shard.index, i);
        if (m.min_uplift - first.min_uplift).abs() > 1e-12 && o.min_uplift.is_none() {
            warnings.push(format!(
                "{} used --min-uplift {} but {} used {}; the merged report uses {}",
                d.display(),
                m.min_uplift,
                first_dir.display(),
                first.min_uplift,
                first.min_uplift
            ));
        }
    }
    let count = first.shard.count;
    for missing in (0..count).filter(|i| !by_index.contains_key(i)) {
        warnings.push(format!(
            "shard {missing}/{count} is missing: its GEMMs are reported without tuning results"
        ));
    }
    let min_uplift = o.min_uplift.unwrap_or(first.min_uplift);

    // Every GEMM from the shard that owns it (any shard's copy when the owner is missing).
    let mut workload: BTreeMap<usize, WorkloadGemm> = BTreeMap::new();
    let mut records: BTreeMap<usize, GemmRecord> = BTreeMap::new();
    let mut unread_lines: Vec<LogIssue> = Vec::new();
    for (d, m) in &shards {
        for (g, owner) in read_workload(&d.join(WORKLOAD_CSV))? {
            let from_owner = owner == m.shard.index;
            let orphan = !by_index.contains_key(&owner) && !workload.contains_key(&g.id);
            if from_owner || orphan {
                workload.insert(g.id, g);
            }
        }
        for r in read_records(&d.join(RAW_CSV))? {
            if Shard::owner(count, r.id) != m.shard.index {
                return Err(WorkloadError::Usage(format!(
                    "{}: GEMM #{} does not belong to shard {}",
                    d.join(RAW_CSV).display(),
                    r.id,
                    m.shard
                )));
            }
            records.insert(r.id, r);
        }
        let path = d.join(UNREAD_CSV);
        if path.exists() {
            unread::join(&mut unread_lines, unread::read(&path)?);
        } else {
            warnings.push(format!(
                "{} has no {UNREAD_CSV} (written by an older gemmtune): lines its logs could not be read are not known",
                d.display()
            ));
        }
    }
    if workload.len() != first.gemms {
        warnings.push(format!(
            "the shards list {} of the workload's {} GEMMs",
            workload.len(),
            first.gemms
        ));
    }
    let workload: Vec<WorkloadGemm> = workload.into_values().collect();
    let records: Vec<GemmRecord> = records.into_values().collect();

    let measurements_copied = merge_databases(o, &shards, &workload, &records)?;

    let heading = Heading {
        title: "gemmtune tune-log (merged)".into(),
        lines: vec![
            format!("logs: {}", first.logs.join(", ")),
            format!(
                "merged from {} of {count} shards: {}",
                shards.len(),
                shards
                    .iter()
                    .map(|(d, m)| format!("{} ({})", d.display(), m.shard))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!("device: {} ({})", first.device_name, first.arch),
        ],
    };
    let (summary, files) = write(
        &o.out,
        &Report {
            heading,
            workload: &workload,
            records: &records,
            unread: &unread_lines,
            shards: 1,
            min_uplift,
        },
    )?;
    let mut devices: Vec<u32> = shards
        .iter()
        .flat_map(|(_, m)| m.devices.iter().copied())
        .collect();
    devices.sort_unstable();
    devices.dedup();
    Manifest {
        logs: first.logs.clone(),
        workload_fingerprint: first.workload_fingerprint.clone(),
        gemms: first.gemms,
        shard: Shard::ALL,
        devices,
        device_name: first.device_name.clone(),
        arch: first.arch.clone(),
        backend: first.backend.clone(),
        db: PathBuf::from(DB_FILE),
        strategy: first.strategy.clone(),
        criteria: first.criteria,
        min_uplift,
        merged_from: shards.iter().map(|(d, _)| d.clone()).collect(),
        command_line: o.command_line.clone(),
    }
    .save(&o.out)?;
    Ok(MergeOutcome {
        workload,
        records,
        summary,
        unread_lines,
        min_uplift,
        measurements_copied,
        warnings,
        files,
    })
}

pub const DB_FILE: &str = "results.sqlite";

/// Copies each shard's measurements of the GEMMs it owns into `<out>/results.sqlite`.
fn merge_databases(
    o: &MergeOptions,
    shards: &[(PathBuf, Manifest)],
    workload: &[WorkloadGemm],
    records: &[GemmRecord],
) -> Result<usize, WorkloadError> {
    let mut target = Store::open(o.out.join(DB_FILE))?;
    let run = target.begin_run(&NewRun {
        command_line: o.command_line.clone(),
        strategy: None,
        device: None,
    })?;
    let mut copied = 0;
    for (dir, m) in shards {
        let path = m.db_path(dir);
        if !path.exists() {
            return Err(WorkloadError::file(
                &path,
                format!("the results database of {} does not exist", dir.display()),
            ));
        }
        let source = Store::open(&path)?;
        let mut devices: Vec<String> = vec![m.device_name.clone()];
        devices.extend(records.iter().filter_map(|r| r.device_name.clone()));
        devices.sort();
        devices.dedup();
        for g in workload
            .iter()
            .filter(|g| Shard::owner(m.shard.count, g.id) == m.shard.index)
        {
            let key = g.problem.key();
            for device in &devices {
                let present: HashSet<(String, String)> = target
                    .measurements_for_problem(&key, device)?
                    .iter()
                    .map(|x| identity(&x.key.config_name, &x.outcome))
                    .collect();
                for x in source.measurements_for_problem(&key, device)? {
                    if present.contains(&identity(&x.key.config_name, &x.outcome)) {
                        continue;
                    }
                    target.record(Some(run), &x.key, &x.problem, &x.outcome, &x.extra)?;
                    copied += 1;
                }
            }
        }
    }
    target.finish_run(run, RunStatus::Finished)?;
    Ok(copied)
}

/// Two stored measurements are the same one when config and outcome (samples included) are.
fn identity(config: &str, outcome: &crate::device::Outcome) -> (String, String) {
    (
        config.to_string(),
        serde_json::to_string(outcome).unwrap_or_default(),
    )
}
