//! `--csv PATH` for the commands whose results are a table (`tune`, `log`, `sweep`,
//! `eval-strategies`; `bench` and `tune-log` have their own writers): rows go through the
//! `csv` crate into a file beside PATH that is renamed into place, so a failed or killed
//! command never leaves half a CSV. Commands without a table refuse `--csv` (see
//! [`super::run`]) rather than ignore it.

use anyhow::{Context, Result};
use std::path::Path;

/// Writes `header` and `rows` to `path` as CSV.
pub fn write_table(path: &Path, header: &[&str], rows: &[Vec<String>]) -> Result<()> {
    let tmp = path.with_file_name(format!(
        ".{}.tmp{}",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let written = (|| -> Result<()> {
        let mut w = csv::Writer::from_path(&tmp)?;
        w.write_record(header)?;
        for r in rows {
            w.write_record(r)?;
        }
        w.flush()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.with_context(|| format!("cannot write CSV {}", path.display()))
}

/// A number as CSV text, empty when absent.
pub fn num(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}
