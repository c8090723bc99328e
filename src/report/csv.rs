//! CSV output of bench rows (RFC 4180 quoting).

use std::io::Write;
use std::path::Path;

use super::BenchReport;
use crate::bench::session::BenchRow;

pub fn csv_escape(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn row_fields(rep: &BenchReport, r: &BenchRow) -> Vec<String> {
    let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let v = r.outcome.verification();
    vec![
        rep.problem_label.clone(),
        rep.device.name.clone(),
        r.name.clone(),
        r.outcome.status().to_string(),
        num(r.stats.map(|s| s.min_us)),
        num(r.median_us()),
        num(r.stats.map(|s| s.mean_us)),
        num(r.stats.map(|s| s.stddev_us)),
        num(r.rates.map(|x| x.tflops)),
        num(r.rates.map(|x| x.gbps)),
        num(r.rates.map(|x| x.roofline_pct)),
        num(r.speedup_vs_vendor),
        num(v.map(|v| v.max_abs_err)),
        num(v.map(|v| v.rel_l2_err)),
        r.outcome.reason(),
    ]
}

/// Writes every config row and the vendor row.
pub fn write_csv(path: &Path, rep: &BenchReport) -> std::io::Result<()> {
    let mut out = String::from(
        "problem,device,kernel,status,min_us,median_us,mean_us,stddev_us,tflops,gbps,roofline_pct,speedup_vs_vendor,max_abs_err,rel_l2_err,reason\n",
    );
    for r in rep.rows.iter().chain(rep.vendor.iter()) {
        let fields: Vec<String> = row_fields(rep, r).iter().map(|f| csv_escape(f)).collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    let mut f = std::fs::File::create(path)?;
    f.write_all(out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_commas_and_quotes() {
        assert_eq!(csv_escape("a,b"), "\"a,b\"");
        assert_eq!(csv_escape("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_escape("plain"), "plain");
    }
}
