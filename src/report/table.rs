//! Plain-text tables for the terminal.

use super::BenchReport;
use crate::bench::session::BenchRow;
use crate::problem::log::LogEntry;

fn fmt_opt(v: Option<f64>, prec: usize) -> String {
    v.map(|x| format!("{x:.prec$}"))
        .unwrap_or_else(|| "-".into())
}

/// Left-aligns the first column and right-aligns the others.
fn layout(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = widths[i].saturating_sub(c.chars().count());
            if i == 0 || i + 1 == cells.len() {
                s.push_str(c);
                if i + 1 != cells.len() {
                    s.push_str(&" ".repeat(pad));
                }
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

fn bench_cells(r: &BenchRow, winner: bool) -> Vec<String> {
    let verify = match r.outcome.verification() {
        Some(v) if v.passed => format!("pass ({:.1e})", v.rel_l2_err),
        Some(v) => format!("FAIL ({:.1e})", v.rel_l2_err),
        None => "-".into(),
    };
    let status = if r.is_ok() {
        if r.reused {
            "ok (db)".to_string()
        } else {
            "ok".to_string()
        }
    } else {
        format!("{}: {}", r.outcome.status(), r.outcome.reason())
    };
    let name = if winner {
        format!("* {}", r.name)
    } else {
        format!("  {}", r.name)
    };
    vec![
        name,
        fmt_opt(r.median_us(), 1),
        fmt_opt(r.rates.map(|x| x.tflops), 1),
        fmt_opt(r.rates.map(|x| x.gbps), 0),
        fmt_opt(r.rates.map(|x| x.roofline_pct), 1),
        r.speedup_vs_vendor
            .map(|s| format!("{s:.3}x"))
            .unwrap_or_else(|| "-".into()),
        verify,
        status,
    ]
}

/// The `bench` table: one row per config, fastest first, the vendor library last.
pub fn render_table(rep: &BenchReport) -> String {
    let mut rows: Vec<&BenchRow> = rep.rows.iter().collect();
    rows.sort_by(|a, b| {
        (!a.is_ok(), a.median_us().unwrap_or(f64::MAX))
            .partial_cmp(&(!b.is_ok(), b.median_us().unwrap_or(f64::MAX)))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let vendor_wins = rep
        .winner_row()
        .and_then(|w| w.speedup_vs_vendor)
        .is_some_and(|s| s < 1.0);
    let mut cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            bench_cells(
                r,
                !vendor_wins && rep.winner.as_deref() == Some(r.name.as_str()),
            )
        })
        .collect();
    if let Some(v) = &rep.vendor {
        let mut c = bench_cells(v, vendor_wins);
        c[5] = "1.000x".into();
        cells.push(c);
    }
    let mut out = format!(
        "{} on {} ({}, {}; roofline {:.1} us)\n",
        rep.problem_label, rep.device.name, rep.device.arch, rep.hw_spec, rep.roofline_us
    );
    out.push_str(&layout(
        &[
            "  kernel",
            "us",
            "TFLOP/s",
            "GB/s",
            "%roof",
            "vs vendor",
            "verify",
            "status",
        ],
        &cells,
    ));
    out.push_str(&verdict(rep));
    out
}

/// The last line of the `bench` table: the fastest verified kernel is the winner only when
/// it beats the vendor library measured beside it (or when there is none to beat).
fn verdict(rep: &BenchReport) -> String {
    let Some(w) = rep.winner_row() else {
        return "winner: none (no kernel passed verification)\n".into();
    };
    let us = w.median_us().unwrap_or(0.0);
    match w.speedup_vs_vendor {
        Some(s) if s < 1.0 => format!(
            "winner: the vendor library ({:.1} us); the fastest kernel, {} {us:.1} us, is {s:.3}x its speed\n",
            rep.vendor.as_ref().and_then(BenchRow::median_us).unwrap_or(0.0),
            w.name
        ),
        Some(s) => format!("winner: {} {us:.1} us, {s:.3}x the vendor library\n", w.name),
        None => format!("winner: {} {us:.1} us\n", w.name),
    }
}

/// The `log` table: one row per merged GEMM, in order of FLOP share.
pub fn render_log_table(entries: &[LogEntry]) -> String {
    let total: f64 = entries
        .iter()
        .map(|e| e.problem.flops() * e.call_count as f64)
        .sum();
    let mut sorted: Vec<&LogEntry> = entries.iter().collect();
    sorted.sort_by(|a, b| {
        (b.problem.flops() * b.call_count as f64)
            .total_cmp(&(a.problem.flops() * a.call_count as f64))
    });
    let cells: Vec<Vec<String>> = sorted
        .iter()
        .map(|e| {
            let f = e.problem.flops() * e.call_count as f64;
            vec![
                e.problem.label(),
                e.call_count.to_string(),
                format!("{:.3}", e.problem.flops() / 1e9),
                format!("{:.1}", e.problem.min_bytes() / 1e6),
                format!("{:.1}", e.problem.arithmetic_intensity()),
                format!("{:.1}", if total > 0.0 { f / total * 100.0 } else { 0.0 }),
            ]
        })
        .collect();
    layout(
        &[
            "problem",
            "calls",
            "GFLOP/call",
            "MB/call",
            "FLOP/B",
            "% FLOPs",
        ],
        &cells,
    )
}
