//! SVG plots of energy curves with plotters' SVG backend.
//!
//! Features chosen for plotters (see this crate's `Cargo.toml`):
//! `default-features = false, features = ["svg_backend", "line_series"]`.
//! Without the `ttf` and `ab_glyph` features plotters loads no font library
//! (no font-kit, freetype, fontconfig or ttf-parser): the SVG backend writes
//! text as `<text>` elements with a font-family name that the viewer
//! resolves, and plotters lays text out with approximate glyph metrics
//! (about 0.45 × font size per character), enough for axis labels and a
//! legend.
//!
//! Files are written atomically: the SVG is rendered into memory, written to
//! a temporary file next to the target, flushed, and renamed over the target.

use std::io::Write;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::{AnalysisError, EnergyColumns};

/// Options of [`plot_energy`] and [`plot_kinetic_comparison`].
#[derive(Debug, Clone, PartialEq)]
pub struct PlotOptions {
    /// Image width in SVG pixels. Default 1024.
    pub width: u32,
    /// Image height in SVG pixels (split between the panels when
    /// `log_kinetic` adds one). Default 640.
    pub height: u32,
    /// Caption above the (first) panel; `None` for a default caption.
    pub title: Option<String>,
    /// [`plot_energy`]: add a second panel below with the kinetic energy on a
    /// logarithmic axis. [`plot_kinetic_comparison`]: use a logarithmic
    /// kinetic-energy axis. Values below `1e-12 ×` the largest kinetic energy
    /// (including zeros) are drawn at that floor. Default `false`.
    pub log_kinetic: bool,
}

impl Default for PlotOptions {
    fn default() -> Self {
        Self {
            width: 1024,
            height: 640,
            title: None,
            log_kinetic: false,
        }
    }
}

/// Floor of the log axis relative to the largest kinetic energy.
const LOG_FLOOR: f64 = 1e-12;

/// Plots the energies of one run against time as an SVG file at `path`.
///
/// Curves (J vs s): kinetic, elastic, gravity − gravity(t₀) (so it starts at
/// 0), dissipated, and their sum "total" (constant when the energy balance
/// holds), with axis labels and a legend. With `options.log_kinetic` a second
/// panel shows the kinetic energy on a log axis.
///
/// # Errors
/// [`AnalysisError::Columns`] for empty or ragged columns,
/// [`AnalysisError::InvalidOption`] for a zero width or height,
/// [`AnalysisError::Plot`] if drawing fails, [`AnalysisError::Io`] if
/// writing fails (no temporary file is left behind).
pub fn plot_energy(
    columns: &EnergyColumns,
    path: impl AsRef<Path>,
    options: &PlotOptions,
) -> Result<(), AnalysisError> {
    let path = path.as_ref();
    columns.validate()?;
    check_size(options)?;
    let svg = render_energy(columns, options).map_err(|message| AnalysisError::Plot {
        file: path.to_path_buf(),
        message,
    })?;
    write_atomic(path, svg.as_bytes())
}

/// Overlays the kinetic energy of several runs (e.g. strain-rate, Rayleigh and
/// no damping) as an SVG file at `path`, one labelled curve per run, in the
/// given order. With `options.log_kinetic` the energy axis is logarithmic.
///
/// # Errors
/// [`AnalysisError::Columns`] if `runs` is empty or a run has empty or
/// ragged columns (the message names the run), otherwise as
/// [`plot_energy`].
pub fn plot_kinetic_comparison(
    runs: &[(&str, &EnergyColumns)],
    path: impl AsRef<Path>,
    options: &PlotOptions,
) -> Result<(), AnalysisError> {
    let path = path.as_ref();
    if runs.is_empty() {
        return Err(AnalysisError::Columns(
            "expected at least one run to compare, found none".into(),
        ));
    }
    for (label, cols) in runs {
        cols.validate()
            .map_err(|e| AnalysisError::Columns(format!("run '{label}': {e}")))?;
    }
    check_size(options)?;
    let svg = render_comparison(runs, options).map_err(|message| AnalysisError::Plot {
        file: path.to_path_buf(),
        message,
    })?;
    write_atomic(path, svg.as_bytes())
}

fn check_size(options: &PlotOptions) -> Result<(), AnalysisError> {
    for (name, v) in [("width", options.width), ("height", options.height)] {
        if v < 64 {
            return Err(AnalysisError::InvalidOption {
                name,
                value: v.to_string(),
                expected: "at least 64 pixels",
            });
        }
    }
    Ok(())
}

/// `(lo, hi)` of the finite values, padded so the range is never empty.
fn padded_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    let span = hi - lo;
    let pad = if span > 0.0 {
        0.05 * span
    } else {
        0.5 * lo.abs().max(1e-30)
    };
    (lo - pad, hi + pad)
}

fn time_range(t: &[f64]) -> (f64, f64) {
    let (a, b) = (t[0], t[t.len() - 1]);
    if b > a {
        (a, b)
    } else {
        (a - 0.5 * a.abs().max(1e-30), a + 0.5 * a.abs().max(1e-30))
    }
}

/// Axis label: plain decimals (up to 4 places, trailing zeros dropped) for
/// magnitudes in `[1e-3, 1e4)`, else scientific with 3 significant digits.
fn axis_label(v: &f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if (1e-3..1e4).contains(&a) {
        let s = format!("{v:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" { "0".into() } else { s.into() }
    } else {
        format!("{v:.2e}")
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn legend_line(color: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
}

fn render_energy(c: &EnergyColumns, o: &PlotOptions) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root: Area = SVGBackend::with_string(&mut svg, (o.width, o.height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (top, bottom) = if o.log_kinetic {
            let (a, b) = root.split_vertically(o.height / 2);
            (a, Some(b))
        } else {
            (root.clone(), None)
        };
        let g0 = c.gravity[0];
        let n = c.len();
        let total: Vec<f64> = (0..n)
            .map(|i| c.kinetic[i] + c.elastic[i] + (c.gravity[i] - g0) + c.dissipated[i])
            .collect();
        let curves: [(&str, RGBColor, Vec<f64>); 5] = [
            ("kinetic", RED, c.kinetic.clone()),
            ("elastic", BLUE, c.elastic.clone()),
            (
                "gravity - gravity(t0)",
                RGBColor(0, 150, 0),
                c.gravity.iter().map(|g| g - g0).collect(),
            ),
            ("dissipated", MAGENTA, c.dissipated.clone()),
            ("total", BLACK, total),
        ];
        let (t0, t1) = time_range(&c.t);
        let (y0, y1) = padded_range(curves.iter().flat_map(|(_, _, v)| v.iter().copied()));
        let title = o.title.clone().unwrap_or_else(|| "energies".into());
        let mut chart = ChartBuilder::on(&top)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(90)
            .build_cartesian_2d(t0..t1, y0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("t [s]")
            .y_desc("energy [J]")
            .x_label_formatter(&axis_label)
            .y_label_formatter(&axis_label)
            .draw()
            .map_err(err)?;
        for (label, color, values) in curves {
            chart
                .draw_series(LineSeries::new(
                    c.t.iter().copied().zip(values),
                    color.stroke_width(2),
                ))
                .map_err(err)?
                .label(label)
                .legend(legend_line(color));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;

        if let Some(bottom) = bottom {
            draw_log_kinetic(
                &bottom,
                &[("kinetic", &c.t, &c.kinetic)],
                "kinetic energy (log scale)",
            )?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

fn draw_log_kinetic(
    area: &Area,
    runs: &[(&str, &[f64], &[f64])],
    caption: &str,
) -> Result<(), String> {
    let t_lo = runs.iter().map(|r| r.1[0]).fold(f64::INFINITY, f64::min);
    let t_hi = runs
        .iter()
        .map(|r| r.1[r.1.len() - 1])
        .fold(f64::NEG_INFINITY, f64::max);
    let (t0, t1) = time_range(&[t_lo, t_hi]);
    let hi = runs
        .iter()
        .flat_map(|r| r.2.iter().copied())
        .fold(0.0_f64, f64::max);
    let hi = if hi > 0.0 { hi } else { 1.0 };
    let floor = hi * LOG_FLOOR;
    let lo = runs
        .iter()
        .flat_map(|r| r.2.iter().copied())
        .filter(|&v| v > floor)
        .fold(hi, f64::min);
    let (lo, hi) = if lo < hi {
        (lo / 1.5, hi * 1.5)
    } else {
        (hi / 10.0, hi * 10.0)
    };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(90)
        .build_cartesian_2d(t0..t1, (lo..hi).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("t [s]")
        .y_desc("kinetic energy [J]")
        .x_label_formatter(&axis_label)
        .y_label_formatter(&axis_label)
        .draw()
        .map_err(err)?;
    for (i, (label, t, k)) in runs.iter().enumerate() {
        let color = series_color(i);
        chart
            .draw_series(LineSeries::new(
                t.iter().copied().zip(k.iter().map(|&v| v.max(lo))),
                color.stroke_width(2),
            ))
            .map_err(err)?
            .label(*label)
            .legend(legend_line(color));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    Ok(())
}

/// High-contrast colours for overlaid runs; plotters' palette beyond them.
const SERIES_COLORS: [RGBColor; 7] = [
    RGBColor(220, 20, 20),
    RGBColor(20, 60, 220),
    RGBColor(0, 150, 0),
    RGBColor(0, 0, 0),
    RGBColor(230, 130, 0),
    RGBColor(170, 0, 170),
    RGBColor(0, 170, 190),
];

fn series_color(i: usize) -> RGBColor {
    SERIES_COLORS.get(i).copied().unwrap_or_else(|| {
        let (r, g, b) = Palette99::pick(i).rgb();
        RGBColor(r, g, b)
    })
}

fn render_comparison(runs: &[(&str, &EnergyColumns)], o: &PlotOptions) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root: Area = SVGBackend::with_string(&mut svg, (o.width, o.height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let title = o.title.clone().unwrap_or_else(|| "kinetic energy".into());
        if o.log_kinetic {
            let series: Vec<(&str, &[f64], &[f64])> = runs
                .iter()
                .map(|(l, c)| (*l, c.t.as_slice(), c.kinetic.as_slice()))
                .collect();
            draw_log_kinetic(&root, &series, &title)?;
        } else {
            let t_lo = runs.iter().map(|r| r.1.t[0]).fold(f64::INFINITY, f64::min);
            let t_hi = runs
                .iter()
                .map(|r| r.1.t[r.1.len() - 1])
                .fold(f64::NEG_INFINITY, f64::max);
            let (t0, t1) = time_range(&[t_lo, t_hi]);
            let (y0, y1) = padded_range(runs.iter().flat_map(|r| r.1.kinetic.iter().copied()));
            let mut chart = ChartBuilder::on(&root)
                .caption(title, ("sans-serif", 20))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(90)
                .build_cartesian_2d(t0..t1, y0..y1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("t [s]")
                .y_desc("kinetic energy [J]")
                .x_label_formatter(&axis_label)
                .y_label_formatter(&axis_label)
                .draw()
                .map_err(err)?;
            for (i, (label, c)) in runs.iter().enumerate() {
                let color = series_color(i);
                chart
                    .draw_series(LineSeries::new(
                        c.t.iter().copied().zip(c.kinetic.iter().copied()),
                        color.stroke_width(2),
                    ))
                    .map_err(err)?
                    .label(*label)
                    .legend(legend_line(color));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory (`.<name>.<pid>.tmp`), flushed to disk, then renamed over
/// `path`. On failure the temporary file is removed.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), AnalysisError> {
    let name = path
        .file_name()
        .ok_or_else(|| AnalysisError::InvalidOption {
            name: "path",
            value: path.display().to_string(),
            expected: "a file path (with a file name)",
        })?
        .to_string_lossy()
        .into_owned();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let io = |action: String| {
        let file = path.to_path_buf();
        move |source| AnalysisError::Io {
            file,
            action,
            source,
        }
    };
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)
            .map_err(io(format!("creating temporary file {}", tmp.display())))?;
        f.write_all(bytes)
            .map_err(io(format!("writing temporary file {}", tmp.display())))?;
        f.sync_all()
            .map_err(io(format!("flushing temporary file {}", tmp.display())))?;
        drop(f);
        std::fs::rename(&tmp, path).map_err(io(format!(
            "renaming temporary file {} over it",
            tmp.display()
        )))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
