//! Figures of the comparison report, one module per figure type, all drawn with plotters into
//! SVG files (pure-Rust text layout: the DejaVu Sans font is embedded with the `dejavu` crate and
//! registered once, so no system font is needed).
//!
//! - [`convergence`]: the yardstick residual vs iteration and vs time, every solver on one step,
//!   per case.
//! - [`setting_convergence`]: residual vs iteration, one line per value of a swept solver
//!   setting (Macklin et al. Figs. 17–18: merit per Newton iteration by `r_mode`, by
//!   `linear_solver`).
//! - [`timing`]: solve time per step vs problem size, log-log, per solver.
//! - [`scaling`]: detection + assembly + solve per step against a case's size parameter (a
//!   `[[grid]]` over clutter's `bodies`), log-log, with the fitted exponent per solver.
//! - [`profiles`]: Dolan–Moré performance profiles ([`crate::profile`]).
//! - [`work_precision`]: accuracy vs cost over `dt` or solver-setting sweeps.
//! - [`order`]: error vs `dt` over `dt` sweeps, with the observed order of accuracy.
//! - [`physics`]: energy, penetration and creep over time, per case.
//! - [`time_to_accuracy`]: median time per step to an accuracy against the accuracy, for records
//!   of the equal-accuracy mode, one panel per scene.
//!
//! Every figure returns a [`Figure`] whose caption names the run records it was drawn from
//! (file, commit, case and solver parameter hashes). Log axes never invent data: points that are
//! zero, negative or NaN are left out and counted in the figure's notes.
//!
//! Drawing uses one coordinate type: log axes are drawn in `log10` space with tick labels showing
//! the original values.

pub mod convergence;
pub mod order;
pub mod physics;
pub mod profiles;
pub mod scaling;
pub mod setting_convergence;
pub mod time_to_accuracy;
pub mod timing;
pub mod work_precision;

pub use crate::text::fmt_num;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use records::RunRecord;
use std::path::{Path, PathBuf};

/// Why a figure could not be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum FigureError {
    /// plotters failed to draw (its message).
    #[error("{why}")]
    Draw {
        /// plotters' message.
        why: String,
    },
    /// plotters failed to finish the SVG of a file.
    #[error("{}: {why}", path.display())]
    Present {
        /// The figure's file.
        path: PathBuf,
        /// plotters' message.
        why: String,
    },
    /// The figures directory could not be created, or a figure written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The directory or file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The figure's SVG is empty.
    #[error("{}: the figure drew nothing", path.display())]
    Empty {
        /// The figure's file.
        path: PathBuf,
    },
}

/// A rendered figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Figure type (`convergence`, `timing`, `scaling`, `profile`, `work_precision`, `order_of_accuracy`,
    /// `physics`, `setting_convergence`, `time_to_accuracy`).
    pub kind: &'static str,
    /// Path of the SVG relative to the report directory (`figures/<name>.svg`).
    pub file: String,
    /// Title shown above the figure.
    pub title: String,
    /// What is plotted and how to read it.
    pub description: String,
    /// The run records it was drawn from: `file (commit, case hash, solver hash)`.
    pub sources: Vec<String>,
    /// Number of plotted series (legend entries) over all panels.
    pub series: usize,
    /// Data left out or caveats (e.g. "3 points <= 0 not drawn on the log axis").
    pub notes: Vec<String>,
    /// For a per-step figure (x = simulated time of one case): how an x position maps to a step,
    /// so that the report links a click to the case's replay page at that step.
    pub steps: Option<StepAxes>,
}

/// Where a panel's x axis lies in its figure's SVG.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct XAxis {
    /// Pixel x (SVG user units) of the plotting area's left and right ends.
    pub pixels: (i32, i32),
    /// The drawn x value at those ends (`log10` of the data on a log axis).
    pub range: (f64, f64),
    /// The axis scale.
    pub scale: Scale,
}

impl XAxis {
    /// The data x at pixel `px` (linear interpolation between the ends; `10^` on a log axis).
    pub fn value_at(&self, px: f64) -> f64 {
        let (a, b) = (f64::from(self.pixels.0), f64::from(self.pixels.1));
        let v = self.range.0 + (px - a) / (b - a) * (self.range.1 - self.range.0);
        match self.scale {
            Scale::Linear => v,
            Scale::Log => 10f64.powf(v),
        }
    }
}

/// How a click on a per-step figure finds its step: step `k` is drawn at `x = t0 + (k - step0) dt`.
#[derive(Debug, Clone, PartialEq)]
pub struct StepAxes {
    /// Case label (its replay page is [`crate::replay::page_path`]).
    pub case: String,
    /// Width of the SVG (its pixel x span).
    pub width: u32,
    /// One x axis per panel, left to right.
    pub axes: Vec<XAxis>,
    /// A recorded step and the x (time) it is drawn at.
    pub step0: usize,
    /// The x of `step0`.
    pub t0: f64,
    /// The x distance between two consecutive steps (the time step).
    pub dt: f64,
}

impl StepAxes {
    /// The step drawn nearest pixel `px` of the SVG (`None`: outside every panel's plotting area,
    /// or before step 0).
    pub fn step_at(&self, px: f64) -> Option<usize> {
        let a = self.axes.iter().find(|a| f64::from(a.pixels.0) <= px && px <= f64::from(a.pixels.1))?;
        let k = self.step0 as f64 + ((a.value_at(px) - self.t0) / self.dt).round();
        (k >= 0.0).then_some(k as usize)
    }
}

/// One record's provenance for captions: `file (commit abcdef1, case <hash>, solver <hash>)`.
pub fn source_of(r: &RunRecord) -> String {
    let commit: String = r.provenance.commit.chars().take(7).collect();
    let dirty = if r.provenance.commit.ends_with("-dirty") { "-dirty" } else { "" };
    format!("{} (commit {commit}{dirty}, case {}, solver {})", r.file_name(), r.case.params_hash, r.solver.params_hash)
}

/// Axis scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Linear.
    Linear,
    /// Base-10 logarithmic (non-positive values are not drawn).
    Log,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A polyline (broken at NaN gaps).
    Line,
    /// Markers only.
    Points,
    /// A polyline with markers.
    LinePoints,
    /// A dashed polyline.
    Dashed,
}

/// One series of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Index into the palette (stable per solver).
    pub color: usize,
    /// Data points `(x, y)` in data units; NaN breaks a line.
    pub points: Vec<(f64, f64)>,
    /// Drawing style.
    pub style: Style,
    /// Text drawn beside each point (`labels[i]` at `points[i]`; empty: none), e.g. the swept
    /// value of a work–precision point.
    pub labels: Vec<String>,
}

/// Legend corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Legend {
    /// Upper right.
    UpperRight,
    /// Lower right.
    LowerRight,
    /// Lower left.
    LowerLeft,
}

/// One chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Panel title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// X scale.
    pub x_scale: Scale,
    /// Y scale.
    pub y_scale: Scale,
    /// Fixed y range in data units, if any.
    pub y_range: Option<(f64, f64)>,
    /// Where the legend goes.
    pub legend: Legend,
    /// The series.
    pub series: Vec<Series>,
}

/// Ten distinguishable colours (Tableau 10).
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Registers the embedded DejaVu Sans as plotters' `sans-serif` (once per process).
pub fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Cannot fail for the embedded font; if it did, text would be missing, not wrong.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

fn transform(v: f64, s: Scale) -> Option<f64> {
    match s {
        Scale::Linear if v.is_finite() => Some(v),
        Scale::Log if v.is_finite() && v > 0.0 => Some(v.log10()),
        _ => None,
    }
}

fn range(values: impl Iterator<Item = f64>, scale: Scale) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let span = hi - lo;
    if span <= 1e-12 * (1.0 + lo.abs().max(hi.abs())) {
        let d = match scale {
            Scale::Log => 0.5,
            Scale::Linear => (0.1 * lo.abs()).max(1e-12),
        };
        return (lo - d, hi + d);
    }
    (lo - 0.05 * span, hi + 0.05 * span)
}

/// A linear tick label with enough significant digits to tell ticks `span` apart.
fn linear_tick(x: f64, lo: f64, hi: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return fmt_num(x);
    }
    let span = (hi - lo).abs().max(f64::MIN_POSITIVE);
    let mag = lo.abs().max(hi.abs());
    let digits = ((mag / span).log10().ceil() as i32 + 2).clamp(3, 12);
    let e = x.abs().log10().floor() as i32;
    let m = 10f64.powi(e - digits + 1);
    let r = (x / m).round() * m;
    if r.abs() < span * 1e-9 {
        return "0".into();
    }
    let s = format!("{r:.prec$e}", prec = (digits - 1) as usize);
    let (mant, ex) = s.split_once('e').unwrap_or((&s, "0"));
    let mant = if mant.contains('.') { mant.trim_end_matches('0').trim_end_matches('.') } else { mant };
    let ex: i32 = ex.parse().unwrap_or(0);
    if (-3..4).contains(&ex) {
        let v: f64 = format!("{mant}e{ex}").parse().unwrap_or(r);
        let dec = (digits - 1 - ex).max(0) as usize;
        let t = format!("{v:.dec$}");
        return if t.contains('.') { t.trim_end_matches('0').trim_end_matches('.').to_string() } else { t };
    }
    format!("{mant}e{ex}")
}

/// Tick positions (in log10 space) and labels of a log axis over `[lo, hi]` (log10 units):
/// powers of ten, every k-th decade for wide ranges, and 2 and 5 (or every digit) within a decade
/// for narrow ones.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<(f64, String)> {
    let span = hi - lo;
    let mantissas: &[f64] = if span >= 2.5 {
        &[1.0]
    } else if span >= 0.9 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    };
    let every = ((span / 7.0).ceil() as i64).max(1);
    let mut out = vec![];
    for k in (lo.floor() as i64)..=(hi.ceil() as i64) {
        if k.rem_euclid(every) != 0 {
            continue;
        }
        for &m in mantissas {
            let v = m * 10f64.powi(k as i32);
            let pos = v.log10();
            if pos >= lo && pos <= hi {
                out.push((pos, fmt_num(v)));
            }
        }
    }
    if out.len() < 3 && span < 1.0 {
        // narrower than the 1..9 steps: evenly spaced nice values
        let (a, b) = (10f64.powf(lo), 10f64.powf(hi));
        let raw = (b - a) / 4.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
        let mut v = (a / step).ceil() * step;
        out.clear();
        while v <= b {
            out.push((v.log10(), fmt_num(v)));
            v += step;
        }
    }
    out
}

/// Polyline pieces of a series (split at left-out points), in drawing coordinates.
type Segments = Vec<Vec<(f64, f64)>>;

/// Draws one panel into `area`; returns the number of legend entries and the number of points
/// left out (non-finite, or non-positive on a log axis).
pub fn draw_panel(area: &DrawingArea<SVGBackend<'_>, Shift>, p: &Panel) -> Result<(usize, usize), FigureError> {
    draw_panel_axis(area, p).map(|(legend, dropped, _)| (legend, dropped))
}

/// [`draw_panel`], also returning where its x axis was drawn.
fn draw_panel_axis(area: &DrawingArea<SVGBackend<'_>, Shift>, p: &Panel) -> Result<(usize, usize, XAxis), FigureError> {
    let e = |e: DrawingAreaErrorKind<_>| FigureError::Draw { why: e.to_string() };
    let mut dropped = 0;
    let mut t_series: Vec<(usize, Segments)> = vec![];
    for s in &p.series {
        let mut segs: Vec<Vec<(f64, f64)>> = vec![vec![]];
        for &(x, y) in &s.points {
            match (transform(x, p.x_scale), transform(y, p.y_scale)) {
                (Some(x), Some(y)) => segs.last_mut().expect("non-empty").push((x, y)),
                _ => {
                    dropped += 1;
                    if !segs.last().expect("non-empty").is_empty() {
                        segs.push(vec![]);
                    }
                }
            }
        }
        segs.retain(|s| !s.is_empty());
        t_series.push((s.color, segs));
    }
    let (x0, x1) = range(t_series.iter().flat_map(|(_, segs)| segs.iter().flatten()).map(|p| p.0), p.x_scale);
    // A linear y axis whose span is tiny next to its values is drawn as an offset from a stated
    // value, so that tick labels stay short (the axis label names the offset).
    let mut y_label = p.y_label.clone();
    let mut y_offset = 0.0;
    if p.y_scale == Scale::Linear && p.y_range.is_none() {
        let (lo, hi) = t_series
            .iter()
            .flat_map(|(_, segs)| segs.iter().flatten())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), q| (a.min(q.1), b.max(q.1)));
        if lo.is_finite() && hi > lo && lo.abs().max(hi.abs()) / (hi - lo) > 1e4 {
            let offset: f64 = format!("{:.6e}", 0.5 * (lo + hi)).parse().unwrap_or(lo);
            for (_, segs) in &mut t_series {
                for seg in segs.iter_mut() {
                    for q in seg.iter_mut() {
                        q.1 -= offset;
                    }
                }
            }
            y_label = format!("{y_label} − ({offset:e})");
            y_offset = offset;
        }
    }
    let all = || t_series.iter().flat_map(|(_, segs)| segs.iter().flatten());
    let (y0, y1) = match p.y_range {
        Some((a, b)) => (transform(a, p.y_scale).unwrap_or(0.0), transform(b, p.y_scale).unwrap_or(1.0)),
        None => range(all().map(|p| p.1), p.y_scale),
    };
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(72)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    {
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(p.x_label.as_str())
            .y_desc(y_label.as_str())
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .light_line_style(RGBColor(238, 238, 238))
            .bold_line_style(RGBColor(215, 215, 215));
        let xf = move |v: &f64| linear_tick(*v, x0, x1);
        let yf = move |v: &f64| linear_tick(*v, y0, y1);
        match p.x_scale {
            Scale::Linear => mesh.x_labels(6).x_label_formatter(&xf),
            Scale::Log => mesh.x_labels(0).disable_x_mesh(),
        };
        match p.y_scale {
            Scale::Linear => mesh.y_labels(6).y_label_formatter(&yf),
            Scale::Log => mesh.y_labels(0).disable_y_mesh(),
        };
        mesh.draw().map_err(e)?;
    }
    let x_axis = XAxis {
        pixels: (chart.backend_coord(&(x0, y0)).0, chart.backend_coord(&(x1, y0)).0),
        range: (x0, x1),
        scale: p.x_scale,
    };
    // log axes: grid lines and labels at 1-2-5 x 10^k, drawn here
    let base = area.get_base_pixel();
    let grid = RGBColor(215, 215, 215);
    let font = ("sans-serif", 13).into_font().color(&BLACK);
    if p.x_scale == Scale::Log {
        for (pos, label) in log_ticks(x0, x1) {
            chart.draw_series(LineSeries::new([(pos, y0), (pos, y1)], grid)).map_err(e)?;
            let (px, py) = chart.backend_coord(&(pos, y0));
            let (px, py) = (px - base.0, py - base.1);
            area.draw(&PathElement::new(vec![(px, py), (px, py + 5)], BLACK)).map_err(e)?;
            let style = font.clone().pos(Pos::new(HPos::Center, VPos::Top));
            area.draw(&Text::new(label, (px, py + 7), style)).map_err(e)?;
        }
    }
    if p.y_scale == Scale::Log {
        for (pos, label) in log_ticks(y0, y1) {
            chart.draw_series(LineSeries::new([(x0, pos), (x1, pos)], grid)).map_err(e)?;
            let (px, py) = chart.backend_coord(&(x0, pos));
            let (px, py) = (px - base.0, py - base.1);
            area.draw(&PathElement::new(vec![(px - 5, py), (px, py)], BLACK)).map_err(e)?;
            let style = font.clone().pos(Pos::new(HPos::Right, VPos::Center));
            area.draw(&Text::new(label, (px - 7, py), style)).map_err(e)?;
        }
    }
    let mut legend = 0;
    for (s, (color, segs)) in p.series.iter().zip(&t_series) {
        let c = PALETTE[color % PALETTE.len()];
        let mut labelled = false;
        for seg in segs {
            let line = matches!(s.style, Style::Line | Style::LinePoints);
            let points = matches!(s.style, Style::Points | Style::LinePoints) || seg.len() == 1;
            if s.style == Style::Dashed && seg.len() > 1 {
                let a = chart
                    .draw_series(DashedLineSeries::new(seg.iter().copied(), 6, 4, c.stroke_width(2)))
                    .map_err(e)?;
                if !labelled {
                    a.label(s.label.as_str()).legend(move |(x, y)| {
                        DashedPathElement::new(vec![(x, y), (x + 20, y)], 5, 3, c.stroke_width(2))
                    });
                    labelled = true;
                }
            }
            if line && seg.len() > 1 {
                let a = chart.draw_series(LineSeries::new(seg.iter().copied(), c.stroke_width(2))).map_err(e)?;
                if !labelled {
                    a.label(s.label.as_str())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
                    labelled = true;
                }
            }
            if points {
                let a = chart.draw_series(seg.iter().map(|&(x, y)| Circle::new((x, y), 4, c.filled()))).map_err(e)?;
                if !labelled {
                    a.label(s.label.as_str()).legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
                    labelled = true;
                }
            }
        }
        if labelled {
            legend += 1;
        }
        for (&(x, y), text) in s.points.iter().zip(&s.labels) {
            if let (Some(x), Some(y), false) = (transform(x, p.x_scale), transform(y, p.y_scale), text.is_empty()) {
                let (px, py) = chart.backend_coord(&(x, y - y_offset));
                let style = font.clone().color(&c).pos(Pos::new(HPos::Left, VPos::Bottom));
                area.draw(&Text::new(text.clone(), (px - base.0 + 6, py - base.1 - 4), style)).map_err(e)?;
            }
        }
    }
    if legend > 0 {
        chart
            .configure_series_labels()
            .position(match p.legend {
                Legend::UpperRight => SeriesLabelPosition::UpperRight,
                Legend::LowerRight => SeriesLabelPosition::LowerRight,
                Legend::LowerLeft => SeriesLabelPosition::LowerLeft,
            })
            .label_font(("sans-serif", 13))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .draw()
            .map_err(e)?;
    } else {
        area.draw(&Text::new(
            "no drawable data",
            (area.dim_in_pixel().0 as i32 / 2 - 60, area.dim_in_pixel().1 as i32 / 2),
            ("sans-serif", 16),
        ))
        .map_err(e)?;
    }
    Ok((legend, dropped, x_axis))
}

/// Draws `panels` side by side into `dir/<name>.svg` (width `panel_w` each, height `h`); returns
/// `(file relative to the report dir, legend entries, points left out)`.
pub fn render(
    dir: &Path,
    name: &str,
    panels: &[Panel],
    panel_w: u32,
    h: u32,
) -> Result<(String, usize, usize), FigureError> {
    render_axes(dir, name, panels, panel_w, h).map(|(file, legend, dropped, _)| (file, legend, dropped))
}

/// [`render`], also returning where each panel's x axis lies in the SVG.
pub fn render_axes(
    dir: &Path,
    name: &str,
    panels: &[Panel],
    panel_w: u32,
    h: u32,
) -> Result<(String, usize, usize, Vec<XAxis>), FigureError> {
    register_font();
    let figures = dir.join("figures");
    std::fs::create_dir_all(&figures).map_err(|source| FigureError::Io { path: figures.clone(), source })?;
    let path = figures.join(format!("{name}.svg"));
    let (mut legend, mut dropped, mut axes) = (0, 0, vec![]);
    // drawn into memory, then written atomically: a full disk or a failed draw leaves the previous
    // figure or nothing, never a 0-byte or truncated SVG
    let mut svg = String::new();
    {
        let w = panel_w * panels.len().max(1) as u32;
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| FigureError::Draw { why: e.to_string() })?;
        let areas = root.split_evenly((1, panels.len().max(1)));
        for (area, p) in areas.iter().zip(panels) {
            let (l, d, x) = draw_panel_axis(area, p)?;
            legend += l;
            dropped += d;
            axes.push(x);
        }
        root.present().map_err(|e| FigureError::Present { path: path.clone(), why: e.to_string() })?;
    }
    if svg.is_empty() {
        return Err(FigureError::Empty { path });
    }
    records::write_atomic(&path, svg.as_bytes()).map_err(|source| FigureError::Io { path: path.clone(), source })?;
    Ok((format!("figures/{name}.svg"), legend, dropped, axes))
}

/// A file-name-safe slug.
pub fn slug(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// The distinct solver names of `records`, sorted: palette index = position.
pub fn solver_order(records: &[RunRecord]) -> Vec<String> {
    let mut v: Vec<String> = records.iter().map(|r| r.solver.name.clone()).collect();
    v.sort();
    v.dedup();
    v
}

/// Palette index of `solver` in `order`.
pub fn color_of(order: &[String], solver: &str) -> usize {
    order.iter().position(|s| s == solver).unwrap_or(0)
}

/// The legend label of record `r` among `records`: the solver name, followed by the solver
/// settings in which the records of that solver differ (`nsn [linear_solver=pcg, r_mode=h2]`),
/// so that several variants of one solver on one case are told apart. Just the name when the
/// solver has one setting combination here.
pub fn variant_label(r: &RunRecord, records: &[&RunRecord]) -> String {
    let same: Vec<&&RunRecord> = records.iter().filter(|o| o.solver.name == r.solver.name).collect();
    let mut keys: Vec<&String> = same
        .iter()
        .flat_map(|o| o.solver.params.0.keys())
        .filter(|k| same.iter().any(|o| o.solver.params.0.get(*k) != r.solver.params.0.get(*k)))
        .collect();
    keys.sort();
    keys.dedup();
    if keys.is_empty() {
        return r.solver.name.clone();
    }
    let kv: Vec<String> = keys.iter().map(|k| format!("{k}={}", setting_value(r.solver.params.0.get(*k)))).collect();
    format!("{} [{}]", r.solver.name, kv.join(", "))
}

/// A setting value for a label: strings without quotes, numbers short ([`fmt_num`]).
pub fn setting_value(v: Option<&serde_json::Value>) -> String {
    match v {
        None => "—".into(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.as_f64().map(fmt_num).unwrap_or_else(|| v.to_string()),
    }
}

/// Palette index of the series labelled `label` of `solver`: the solver's colour for a single
/// variant, else shifted by the variant's position among `labels` (the distinct labels drawn).
pub fn variant_color(order: &[String], solver: &str, label: &str, labels: &[String]) -> usize {
    let mine: Vec<&String> =
        labels.iter().filter(|l| l.as_str() == solver || l.starts_with(&format!("{solver} ["))).collect();
    let k = mine.iter().position(|l| l.as_str() == label).unwrap_or(0);
    color_of(order, solver) + k
}

/// A note for left-out points, if any.
pub fn dropped_note(dropped: usize) -> Option<String> {
    (dropped > 0).then(|| format!("{dropped} point(s) not drawn: NaN, infinite, or <= 0 on a log axis"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short_and_never_zeroed() {
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(1.0), "1");
        assert_eq!(fmt_num(0.25), "0.25");
        assert_eq!(fmt_num(1e-8), "1e-8");
        assert_eq!(fmt_num(2.5e-9), "2.5e-9");
        assert_eq!(fmt_num(123456.0), "1.235e5");
        assert_eq!(fmt_num(0.0021345), "0.002135");
        assert_eq!(fmt_num(11.554), "11.55");
        assert_eq!(fmt_num(100.0), "100");
        assert_eq!(fmt_num(f64::NAN), "NaN");
    }

    /// A figure is written whole or not at all: a successful render leaves a complete SVG and no
    /// temporary file; one whose file cannot be replaced (its name taken by a non-empty folder, as
    /// a full disk fails the rename) is an error that leaves no 0-byte figure behind.
    #[test]
    fn figures_are_written_atomically() {
        let panel = Panel {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            y_range: None,
            legend: Legend::UpperRight,
            series: vec![Series {
                label: "s".into(),
                color: 0,
                points: vec![(0.0, 1.0), (1.0, 2.0)],
                style: Style::LinePoints,
                labels: vec![],
            }],
        };
        let dir = tempfile::tempdir().unwrap();
        let (file, _, _) = render(dir.path(), "ok", std::slice::from_ref(&panel), 300, 200).unwrap();
        let text = std::fs::read_to_string(dir.path().join(&file)).unwrap();
        assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"), "{text}");
        std::fs::create_dir_all(dir.path().join("figures/taken.svg/x")).unwrap();
        let e = render(dir.path(), "taken", &[panel], 300, 200).unwrap_err();
        assert!(matches!(&e, FigureError::Io { path, .. } if path.ends_with("taken.svg")), "{e:?}");
        assert!(e.to_string().contains("taken.svg"), "{e}");
        let names: Vec<String> = std::fs::read_dir(dir.path().join("figures"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
        assert!(dir.path().join("figures/taken.svg/x").is_dir());
    }

    #[test]
    fn ticks_are_nice_and_distinct() {
        let t: Vec<String> = log_ticks(-10.3, -9.45).into_iter().map(|t| t.1).collect();
        assert_eq!(t, ["6e-11", "7e-11", "8e-11", "9e-11", "1e-10", "2e-10", "3e-10"]);
        let t: Vec<String> = log_ticks(-12.0, 0.2).into_iter().map(|t| t.1).collect();
        assert_eq!(t, ["1e-12", "1e-10", "1e-8", "1e-6", "1e-4", "0.01", "1"]);
        assert_eq!(linear_tick(4.9051e-4, 4.9e-4, 4.91e-4), "4.9051e-4");
        assert_eq!(linear_tick(4.9e-4, 4.9e-4, 4.91e-4), "4.9e-4");
        assert_eq!(linear_tick(0.75, 0.0, 1.0), "0.75");
        assert_eq!(linear_tick(0.8, 0.69, 0.81), "0.8");
    }
}
