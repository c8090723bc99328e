//! `gemmtune specs`: the hardware spec files and the devices this machine has.

use anyhow::Result;
use serde::Serialize;

use super::args::GlobalOpts;
use super::output::{print, selection};
use crate::device::{open_in_process, BackendKind, DeviceInfo, DeviceSelection};
use crate::hw::HwSpec;

/// One line of the device list: a device found, or why a backend has none.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum DeviceLine {
    Found { info: DeviceInfo, hw_spec: String },
    Missing { backend: String, reason: String },
}

fn probe(base: &DeviceSelection) -> Vec<DeviceLine> {
    let mut lines = Vec::new();
    for backend in [BackendKind::Cuda, BackendKind::Hip] {
        for index in 0.. {
            let sel = DeviceSelection {
                backend: Some(backend),
                index,
                ..base.clone()
            };
            match open_in_process(&sel) {
                Ok(d) => lines.push(DeviceLine::Found {
                    info: d.info().clone(),
                    hw_spec: d.hw_spec().name.clone(),
                }),
                Err(e) => {
                    if index == 0 {
                        lines.push(DeviceLine::Missing {
                            backend: backend.name().into(),
                            reason: e.to_string(),
                        });
                    }
                    break;
                }
            }
        }
    }
    lines
}

pub fn run(g: &GlobalOpts) -> Result<()> {
    let mut specs: Vec<(String, HwSpec)> = HwSpec::builtin()
        .into_iter()
        .map(|(f, s)| (format!("built-in:{f}"), s))
        .collect();
    if let Some(p) = &g.hw_spec {
        specs.push((p.display().to_string(), super::output::hw_spec(p)?));
    }
    let devices = probe(&selection(g)?);
    if g.json {
        let json = serde_json::json!({
            "specs": specs.iter().map(|(origin, s)| serde_json::json!({"origin": origin, "spec": s})).collect::<Vec<_>>(),
            "devices": devices,
        });
        return print(&format!("{}\n", serde_json::to_string_pretty(&json)?));
    }
    let mut out = String::from("hardware specs:\n");
    for (origin, s) in &specs {
        out.push_str(&format!(
            "  {:<9} {:<7} {:>4} CUs  wave{}  LDS {:>3} KiB/WG  {:>6.0} GB/s  bf16 {:>7.1} TFLOP/s  ({origin})\n",
            s.name,
            s.arch,
            s.compute_units,
            s.wave_size,
            s.lds_bytes_per_workgroup / 1024,
            s.memory_bandwidth_gbps,
            s.peak_tflops_for(crate::problem::DataType::Bf16),
        ));
    }
    out.push_str("devices:\n");
    for line in &devices {
        match line {
            DeviceLine::Found { info, hw_spec } => out.push_str(&format!(
                "  {}:{}  {}  {}  {} CUs  {:.0} GiB  driver {}  compiler {}  (spec {hw_spec})\n",
                info.backend,
                info.index,
                info.name,
                info.arch,
                info.compute_units,
                info.memory_bytes as f64 / (1u64 << 30) as f64,
                info.driver_version,
                info.compiler_version,
            )),
            DeviceLine::Missing { backend, reason } => {
                out.push_str(&format!("  {backend}: none ({reason})\n"))
            }
        }
    }
    out.push_str(
        "  sim: always available (--backend sim; models the spec given by --hw-spec, default H200)\n",
    );
    print(&out)
}
