//! What one device thread owns: the device (a worker process unless `--no-worker`), the
//! compiler for its architecture and its own connection to the results database (SQLite in
//! WAL mode takes several writers), with a run started for it.
//!
//! [`CountingStore`] sits between a bench session and the database to count, per GEMM, how
//! many results were measured now and how many were reused from earlier runs.

use std::path::PathBuf;

use super::pool::DeviceIndex;
use crate::bench::results::{DbResults, ResultKey, ResultStore};
use crate::bench::session::BenchRow;
use crate::compile::{compiler_for, Compiler};
use crate::device::{open_in_process, worker::WorkerDevice, Device, DeviceSelection, Outcome};
use crate::problem::GemmProblem;
use crate::store::{NewRun, RunStatus, Store};

/// How to open the context of each device index.
#[derive(Debug, Clone)]
pub struct OpenSpec {
    /// Backend and its options; the index is replaced by each device's own.
    pub selection: DeviceSelection,
    /// Run kernels in the device thread's process instead of a worker process.
    pub in_process: bool,
    pub db_path: PathBuf,
    pub command_line: String,
    pub strategy: String,
}

/// One device thread's context.
pub struct DeviceCtx {
    pub index: u32,
    pub device: Box<dyn Device>,
    pub compiler: Box<dyn Compiler>,
    pub db: DbResults,
}

impl DeviceIndex for DeviceCtx {
    fn device_index(&self) -> u32 {
        self.index
    }
}

impl Drop for DeviceCtx {
    fn drop(&mut self) {
        // The measurements are stored as they happen; the run status is bookkeeping only.
        if let Some(id) = self.db.run_id {
            let _ = self.db.store.finish_run(id, RunStatus::Finished);
        }
    }
}

impl OpenSpec {
    /// Opens device `index`, its compiler and a database connection.
    pub fn open(&self, index: u32) -> Result<DeviceCtx, String> {
        let mut sel = self.selection.clone();
        sel.index = index;
        let device: Box<dyn Device> = if self.in_process {
            open_in_process(&sel).map_err(|e| e.to_string())?
        } else {
            Box::new(WorkerDevice::start(sel.clone()).map_err(|e| e.to_string())?)
        };
        let info = device.info().clone();
        let compiler = compiler_for(&info, &sel.sim_plants).map_err(|e| e.to_string())?;
        let mut store = Store::open(&self.db_path).map_err(|e| e.to_string())?;
        let run_id = store
            .begin_run(&NewRun {
                command_line: self.command_line.clone(),
                strategy: Some(self.strategy.clone()),
                device: Some(format!("{} {} #{index}", info.name, info.arch)),
            })
            .map_err(|e| e.to_string())?;
        Ok(DeviceCtx {
            index,
            device,
            compiler,
            db: DbResults::new(store, Some(run_id)),
        })
    }
}

/// A results store that counts what passes through it.
pub struct CountingStore<'a> {
    inner: &'a mut DbResults,
    /// Lookups answered from the database (results reused instead of measured).
    pub reused: usize,
    /// Results written (measured now).
    pub measured: usize,
}

impl<'a> CountingStore<'a> {
    pub fn new(inner: &'a mut DbResults) -> Self {
        CountingStore {
            inner,
            reused: 0,
            measured: 0,
        }
    }
}

impl ResultStore for CountingStore<'_> {
    fn lookup(&mut self, key: &ResultKey) -> Option<Outcome> {
        let found = self.inner.lookup(key);
        if found.is_some() {
            self.reused += 1;
        }
        found
    }

    fn record(&mut self, key: &ResultKey, p: &GemmProblem, row: &BenchRow) -> Result<(), String> {
        self.measured += 1;
        self.inner.record(key, p, row)
    }
}
