//! The report's SVG charts (plotters' pure-Rust SVG backend). Each answers one
//! question at a glance: labels written out whole and horizontal, axes in
//! human units (10k, 10 MB), a log scale only where values span decades and
//! then with dots or lines, never bars (a bar's length means nothing there),
//! and Needle's ratio to each peer written beside its row.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::util::Result;

/// What an axis counts, for its labels.
#[derive(Clone, Copy)]
pub enum Unit {
    /// Plain counts: 950, 1.2k, 12k, 1.2M.
    Count,
    Bytes,
    Megabytes,
    Millis,
}

impl Unit {
    pub fn show(self, v: f64) -> String {
        match self {
            Unit::Count => scaled(v, 1000.0, &["", "k", "M", "G"]),
            // Decimal steps, as the axes' ticks are: 100 kB, 1 MB, 10 MB.
            Unit::Bytes => scaled(v, 1000.0, &[" B", " kB", " MB", " GB", " TB"]),
            Unit::Megabytes => scaled(v, 1000.0, &[" MB", " GB", " TB"]),
            Unit::Millis => format!("{} ms", trimmed(v)),
        }
    }
}

/// `v` in the largest of `units` (each `step` times the last) that keeps it at least 1.
fn scaled(v: f64, step: f64, units: &[&str]) -> String {
    let mut v = v;
    let mut unit = 0;
    while v.abs() >= step && unit + 1 < units.len() {
        v /= step;
        unit += 1;
    }
    format!("{}{}", trimmed(v), units[unit])
}

/// Two significant decimals at most, no trailing zeros: 1.5, 12, 0.03.
fn trimmed(v: f64) -> String {
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{v:.digits$}");
    match s.contains('.') {
        true => s.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => s,
    }
}

fn plot_err<E: std::fmt::Debug>(e: E) -> crate::util::BoxError {
    format!("plotting: {e:?}").into()
}

/// The label of the row or bar at `at` (they sit on whole numbers), empty between them.
fn label_at(names: &[String], at: f64) -> String {
    let i = at.round();
    match (at - i).abs() < 1e-6 && i >= 0.0 {
        true => names.get(i as usize).cloned().unwrap_or_default(),
        false => String::new(),
    }
}

/// Pixels a label of `text` needs at the charts' font sizes.
fn text_width(text: &str) -> u32 {
    7 * text.chars().count() as u32 + 16
}

/// Okabe and Ito's colors, told apart with any color vision.
const COLORS: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(230, 159, 0),
    RGBColor(0, 0, 0),
];

fn engine_color(i: usize) -> RGBAColor {
    COLORS[i % COLORS.len()].to_rgba()
}

/// Draws engine `i`'s marker (a shape per engine as well as a color) at `at`.
fn marker<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, i: usize, at: (i32, i32)) -> Result<()> {
    let color = engine_color(i);
    let drawn = match i % 3 {
        0 => area.draw(&Circle::new(at, 6, color.filled())),
        1 => area.draw(&TriangleMarker::new(at, 8, color.filled())),
        _ => area.draw(&Cross::new(at, 6, color.stroke_width(3))),
    };
    drawn.map_err(plot_err)
}

/// Whether a result label is one of Needle's configurations (the others are peers).
fn is_needle(label: &str) -> bool {
    label.starts_with("needle")
}

/// Queries per second by category (rows) and engine (one marker each), from
/// 0, or on a log scale when they span more than a decade, with the best
/// Needle configuration's ratio to each peer written at the right of each row.
pub fn qps_dots(
    path: &Path,
    title: &str,
    cats: &[String],
    labels: &[String],
    qps: &[Vec<f64>],
) -> Result<()> {
    let rows = cats.len().max(1);
    let peers: Vec<usize> = (0..labels.len()).filter(|&l| !is_needle(&labels[l])).collect();
    let needles: Vec<usize> = (0..labels.len()).filter(|&l| is_needle(&labels[l])).collect();
    let label_w = cats.iter().map(|c| text_width(c)).max().unwrap_or(60);
    let ratio_w = peers.iter().map(|&p| text_width(&ratio_header(&labels[p])).max(70)).sum::<u32>() + 20;
    let width = (label_w + 560 + ratio_w).max(text_width(title) + 40);
    let height = 150 + 40 * rows as u32;
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let (main, strip) = root.split_vertically(height - 34);
    let (plot, side) = main.split_horizontally(width - ratio_w);
    let axis = QpsAxis::fit(qps);
    // The first category on top.
    let top_down: Vec<String> = cats.iter().rev().cloned().collect();
    let row_y = |ci: usize| (rows - 1 - ci) as f64;
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", 16))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(label_w)
        .build_cartesian_2d(axis.range.clone(), -0.5f64..rows as f64 - 0.5)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .y_labels(rows)
        .y_label_formatter(&|y| label_at(&top_down, *y))
        .y_label_style(("sans-serif", 13))
        .x_labels(axis.ticks)
        .x_label_formatter(&|x| Unit::Count.show(axis.value(*x)))
        .x_desc(axis.desc)
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(plot_err)?;
    for (li, row) in qps.iter().enumerate() {
        for (ci, &q) in row.iter().enumerate().filter(|(_, q)| **q > 0.0) {
            let at = chart.backend_coord(&(axis.position(q), row_y(ci)));
            marker(&root, li, at)?;
        }
    }
    let pixel_y = |ci: usize| chart.backend_coord(&(axis.range.start, row_y(ci))).1;
    let header_y = chart.backend_coord(&(axis.range.start, rows as f64 - 0.5)).1;
    ratios_beside(&side, labels, &peers, &needles, qps, cats.len(), pixel_y, header_y)?;
    // The legend in a strip under the axis, where it covers nothing.
    let font = ("sans-serif", 13).into_font();
    let mut x = label_w as i32;
    for (li, label) in labels.iter().enumerate() {
        marker(&strip, li, (x, 14))?;
        strip.draw(&Text::new(label.clone(), (x + 14, 7), font.clone())).map_err(plot_err)?;
        x += text_width(label) as i32 + 30;
    }
    root.present().map_err(plot_err)?;
    Ok(())
}

/// The x axis of [`qps_dots`]: queries per second from 0, or their base-10
/// logarithms when they span more than a decade (plotted on a linear axis,
/// labelled with the values).
struct QpsAxis {
    log: bool,
    range: std::ops::Range<f64>,
    ticks: usize,
    desc: &'static str,
}

impl QpsAxis {
    fn fit(qps: &[Vec<f64>]) -> QpsAxis {
        let shown = qps.iter().flatten().copied().filter(|q| *q > 0.0);
        let (lo, hi) = shown.fold((f64::MAX, 0f64), |(lo, hi), q| (lo.min(q), hi.max(q)));
        if hi <= 0.0 {
            return QpsAxis { log: false, range: 0.0..10.0, ticks: 5, desc: "queries per second" };
        }
        if hi / lo <= 10.0 {
            return QpsAxis { log: false, range: 0.0..hi * 1.1, ticks: 8, desc: "queries per second" };
        }
        let (a, b) = (lo.log10().floor(), hi.log10().ceil());
        QpsAxis {
            log: true,
            range: a..b,
            ticks: (b - a) as usize + 1,
            desc: "queries per second (log scale)",
        }
    }

    fn position(&self, qps: f64) -> f64 {
        if self.log {
            qps.log10()
        } else {
            qps
        }
    }

    fn value(&self, position: f64) -> f64 {
        if self.log {
            10f64.powf(position)
        } else {
            position
        }
    }
}

fn ratio_header(peer: &str) -> String {
    format!("Needle vs {peer}")
}

/// The ratio columns of [`qps_dots`]: a header per peer above the rows, then
/// the best Needle configuration's QPS over the peer's on each row, green
/// where Needle is faster.
#[allow(clippy::too_many_arguments)]
fn ratios_beside(
    side: &DrawingArea<SVGBackend<'_>, Shift>,
    labels: &[String],
    peers: &[usize],
    needles: &[usize],
    qps: &[Vec<f64>],
    rows: usize,
    pixel_y: impl Fn(usize) -> i32,
    header_y: i32,
) -> Result<()> {
    if needles.is_empty() {
        return Ok(());
    }
    let header = ("sans-serif", 12).into_font().color(&BLACK.mix(0.7));
    let mut x = 8;
    for &p in peers {
        let head = ratio_header(&labels[p]);
        side.draw(&Text::new(head.clone(), (x, header_y - 18), header.clone())).map_err(plot_err)?;
        for (ci, &peer) in qps[p].iter().enumerate().take(rows) {
            let needle = needles.iter().map(|&n| qps[n][ci]).fold(0.0, f64::max);
            if needle <= 0.0 || peer <= 0.0 {
                continue;
            }
            let ratio = needle / peer;
            let color = if ratio >= 1.0 { RGBColor(0, 120, 50) } else { RGBColor(190, 30, 30) };
            let text = format!("{ratio:.2}x");
            let style = ("sans-serif", 14).into_font().color(&color);
            side.draw(&Text::new(text, (x, pixel_y(ci) - 7), style)).map_err(plot_err)?;
        }
        x += text_width(&head).max(70) as i32;
    }
    Ok(())
}

/// One horizontal bar per row (its name written on the left), its parts
/// stacked (one color per part), on a linear scale of bytes.
pub fn stacked_bytes(path: &Path, title: &str, bars: &[(String, Vec<f64>)], parts: &[String]) -> Result<()> {
    let rows = bars.len().max(1);
    let top_down: Vec<String> = bars.iter().rev().map(|(n, _)| n.clone()).collect();
    let label_w = top_down.iter().map(|n| text_width(n)).max().unwrap_or(60);
    let legend_w = parts.iter().map(|p| text_width(p) + 24).max().unwrap_or(80);
    let width = (label_w + 560 + legend_w).max(text_width(title) + 40);
    let height = (110 + 36 * rows as u32).max(60 + 22 * parts.len() as u32);
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let (plot, side) = root.split_horizontally(width - legend_w);
    let xmax = bars.iter().map(|(_, v)| v.iter().sum::<f64>()).fold(1.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", 16))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(label_w)
        .build_cartesian_2d(0f64..xmax, -0.5f64..rows as f64 - 0.5)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(rows)
        .y_label_formatter(&|y| label_at(&top_down, *y))
        .y_label_style(("sans-serif", 13))
        .x_label_formatter(&|x| Unit::Bytes.show(*x))
        .x_desc("bytes needed per query")
        .draw()
        .map_err(plot_err)?;
    let font = ("sans-serif", 13).into_font();
    for (pi, part) in parts.iter().enumerate() {
        let color = engine_color(pi);
        let rects = bars.iter().enumerate().map(|(bi, (_, v))| {
            let (left, y) = (v[..pi].iter().sum::<f64>(), (rows - 1 - bi) as f64);
            Rectangle::new([(left, y - 0.3), (left + v[pi], y + 0.3)], color.filled())
        });
        chart.draw_series(rects).map_err(plot_err)?;
        let y = 40 + 22 * pi as i32;
        side.draw(&Rectangle::new([(10, y - 6), (22, y + 6)], color.filled())).map_err(plot_err)?;
        side.draw(&Text::new(part.clone(), (28, y - 7), font.clone())).map_err(plot_err)?;
    }
    root.present().map_err(plot_err)?;
    Ok(())
}

/// Line styles, by kind of line: solid, dashed, dotted, long-dashed.
const DASHES: [Option<(u32, u32)>; 4] = [None, Some((8, 5)), Some((2, 4)), Some((14, 4))];

/// `names` without repeats, in their first order.
fn dedup_in_order(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// Lines with dots on log-log axes, one per named series; `x` and `y` say
/// each axis's description and unit.
pub fn log_lines(
    path: &Path,
    title: &str,
    x: (&str, Unit),
    y: (&str, Unit),
    series: &BTreeMap<String, Vec<(f64, f64)>>,
) -> Result<()> {
    let pts = series.values().flatten();
    let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(px, py) in pts {
        (xmin, xmax, ymin, ymax) = (xmin.min(px), xmax.max(px), ymin.min(py), ymax.max(py));
    }
    if xmin > xmax {
        return Ok(());
    }
    let legend_w = series.keys().map(|k| text_width(k)).max().unwrap_or(60) + 44;
    let width = (700 + legend_w).max(text_width(title) + 40);
    let root = SVGBackend::new(path, (width, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let (plot, side) = root.split_horizontally(width - legend_w);
    let (xmin, xmax) = (xmin.max(1e-3) / 1.5, xmax.max(1e-3) * 1.5);
    let (ymin, ymax) = (ymin.max(1e-3) / 2.0, ymax.max(1e-3) * 2.0);
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", 16))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d((xmin..xmax).log_scale(), (ymin..ymax).log_scale())
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc(format!("{} (log scale)", x.0))
        .y_desc(format!("{} (log scale)", y.0))
        .x_labels(8)
        .y_labels(8)
        .x_label_formatter(&|v| x.1.show(*v))
        .y_label_formatter(&|v| y.1.show(*v))
        .draw()
        .map_err(plot_err)?;
    let font = ("sans-serif", 12).into_font();
    // A color per engine (a name's first word), a line style per the rest
    // (category or percentile): the lines of one engine read as a family.
    let first_word = |name: &str| name.split(' ').next().unwrap_or("").to_string();
    let rest = |name: &str| name.split_once(' ').map_or(String::new(), |(_, r)| r.to_string());
    let engines: Vec<String> = dedup_in_order(series.keys().map(|n| first_word(n)));
    let kinds: Vec<String> = dedup_in_order(series.keys().map(|n| rest(n)));
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = engine_color(engines.iter().position(|e| *e == first_word(name)).unwrap_or(0));
        let dash = DASHES[kinds.iter().position(|k| *k == rest(name)).unwrap_or(0) % DASHES.len()];
        let line = pts.iter().copied();
        match dash {
            None => chart.draw_series(LineSeries::new(line, color.stroke_width(2))).map(|_| ()),
            Some((on, off)) => {
                chart.draw_series(DashedLineSeries::new(line, on, off, color.stroke_width(2))).map(|_| ())
            }
        }
        .map_err(plot_err)?;
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(plot_err)?;
        // The legend beside the plot, where it covers no line.
        let (x, y) = (10, 66 + 20 * i as i32);
        let (on, off) = dash.map_or((24, 0), |(on, off)| (on as i32, off as i32));
        let mut from = x;
        while from < x + 24 {
            let to = (from + on).min(x + 24);
            side.draw(&PathElement::new([(from, y), (to, y)], color.stroke_width(3))).map_err(plot_err)?;
            from = to + off;
        }
        side.draw(&Text::new(name.clone(), (x + 30, y - 6), font.clone())).map_err(plot_err)?;
    }
    root.present().map_err(plot_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_read_in_human_units() {
        assert_eq!(Unit::Count.show(10_000_000.0), "10M");
        assert_eq!(Unit::Count.show(8_566.2), "8.57k");
        assert_eq!(Unit::Count.show(950.0), "950");
        assert_eq!(Unit::Bytes.show(10_000_000.0), "10 MB");
        assert_eq!(Unit::Bytes.show(35_400.0), "35.4 kB");
        assert_eq!(Unit::Megabytes.show(512.0), "512 MB");
        assert_eq!(Unit::Megabytes.show(2000.0), "2 GB");
        assert_eq!(Unit::Millis.show(0.05), "0.05 ms");
    }
}
