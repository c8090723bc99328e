//! SVG line plots: best-so-far time against evaluations (convergence), one line per series,
//! with an optional horizontal reference line (the vendor library's time). Plain SVG so it
//! opens in any browser and needs no plotting library.

/// One line of a plot: label and (x, y) points in order of x.
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Renders a step plot of `series` (x = evaluations, y = best time in microseconds).
pub fn line_plot_svg(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    reference: Option<(&str, f64)>,
) -> String {
    let (w, h, ml, mr, mt, mb) = (720.0, 420.0, 70.0, 170.0, 40.0, 50.0);
    let pw = w - ml - mr;
    let ph = h - mt - mb;
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .collect();
    let xmax = all.iter().map(|p| p.0).fold(1.0, f64::max);
    let mut ymin = all.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let mut ymax = all.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    if let Some((_, r)) = reference {
        ymin = ymin.min(r);
        ymax = ymax.max(r);
    }
    if !ymin.is_finite() || !ymax.is_finite() {
        (ymin, ymax) = (0.0, 1.0);
    }
    let pad = ((ymax - ymin) * 0.08).max(ymax.abs() * 0.01).max(1e-9);
    let (ymin, ymax) = (ymin - pad, ymax + pad);
    let sx = |x: f64| ml + x / xmax * pw;
    let sy = |y: f64| mt + (ymax - y) / (ymax - ymin) * ph;
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">
<rect width="{w}" height="{h}" fill="white"/>
<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>
<line x1="{ml}" y1="{}" x2="{}" y2="{}" stroke="black"/>
<line x1="{ml}" y1="{mt}" x2="{ml}" y2="{}" stroke="black"/>
<text x="{}" y="{}" text-anchor="middle">{}</text>
<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>
"#,
        ml + pw / 2.0,
        esc(title),
        mt + ph,
        ml + pw,
        mt + ph,
        mt + ph,
        ml + pw / 2.0,
        h - 12.0,
        esc(x_label),
        mt + ph / 2.0,
        mt + ph / 2.0,
        esc(y_label)
    );
    for i in 0..=4 {
        let y = ymin + (ymax - ymin) * i as f64 / 4.0;
        let x = xmax * i as f64 / 4.0;
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.1}</text>\n<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{:.0}</text>\n",
            ml - 6.0,
            sy(y) + 4.0,
            y,
            sx(x),
            mt + ph + 16.0,
            x
        ));
    }
    if let Some((label, r)) = reference {
        out.push_str(&format!(
            "<line x1=\"{ml}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"gray\" stroke-dasharray=\"5,4\"/>\n<text x=\"{2}\" y=\"{3}\" fill=\"gray\">{4}</text>\n",
            sy(r),
            ml + pw,
            ml + pw + 6.0,
            sy(r) + 4.0,
            esc(label)
        ));
    }
    for (i, s) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        // Best-so-far is a step function: hold each value until the next improvement.
        let mut pts = String::new();
        let mut last: Option<(f64, f64)> = None;
        for &(x, y) in &s.points {
            if let Some((_, ly)) = last {
                pts.push_str(&format!("{:.1},{:.1} ", sx(x), sy(ly)));
            }
            pts.push_str(&format!("{:.1},{:.1} ", sx(x), sy(y)));
            last = Some((x, y));
        }
        if let Some((_, ly)) = last {
            pts.push_str(&format!("{:.1},{:.1}", sx(xmax), sy(ly)));
        }
        out.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{pts}\"/>\n<text x=\"{}\" y=\"{}\" fill=\"{color}\">{}</text>\n",
            ml + pw + 6.0,
            mt + 16.0 * (i as f64 + 1.0),
            esc(&s.label)
        ));
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_has_one_line_per_series_and_escapes_labels() {
        let svg = line_plot_svg(
            "a<b",
            "evaluations",
            "best us",
            &[
                Series {
                    label: "pattern".into(),
                    points: vec![(1.0, 200.0), (5.0, 150.0)],
                },
                Series {
                    label: "random".into(),
                    points: vec![(1.0, 210.0)],
                },
            ],
            Some(("vendor", 160.0)),
        );
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a&lt;b"));
        assert!(svg.contains("vendor"));
        assert!(svg.starts_with("<svg"));
    }
}
