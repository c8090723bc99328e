//! SVG line plots: best-so-far time against evaluations (convergence), one line per series,
//! with an optional dashed horizontal reference line (the vendor library's time). Drawn with
//! plotters' SVG backend into a String; text stays `<text>` elements, so no font file is read.
//!
//! [`render_svg`] is the canvas every chart of the crate draws on (this plot, the roofline,
//! tune-log's uplift bars): it owns the buffer, the white background and what happens when
//! plotters reports an error.

use plotters::coord::Shift;
use plotters::prelude::*;

/// One line of a plot: label and (x, y) points in order of x.
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// What a chart's drawing code returns; the SVG backend's errors are I/O errors.
pub(crate) type DrawResult = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// The canvas the charts draw on.
pub(crate) type Canvas<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Line colours, in series order (matplotlib's palette, so plots look familiar).
pub(crate) const COLORS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// The reference line's colour.
const GRAY: RGBColor = RGBColor(0x80, 0x80, 0x80);

/// The font every chart uses: a generic family, which the SVG viewer resolves.
pub(crate) const FONT: &str = "sans-serif";

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Draws a `width` x `height` chart with `draw` on a white canvas and returns the SVG
/// document. Plotters only fails here on a layout it cannot fit, which the fixed sizes of
/// the charts rule out; should it happen all the same, the document says so in place of the
/// chart, because a missing plot must not fail the run that measured it.
pub(crate) fn render_svg(
    (width, height): (u32, u32),
    title: &str,
    draw: impl FnOnce(&Canvas<'_>) -> DrawResult,
) -> String {
    let mut buf = String::new();
    let drawn = {
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE)
            .and_then(|()| draw(&root))
            .and_then(|()| root.present())
            .map_err(|e| e.to_string())
    };
    match drawn {
        Ok(()) => buf,
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">\n\
             <text x=\"10\" y=\"24\" font-family=\"{FONT}\">{}: the chart could not be drawn ({})</text>\n</svg>\n",
            esc(title),
            esc(&e)
        ),
    }
}

/// A legend sample: a short line in the series' style.
pub(crate) fn legend_line(style: ShapeStyle) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style)
}

/// Draws a chart's legend at `at`, in the charts' one legend style (labels over a pale box).
pub(crate) fn draw_legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    at: SeriesLabelPosition,
) -> DrawResult {
    chart
        .configure_series_labels()
        .position(at)
        .label_font((FONT, 12))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
}

/// Best-so-far is a step function: each value holds until the next improvement, and the last
/// one until `xmax`, where the plot ends.
fn steps(points: &[(f64, f64)], xmax: f64) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(points.len() * 2 + 1);
    for &(x, y) in points {
        if let Some(&(_, held)) = out.last() {
            out.push((x, held));
        }
        out.push((x, y));
    }
    if let Some(&(_, held)) = out.last() {
        out.push((xmax, held));
    }
    out
}

/// Renders a step plot of `series` (x = evaluations, y = best time in microseconds), with
/// `reference` as a labelled dashed line across it.
pub fn line_plot_svg(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    reference: Option<(&str, f64)>,
) -> String {
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
    // Keep the lines off the frame; a flat plot still gets a range to draw in.
    let pad = ((ymax - ymin) * 0.08).max(ymax.abs() * 0.01).max(1e-9);
    let (ymin, ymax) = (ymin - pad, ymax + pad);
    render_svg((720, 420), title, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..xmax, ymin..ymax)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .x_labels(5)
            .y_labels(5)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.1}"))
            .label_style((FONT, 12))
            .light_line_style(TRANSPARENT)
            .draw()?;
        if let Some((label, r)) = reference {
            let style = GRAY.stroke_width(1);
            chart
                .draw_series(DashedLineSeries::new([(0.0, r), (xmax, r)], 5, 4, style))?
                .label(label)
                .legend(legend_line(style));
        }
        for (i, s) in series.iter().enumerate() {
            let style = COLORS[i % COLORS.len()].stroke_width(2);
            chart
                .draw_series(LineSeries::new(steps(&s.points, xmax), style))?
                .label(s.label.as_str())
                .legend(legend_line(style));
        }
        // Best-so-far falls from the left, so the upper right corner is usually empty.
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Checks what every chart must be: one `<svg>` document whose tags all close, holding
    /// `texts` among its text and at least one drawn line.
    pub(crate) fn assert_svg(svg: &str, texts: &[&str]) {
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
        assert_eq!(svg.matches("<svg").count(), 1, "{svg}");
        let opened = svg.matches("<text").count();
        assert_eq!(opened, svg.matches("</text>").count(), "{svg}");
        assert!(
            svg.contains("<polyline") || svg.contains("<path"),
            "no line drawn: {svg}"
        );
        for t in texts {
            assert!(svg.contains(t), "`{t}` missing: {svg}");
        }
    }

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
        assert_svg(
            &svg,
            &[
                "a&lt;b",
                "evaluations",
                "best us",
                "pattern",
                "random",
                "vendor",
            ],
        );
        // Each series is drawn in its own colour, the reference in grey.
        for color in ["#1F77B4", "#D62728", "#808080"] {
            assert!(
                svg.contains(&format!("stroke=\"{color}\"")),
                "{color}: {svg}"
            );
        }
    }

    #[test]
    fn best_so_far_holds_until_the_next_improvement_and_the_end() {
        assert_eq!(
            steps(&[(1.0, 9.0), (4.0, 7.0)], 10.0),
            vec![(1.0, 9.0), (4.0, 9.0), (4.0, 7.0), (10.0, 7.0)]
        );
        assert!(steps(&[], 10.0).is_empty());
    }

    #[test]
    fn an_empty_plot_is_still_a_document() {
        let svg = line_plot_svg("empty", "x", "y", &[], None);
        assert_svg(&svg, &["empty"]);
    }

    #[test]
    fn a_chart_that_cannot_be_drawn_says_so_in_the_document() {
        let svg = render_svg((100, 50), "t<1>", |_| {
            Err(DrawingAreaErrorKind::LayoutError)
        });
        assert!(svg.starts_with("<svg") && svg.contains("t&lt;1&gt;: the chart could not"));
    }
}
