//! The per-GEMM uplift chart (`uplift.svg`): one horizontal bar per tuned GEMM, its length
//! the uplift over the vendor library in percent (left of zero when the kernel was slower),
//! green when the kernel is kept, grey when dropped. Plain SVG, no plotting library.

use super::record::{GemmRecord, Verdict};

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The chart of the tuned GEMMs among `records`; `None` when none has an uplift to draw.
pub fn uplift_svg(title: &str, records: &[GemmRecord], min_uplift: f64) -> Option<String> {
    let bars: Vec<(String, f64, bool)> = records
        .iter()
        .filter_map(|r| {
            let v = r.verdict(min_uplift);
            let up = r.speedup()? - 1.0;
            v.was_tuned().then(|| {
                (
                    format!("#{} {}", r.id, r.problem.label()),
                    up * 100.0,
                    v == Verdict::Kept,
                )
            })
        })
        .collect();
    if bars.is_empty() {
        return None;
    }
    let (w, label_w, bar_h, top, bottom, right) = (820.0, 300.0, 22.0, 46.0, 40.0, 70.0);
    let h = top + bottom + bar_h * bars.len() as f64;
    let lo = bars.iter().map(|b| b.1).fold(0.0f64, f64::min);
    let hi = bars.iter().map(|b| b.1).fold(0.0f64, f64::max);
    let span = (hi - lo).max(1.0);
    let plot_w = w - label_w - right;
    let x = |v: f64| label_w + (v - lo) / span * plot_w;
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">
<rect width="{w}" height="{h}" fill="white"/>
<text x="{}" y="24" text-anchor="middle" font-size="14">{}</text>
"#,
        w / 2.0,
        esc(title)
    );
    for (i, (label, up, kept)) in bars.iter().enumerate() {
        let y = top + i as f64 * bar_h;
        let (x0, x1) = (x(0.0).min(x(*up)), x(0.0).max(x(*up)));
        let color = if *kept { "#2ca02c" } else { "#9e9e9e" };
        out.push_str(&format!(
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>
<rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{color}"/>
<text x="{:.1}" y="{:.1}">{up:+.1}%</text>
"#,
            label_w - 8.0,
            y + bar_h * 0.7,
            esc(label),
            y + 3.0,
            (x1 - x0).max(1.0),
            bar_h - 6.0,
            x1 + 4.0,
            y + bar_h * 0.7,
        ));
    }
    let zero = x(0.0);
    out.push_str(&format!(
        r#"<line x1="{zero:.1}" y1="{}" x2="{zero:.1}" y2="{}" stroke="black"/>
<text x="{}" y="{}" text-anchor="middle">uplift over the vendor library (%); green = kept, grey = dropped</text>
</svg>
"#,
        top - 4.0,
        h - bottom + 4.0,
        label_w + plot_w / 2.0,
        h - 12.0
    ));
    Some(out)
}
