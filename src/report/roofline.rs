//! The roofline chart `gemmtune bench --roofline PATH` writes: achieved TFLOP/s against
//! arithmetic intensity (FLOP per compulsory byte), both on log scales, one dot per verified
//! kernel, the vendor library as a triangle, under the roof min(peak TFLOP/s, bandwidth x
//! intensity) of the hardware spec. A [`BenchReport`] and its [`HwSpec`] come in; an SVG
//! document drawn with plotters goes out.
//!
//! Intensity is the problem's FLOPs over [`GemmProblem::min_bytes`], so every kernel of one
//! bench run sits at the same x: the chart shows how far below the roof each one stays.
//!
//! [`GemmProblem::min_bytes`]: crate::problem::GemmProblem::min_bytes

use plotters::prelude::*;

use super::plot::{draw_legend, legend_line, render_svg, COLORS, FONT};
use super::BenchReport;
use crate::hw::HwSpec;

/// The machine's ceilings, as the hardware spec gives them.
pub struct Roof {
    /// The spec's name, shown in the roof's legend entry.
    pub name: String,
    pub peak_tflops: f64,
    pub bandwidth_gbps: f64,
}

impl Roof {
    /// Attainable TFLOP/s at `intensity` FLOP/byte (GB/s x FLOP/byte = GFLOP/s).
    pub fn at(&self, intensity: f64) -> f64 {
        self.peak_tflops.min(self.bandwidth_gbps * intensity / 1e3)
    }

    /// The intensity where the bandwidth slope meets the compute peak.
    pub fn ridge(&self) -> f64 {
        self.peak_tflops * 1e3 / self.bandwidth_gbps.max(1e-9)
    }
}

const VENDOR: RGBColor = RGBColor(0xd6, 0x27, 0x28);

/// Draws the roofline chart: `kernels` and `vendor` are (intensity FLOP/byte, TFLOP/s)
/// points, the vendor's with its label. Points that a log scale cannot place (zero,
/// negative, not finite) are left out.
pub fn roofline_svg(
    title: &str,
    roof: &Roof,
    kernels: &[(f64, f64)],
    vendor: Option<(&str, (f64, f64))>,
) -> String {
    let drawable = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite() && x > 0.0 && y > 0.0;
    let kernels: Vec<(f64, f64)> = kernels.iter().copied().filter(drawable).collect();
    let vendor = vendor.filter(|(_, p)| drawable(p));
    let points: Vec<(f64, f64)> = kernels
        .iter()
        .copied()
        .chain(vendor.map(|(_, p)| p))
        .collect();
    let ridge = roof.ridge();
    // Room around the ridge and the points, so the bend and every dot show. The axes start
    // on a power of ten because plotters labels a log axis from its first decade on.
    let xmin = decade_below(points.iter().map(|p| p.0).fold(ridge, f64::min));
    let xmax = points.iter().map(|p| p.0).fold(ridge, f64::max) * 3.0;
    let ymin = decade_below(points.iter().map(|p| p.1).fold(roof.at(xmin), f64::min));
    let ymax = points.iter().map(|p| p.1).fold(roof.peak_tflops, f64::max) * 2.0;
    // One label per decade: more would put plotters' in-between ticks on the axis too.
    let labels = |lo: f64, hi: f64| (hi / lo).log10().floor().clamp(0.0, 12.0) as usize + 1;
    render_svg((820, 520), title, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 16))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d((xmin..xmax).log_scale(), (ymin..ymax).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("arithmetic intensity (FLOP per compulsory byte)")
            .y_desc("achieved TFLOP/s")
            .x_labels(labels(xmin, xmax))
            .y_labels(labels(ymin, ymax))
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .label_style((FONT, 12))
            .light_line_style(TRANSPARENT)
            .draw()?;
        let style = BLACK.stroke_width(2);
        chart
            .draw_series(LineSeries::new(
                [
                    (xmin, roof.at(xmin)),
                    (ridge, roof.peak_tflops),
                    (xmax, roof.peak_tflops),
                ],
                style,
            ))?
            .label(format!(
                "roofline ({}: {} TFLOP/s, {} GB/s)",
                roof.name,
                tick(roof.peak_tflops),
                tick(roof.bandwidth_gbps)
            ))
            .legend(legend_line(style));
        let dot = COLORS[0].mix(0.6).filled();
        chart
            .draw_series(kernels.iter().map(|&p| Circle::new(p, 4, dot)))?
            .label(format!("kernels ({})", kernels.len()))
            .legend(move |p| Circle::new(p, 4, dot));
        if let Some((label, p)) = vendor {
            let mark = VENDOR.filled();
            chart
                .draw_series(std::iter::once(TriangleMarker::new(p, 8, mark)))?
                .label(label)
                .legend(move |p| TriangleMarker::new(p, 8, mark));
        }
        // Under the flat roof right of the ridge is empty: points sit at or below it.
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)
    })
}

/// The roofline chart of one bench run: its verified kernels and the vendor library (when it
/// verified too), under the roof `hw` gives for the problem's input type.
pub fn bench_roofline_svg(report: &BenchReport, hw: &HwSpec) -> String {
    let p = &report.problem;
    let intensity = p.flops() / p.min_bytes().max(1.0);
    // A wrong result's speed is no achievement: only verified rows are drawn.
    let achieved = |r: &crate::bench::session::BenchRow| {
        r.is_ok()
            .then_some(r.rates)
            .flatten()
            .map(|x| (intensity, x.tflops))
    };
    let kernels: Vec<(f64, f64)> = report.rows.iter().filter_map(achieved).collect();
    let vendor = report
        .vendor
        .as_ref()
        .and_then(|v| achieved(v).map(|pt| (v.name.as_str(), pt)));
    roofline_svg(
        &format!(
            "{} on {}: roofline",
            report.problem_label, report.device.name
        ),
        &Roof {
            name: hw.name.clone(),
            peak_tflops: hw.peak_tflops_of(p),
            bandwidth_gbps: hw.memory_bandwidth_gbps,
        },
        &kernels,
        vendor,
    )
}

/// The power of ten at least a factor two under `v`, so no point sits on the frame. A spec
/// without a bandwidth or a peak puts zero here, which a log axis cannot start from.
fn decade_below(v: f64) -> f64 {
    let v = if v.is_finite() && v > 0.0 { v } else { 1e-3 };
    10f64.powf((v / 2.0).log10().floor())
}

/// An axis or legend number: no more digits than a log scale's reader needs.
fn tick(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        let s = format!("{v:.1}");
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::plot::tests::assert_svg;

    fn roof() -> Roof {
        Roof {
            name: "h100".into(),
            peak_tflops: 989.0,
            bandwidth_gbps: 3350.0,
        }
    }

    #[test]
    fn roof_bends_at_the_ridge() {
        let r = roof();
        assert!((r.ridge() - 989e3 / 3350.0).abs() < 1e-9);
        assert!((r.at(10.0) - 33.5).abs() < 1e-9);
        assert_eq!(r.at(1e4), 989.0);
    }

    #[test]
    fn chart_has_the_roof_the_kernels_and_the_vendor() {
        let svg = roofline_svg(
            "4096x128x4096 <bf16> on sim: roofline",
            &roof(),
            &[(120.0, 300.0), (120.0, 250.0), (120.0, 0.0)],
            Some(("vendor:cublaslt", (120.0, 320.0))),
        );
        assert_svg(
            &svg,
            &[
                "&lt;bf16&gt; on sim: roofline",
                "roofline (h100: 989 TFLOP/s, 3350 GB/s)",
                // The zero-speed point cannot sit on a log scale and is not counted.
                "kernels (2)",
                "vendor:cublaslt",
                "achieved TFLOP/s",
                "arithmetic intensity",
            ],
        );
        // Two kernel dots and one in the legend; the vendor's triangle and its legend's.
        assert_eq!(svg.matches("<circle").count(), 3, "{svg}");
        assert_eq!(svg.matches("<polygon").count(), 2, "{svg}");
    }

    #[test]
    fn chart_without_points_still_draws_the_roof() {
        let svg = roofline_svg("empty", &roof(), &[], None);
        assert_svg(&svg, &["empty", "roofline (h100", "kernels (0)"]);
        // Only the legend's sample dot.
        assert_eq!(svg.matches("<circle").count(), 1, "{svg}");
    }

    #[test]
    fn axes_start_on_a_decade_clear_of_the_points() {
        assert_eq!(decade_below(120.0), 10.0);
        assert_eq!(decade_below(300.0), 100.0);
    }

    #[test]
    fn a_spec_without_bandwidth_or_peak_still_gives_a_chart() {
        for (peak_tflops, bandwidth_gbps) in [(989.0, 0.0), (0.0, 3350.0)] {
            let r = Roof {
                name: "partial".into(),
                peak_tflops,
                bandwidth_gbps,
            };
            let svg = roofline_svg("partial", &r, &[(120.0, 300.0)], None);
            assert!(
                svg.starts_with("<svg") && svg.contains("kernels (1)"),
                "{svg}"
            );
        }
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(989.4), "989");
        assert_eq!(tick(30.0), "30");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(0.25), "0.25");
    }
}
