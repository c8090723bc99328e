//! The per-GEMM uplift chart (`uplift.svg`): one horizontal bar per tuned GEMM, its length
//! the uplift over the vendor library in percent (left of zero when the kernel was slower),
//! green when the kernel is kept, grey when dropped. Records and the keep margin come in; an
//! SVG document drawn with plotters (on the report module's canvas) goes out.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::record::{GemmRecord, Verdict};
use crate::report::plot::{render_svg, FONT};

const KEPT: RGBColor = RGBColor(0x2c, 0xa0, 0x2c);
const DROPPED: RGBColor = RGBColor(0x9e, 0x9e, 0x9e);

/// Pixels per bar, and the room the GEMM labels take left of the bars.
const BAR_H: u32 = 22;
const LABEL_W: u32 = 300;

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
    let n = bars.len();
    // Title and axis above and below, one bar's height per GEMM between them.
    let (w, h) = (820, 110 + BAR_H * n as u32);
    let lo = bars.iter().map(|b| b.1).fold(0.0f64, f64::min);
    let hi = bars.iter().map(|b| b.1).fold(0.0f64, f64::max);
    let span = (hi - lo).max(1.0);
    let top = n as f64;
    Some(render_svg((w, h), title, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 16))
            .margin(10)
            // Room right of the longest bar for its percentage.
            .margin_right(70)
            .x_label_area_size(44)
            .y_label_area_size(LABEL_W)
            .build_cartesian_2d(lo..lo + span, 0.0..top)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(6)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .x_desc("uplift over the vendor library (%); green = kept, grey = dropped")
            .label_style((FONT, 12))
            .light_line_style(TRANSPARENT)
            .draw()?;
        // The first record on top, as the records are listed; y grows upwards.
        let slot = |i: usize| top - 1.0 - i as f64;
        chart.draw_series(bars.iter().enumerate().map(|(i, (_, up, kept))| {
            let color = if *kept { KEPT } else { DROPPED };
            let y = slot(i);
            Rectangle::new([(0.0, y + 0.14), (*up, y + 0.86)], color.filled())
        }))?;
        let right = TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        chart.draw_series(bars.iter().enumerate().map(|(i, (_, up, _))| {
            EmptyElement::at((up.max(0.0), slot(i) + 0.5))
                + Text::new(format!("{up:+.1}%"), (4, 0), right.clone())
        }))?;
        chart.draw_series(LineSeries::new([(0.0, 0.0), (0.0, top)], BLACK))?;
        // The GEMM labels sit in the y label area, level with their bars: plotters' own y
        // labels fall on round numbers, not on bar centres.
        let left = TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        for (i, (label, _, _)) in bars.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(lo, slot(i) + 0.5));
            root.draw(&Text::new(label.as_str(), (x - 8, y), left.clone()))?;
        }
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::plot::tests::assert_svg;
    use crate::workload::summary::tests::rec;

    /// One tuned GEMM of one call.
    fn record(id: usize, vendor_us: f64, best_us: f64) -> GemmRecord {
        rec(id, 1, vendor_us, Some(best_us))
    }

    #[test]
    fn one_bar_per_tuned_gemm_green_when_kept_grey_when_dropped() {
        let records = [record(1, 100.0, 80.0), record(2, 100.0, 110.0)];
        let svg = uplift_svg("w<1>: per-GEMM uplift", &records, 0.01).unwrap();
        let label = |r: &GemmRecord| format!("#{} {}", r.id, r.problem.label());
        assert_svg(
            &svg,
            &[
                "w&lt;1&gt;: per-GEMM uplift",
                &label(&records[0]),
                &label(&records[1]),
                "+25.0%",
                "-9.1%",
                "green = kept, grey = dropped",
            ],
        );
        assert!(svg.contains("fill=\"#2CA02C\""), "{svg}");
        assert!(svg.contains("fill=\"#9E9E9E\""), "{svg}");
    }

    #[test]
    fn no_chart_without_a_tuned_gemm() {
        let mut r = record(1, 100.0, 80.0);
        r.skip = Some("not worth it".into());
        assert!(uplift_svg("t", &[r], 0.01).is_none());
    }
}
