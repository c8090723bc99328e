//! `gemmtune export DIR`: the kept kernels of a `tune-log` (or `merge`) report as
//! Tensile/TensileLite benchmark configs and per-GEMM advice.
//!
//! Flow: the directory's solutions file names the winners; for each, one folder
//! `<id>_<shape>/` gets `tensile_config.yaml` ([`crate::report::tensile`]) and `advice.md`
//! ([`crate::report::advice`], from every measurement of that GEMM in the directory's
//! results database, rewritten by an LLM when `--llm-*` is given); `index.md` lists them.

use anyhow::{Context, Result};
use std::path::Path;

use super::args::{ExportArgs, GlobalOpts};
use super::output::print;
use super::search_args::llm_port;
use super::tune_log_cmd::cli_error;
use crate::hw::HwSpec;
use crate::report::advice::{analyse, llm_prompt, render_markdown, AdviceInput};
use crate::report::tensile::{benchmark_config, Provenance};
use crate::search::llm_port::{LlmRequest, SharedLlm};
use crate::space::{KernelConfig, Space};
use crate::store::Store;
use crate::workload::manifest::Manifest;
use crate::workload::outputs::{ensure_writable, SOLUTIONS};
use crate::workload::solutions::{Solution, SolutionFile};

/// A folder name from a GEMM label: letters, digits and `x`, the rest as `_`.
fn folder(s: &Solution) -> String {
    let label: String = s
        .label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("{:03}_{label}", s.id)
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The advice for one solution, from the database's measurements of its problem.
fn advice(store: &Store, s: &Solution, llm: Option<&SharedLlm>) -> Result<String> {
    let winner = KernelConfig::parse(&s.config)?;
    let rows = store.measurements_for_problem(&s.problem_key, &s.device_name)?;
    let mut measured = Vec::new();
    let mut failed = 0;
    for m in rows.iter().filter(|m| !m.key.is_vendor()) {
        let Ok(c) = KernelConfig::parse(&m.key.config_name) else {
            continue;
        };
        let ok = m
            .outcome
            .verification()
            .is_some_and(|v| v.passed && m.outcome.status() == "ok");
        match m.stats.map(|st| st.median_us).filter(|_| ok) {
            // The latest measurement of a config wins (re-timings come last).
            Some(us) => match measured
                .iter_mut()
                .find(|(x, _): &&mut (KernelConfig, f64)| *x == c)
            {
                Some(e) => e.1 = us,
                None => measured.push((c, us)),
            },
            None => failed += 1,
        }
    }
    let hw = HwSpec::for_device_name(&s.device_name);
    let default_config = hw
        .as_ref()
        .and_then(|h| Space::for_problem(&s.problem, h).default_config().ok());
    let facts = analyse(&AdviceInput {
        problem: &s.problem,
        hw: hw.as_ref(),
        device_name: &s.device_name,
        winner,
        winner_us: s.kernel_us,
        vendor_us: Some(s.vendor_us),
        measured: &measured,
        failed,
        default_config,
    });
    let text = render_markdown(&facts);
    let Some(llm) = llm else {
        return Ok(text);
    };
    let (system, user) = llm_prompt(&facts);
    let reply = llm.complete(&LlmRequest {
        system,
        user,
        temperature: 0.3,
        json: false,
        ..LlmRequest::default()
    });
    Ok(match reply {
        Ok(words) => format!(
            "{}\n\n_Written by {} from the measured facts below._\n\n---\n\n{}",
            words.text.trim(),
            llm.model(),
            text.replacen("# Why", "## Measured facts: why", 1)
        ),
        Err(e) => format!(
            "{text}\n_The LLM could not be reached ({e}); these are the measured facts only._\n"
        ),
    })
}

pub fn run(g: &GlobalOpts, a: &ExportArgs) -> Result<()> {
    let manifest = Manifest::load(&a.dir).map_err(cli_error)?;
    let solutions = SolutionFile::load(&a.dir.join(SOLUTIONS)).map_err(cli_error)?;
    let out = a.out.clone().unwrap_or_else(|| a.dir.join("export"));
    ensure_writable(&out).map_err(cli_error)?;
    let (tensile, with_advice) = match (a.tensile, a.advice) {
        (false, false) => (true, true),
        other => other,
    };
    let store = if with_advice {
        let path = manifest.db_path(&a.dir);
        if !path.exists() {
            return Err(anyhow::anyhow!(
                "the results database {} of {} does not exist; advice needs the measurements",
                path.display(),
                a.dir.display()
            ));
        }
        Some(Store::open(&path)?)
    } else {
        None
    };
    let llm = if with_advice {
        llm_port(&a.llm, &out.join("llm"))?
    } else {
        None
    };
    if solutions.solutions.is_empty() {
        return Err(anyhow::anyhow!(
            "nothing to export: the report in {} kept no kernel",
            a.dir.display()
        ));
    }
    let mut index = String::from(
        "# Exported winners\n\n| # | GEMM | kernel | speedup | files |\n|---:|---|---|---:|---|\n",
    );
    let mut lines = String::new();
    // Kernels without a Tensile config, with the reason (said, never silently skipped).
    let mut no_tensile: Vec<String> = Vec::new();
    let (mut tensile_written, mut advice_written) = (0usize, 0usize);
    for s in &solutions.solutions {
        let dir = out.join(folder(s));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let mut files = Vec::new();
        if tensile {
            let config = KernelConfig::parse(&s.config)?;
            match benchmark_config(
                &s.problem,
                &config,
                &Provenance {
                    device_name: s.device_name.clone(),
                    arch: s.arch.clone(),
                    kernel_us: Some(s.kernel_us),
                    vendor_us: Some(s.vendor_us),
                },
            ) {
                Ok(yaml) => {
                    write(&dir.join("tensile_config.yaml"), &yaml)?;
                    files.push("tensile_config.yaml".to_string());
                    tensile_written += 1;
                }
                Err(e) => no_tensile.push(format!("#{} {}: {e}", s.id, s.label)),
            }
        }
        if let Some(store) = &store {
            write(&dir.join("advice.md"), &advice(store, s, llm.as_ref())?)?;
            files.push("advice.md".to_string());
            advice_written += 1;
        }
        index.push_str(&format!(
            "| {} | {} | `{}` | {:.3}x | {} |\n",
            s.id,
            s.label,
            s.config,
            s.speedup,
            files
                .iter()
                .map(|f| format!("[{f}]({}/{f})", folder(s)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        if !files.is_empty() {
            lines.push_str(&format!("{}: {}\n", dir.display(), files.join(", ")));
        }
    }
    for why in &no_tensile {
        eprintln!("gemmtune: no Tensile config for {why}");
    }
    if tensile_written + advice_written == 0 {
        return Err(anyhow::anyhow!(
            "nothing was exported: none of the {} kept kernel(s) has a Tensile config (reasons above)",
            solutions.solutions.len()
        ));
    }
    write(&out.join("index.md"), &index)?;
    if g.json {
        return print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({
                "out": out,
                "exported": solutions.solutions.len(),
                "tensile_configs": tensile_written,
                "advice_files": advice_written,
                "without_tensile_config": no_tensile,
                "tensile": tensile,
                "advice": with_advice,
                "llm": llm.as_ref().map(|l| l.model()),
            }))?
        ));
    }
    let mut counts = Vec::new();
    if tensile {
        counts.push(format!(
            "{tensile_written} of {} Tensile configs",
            solutions.solutions.len()
        ));
    }
    if with_advice {
        counts.push(format!("{advice_written} advice files"));
    }
    print(&format!(
        "{lines}exported {} to {}\n",
        counts.join(" and "),
        out.display()
    ))
}
