//! Output helpers shared by the commands: stdout that treats a closed pipe as success
//! (`gemmtune log x | head` is not an error), and device/store opening from global options.

use anyhow::{Context, Result};
use std::io::Write;

use super::args::GlobalOpts;
use super::UsageError;
use crate::bench::results::DbResults;
use crate::device::{open_in_process, worker::WorkerDevice, Device, DeviceSelection};
use crate::hw::HwSpec;
use crate::store::{NewRun, RunStatus, Store};

/// Writes to stdout; a broken pipe ends the program quietly with success.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(e).context("writing to stdout"),
    }
}

/// Progress and notes go to stderr so that stdout stays machine-readable.
pub fn note(g: &GlobalOpts, text: &str) {
    if !g.quiet {
        eprintln!("{text}");
    }
}

/// The device selection the global options describe.
pub fn selection(g: &GlobalOpts) -> Result<DeviceSelection> {
    let hw_spec = match &g.hw_spec {
        Some(p) => Some(HwSpec::load(p)?),
        None => None,
    };
    let sim_plants = g
        .sim_plant
        .iter()
        .map(|s| s.parse().map_err(UsageError))
        .collect::<Result<Vec<_>, _>>()?;
    // Real backends plant failures in the generated source; the sim backend models them.
    crate::plant::set_plants(&sim_plants);
    Ok(DeviceSelection {
        backend: Some(g.backend),
        index: g.device,
        hw_spec,
        sim_plants,
        dataset: g.dataset.clone(),
    })
}

/// Opens the selected device, in a worker process unless `--no-worker`.
pub fn open_device(g: &GlobalOpts, sel: &DeviceSelection) -> Result<Box<dyn Device>> {
    if g.no_worker {
        Ok(open_in_process(sel)?)
    } else {
        Ok(Box::new(WorkerDevice::start(sel.clone())?))
    }
}

/// The results database the global options name (default path in the user cache dir), with
/// a run started for this command line.
pub fn open_store(g: &GlobalOpts, strategy: &str, device: &str) -> Result<DbResults> {
    let path = match &g.db {
        Some(p) => p.clone(),
        None => Store::default_path()?,
    };
    let mut store = Store::open(&path)?;
    let command_line = std::env::args().collect::<Vec<_>>().join(" ");
    let run_id = store.begin_run(&NewRun {
        command_line,
        strategy: Some(strategy.to_string()),
        device: Some(device.to_string()),
    })?;
    Ok(DbResults {
        store,
        run_id: Some(run_id),
    })
}

/// Marks the store's run finished or failed, as the command ended.
pub fn finish_store<T>(db: &mut DbResults, result: &Result<T>) {
    if let Some(id) = db.run_id {
        let status = if result.is_ok() {
            RunStatus::Finished
        } else {
            RunStatus::Failed
        };
        // The measurements are already stored; a run status that cannot be written is harmless.
        let _ = db.store.finish_run(id, status);
    }
}
