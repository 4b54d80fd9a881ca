//! Damping-ratio fit over a kinetic-energy curve \[SBO17 eq. 24\].
//!
//! # Model
//!
//! The fit assumes the motion in the window is dominated by one linear,
//! viscously damped mode about a state at rest:
//! `x(t) = A e^{-σt} sin(ω_d t + φ₀)`, with natural angular frequency `ω`,
//! damping ratio `ζ`, decay rate `σ = ζω` and damped frequency
//! `ω_d = ω √(1 - ζ²)`. Its velocity is `ẋ = A ω e^{-σt} cos(ω_d t + φ)`
//! (`φ` a constant phase), so the kinetic energy is
//!
//! ```text
//! KE(t) = E₀ e^{-2σt} cos²(ω_d t + φ)
//! ```
//!
//! whose local maxima (where `tan(ω_d t + φ) = -σ/ω_d`) are *exactly* equally
//! spaced by `π/ω_d` (half a damped period) and whose values decay *exactly*
//! like `e^{-2σt}`. Hence
//!
//! - `ω_d = π / P`, with `P` the least-squares slope of the peak times against
//!   their peak index;
//! - `-2σ = s`, with `s` the least-squares slope of `ln(peak KE)` against the
//!   peak time;
//! - `ω = √(ω_d² + σ²)` and `ζ = σ / ω`.
//!
//! This is the classical logarithmic-decrement damping ratio: with
//! `δ = σ · 2π/ω_d` the decrement of the displacement amplitude per damped
//! period, `ζ = δ / √(4π² + δ²)`, exact for a linear viscous oscillator at any
//! `ζ < 1` (no small-damping approximation).
//!
//! Source: \[SBO17 eq. 24\] measures the damping of their calibration and test
//! scenes by a damping ratio of the kinetic-energy curve. The paper's text was
//! not available when this was written, so the definition used is the
//! standard viscous damping ratio `ζ = c / (2√(k m))` of a linear oscillator,
//! measured by logarithmic decrement as above.
//!
//! # Peak detection
//!
//! In the window `[t_start, t_end]` a sample is a peak candidate if it is a
//! strict local maximum (a run of equal values counts once, at its middle).
//! Candidates are kept if
//!
//! - their value is at least `peak_floor` times the largest kinetic energy in
//!   the window (noise floor; set it well above the noise of the data), and
//! - their prominence (height above the higher of the two lowest points
//!   between the candidate and the nearest higher sample on either side, or
//!   the window edge) is at least `min_prominence` times their value. True
//!   KE peaks of a single mode have prominence ≈ their value because KE falls
//!   to ≈ 0 between them; wiggles from noise or a weak second mode do not.
//!
//! A kept peak is refined by the parabola through `ln KE` at the sample and its
//! two neighbours (non-uniform times allowed); the vertex gives the peak time
//! and value. Peaks are numbered by rounding their time offset from the first
//! one to a multiple of the median spacing, so a peak dropped by the filters
//! does not shift the numbering.
//!
//! # Accuracy
//!
//! With `η = ω_d Δt` the damped phase advanced per frame, `ln cos²` differs
//! from its parabola by `θ⁴/3 + …`, so each refined peak value has an error
//! of order `η⁴` and each peak time of order `η³/ω_d`. A least-squares slope
//! over peaks spanning a time `T` turns per-peak errors bounded by `e` into a
//! slope error of at most about `3e/T`, hence `|Δζ| ≲ 1.5 η⁴ / (ω T)` and
//! `|Δω/ω| ≲ 3 η³ / (π (N-1))` for `N` peaks. Twenty frames per oscillation
//! period (`η ≈ 0.31`) give `|Δζ|` below `10⁻³` once `ωT > 15`. Additive
//! noise of standard deviation `ν` adds errors of order `ν / p` to the log
//! of a peak of value `p`.
//!
//! Things that bias the result: a constant kinetic-energy offset (rigid
//! drift, steady rotation), several modes with comparable energy,
//! amplitude-dependent (nonlinear) damping, and an initial transient; use the
//! time window to fit only the clean part of the curve. A negative `ζ` means
//! the peaks grow. An overdamped motion (`ζ ≥ 1`) has no peaks and gives
//! [`AnalysisError::TooFewPeaks`].

use crate::{AnalysisError, EnergyColumns};

/// Options of [`fit_damping`].
#[derive(Debug, Clone, PartialEq)]
pub struct DampingFitOptions {
    /// Fit only frames with `t ≥ t_start` \[s\] (`None`: from the first frame).
    pub t_start: Option<f64>,
    /// Fit only frames with `t ≤ t_end` \[s\] (`None`: to the last frame).
    pub t_end: Option<f64>,
    /// Fewest peaks accepted, at least 3 (a line through the log peaks needs
    /// a residual to report a goodness of fit). Default 4.
    pub min_peaks: usize,
    /// Peaks below `peak_floor × (largest KE in the window)` are ignored;
    /// in `[0, 1)`. Default `1e-6`.
    pub peak_floor: f64,
    /// Least prominence of a peak as a fraction of its value, in `(0, 1]`.
    /// Default `0.5`.
    pub min_prominence: f64,
}

impl Default for DampingFitOptions {
    fn default() -> Self {
        Self {
            t_start: None,
            t_end: None,
            min_peaks: 4,
            peak_floor: 1e-6,
            min_prominence: 0.5,
        }
    }
}

/// Result of [`fit_damping`]. Angular frequencies in rad/s, times in s,
/// energies in J.
#[derive(Debug, Clone, PartialEq)]
pub struct DampingFit {
    /// Damping ratio `ζ = σ/ω` (dimensionless; negative if the peaks grow).
    pub zeta: f64,
    /// Standard error of `ζ` from the scatter of `ln(peak KE)` about the fitted
    /// line (first-order propagation of the slope's standard error).
    pub zeta_std_err: f64,
    /// Natural (undamped) angular frequency `ω = √(ω_d² + σ²)` \[rad/s\].
    pub omega: f64,
    /// Damped angular frequency `ω_d = π / P` \[rad/s\].
    pub omega_d: f64,
    /// Amplitude decay rate `σ = ζω` \[1/s\] (the kinetic energy envelope
    /// decays like `e^{-2σt}`).
    pub decay_rate: f64,
    /// Number of kinetic-energy peaks used.
    pub peaks_used: usize,
    /// Refined times of the peaks used \[s\].
    pub peak_times: Vec<f64>,
    /// Refined kinetic energies of the peaks used \[J\].
    pub peak_values: Vec<f64>,
    /// Root-mean-square residual of `ln(peak KE)` about the fitted line: the
    /// typical relative deviation of a peak from the exponential envelope
    /// (0.01 ≈ 1 %). The primary goodness-of-fit number.
    pub rms_log_residual: f64,
    /// Coefficient of determination of the `ln(peak KE)` fit; `None` when the
    /// log peaks have no variance (then R² is undefined). Close to 1 for a
    /// clean decay; meaningless when the decay is negligible (`ζ ≈ 0`), where
    /// [`rms_log_residual`](Self::rms_log_residual) is the number to read.
    pub r_squared: Option<f64>,
    /// Root-mean-square residual of the peak times about `t₀ + kP` \[s\].
    pub rms_time_residual: f64,
}

fn check_options(o: &DampingFitOptions) -> Result<(), AnalysisError> {
    if o.min_peaks < 3 {
        return Err(AnalysisError::InvalidOption {
            name: "min_peaks",
            value: o.min_peaks.to_string(),
            expected: "an integer >= 3",
        });
    }
    if !(o.peak_floor >= 0.0 && o.peak_floor < 1.0) {
        return Err(AnalysisError::InvalidOption {
            name: "peak_floor",
            value: o.peak_floor.to_string(),
            expected: "a number in [0, 1)",
        });
    }
    if !(o.min_prominence > 0.0 && o.min_prominence <= 1.0) {
        return Err(AnalysisError::InvalidOption {
            name: "min_prominence",
            value: o.min_prominence.to_string(),
            expected: "a number in (0, 1]",
        });
    }
    for (name, v) in [("t_start", o.t_start), ("t_end", o.t_end)] {
        if let Some(v) = v
            && !v.is_finite()
        {
            return Err(AnalysisError::InvalidOption {
                name,
                value: v.to_string(),
                expected: "a finite time in seconds",
            });
        }
    }
    Ok(())
}

/// Least-squares line `y = a + b x`; returns `(a, b, residuals)`.
/// Needs at least two distinct `x`.
fn line_fit(x: &[f64], y: &[f64]) -> (f64, f64, Vec<f64>) {
    let n = x.len() as f64;
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let sxx: f64 = x.iter().map(|xi| (xi - mx) * (xi - mx)).sum();
    let sxy: f64 = x.iter().zip(y).map(|(xi, yi)| (xi - mx) * (yi - my)).sum();
    let b = sxy / sxx;
    let a = my - b * mx;
    let res = x.iter().zip(y).map(|(xi, yi)| yi - (a + b * xi)).collect();
    (a, b, res)
}

/// Fits the damping ratio and frequency of the dominant mode to a kinetic
/// energy curve; see the [module documentation](self) for the model, the
/// peak detection and the accuracy.
///
/// `t` (strictly increasing, s) and `kinetic` (J) are the frame times and
/// kinetic energies, of equal length.
///
/// # Errors
/// - [`AnalysisError::Columns`] if the slices differ in length, are empty,
///   contain non-finite values or `t` does not increase strictly;
/// - [`AnalysisError::InvalidOption`] for an option outside its range;
/// - [`AnalysisError::TooFewPeaks`] naming how many peaks were found and how
///   many are needed.
pub fn fit_damping(
    t: &[f64],
    kinetic: &[f64],
    options: &DampingFitOptions,
) -> Result<DampingFit, AnalysisError> {
    check_options(options)?;
    if t.len() != kinetic.len() {
        return Err(AnalysisError::Columns(format!(
            "t has {} entries but kinetic has {}; expected equal lengths",
            t.len(),
            kinetic.len()
        )));
    }
    if t.is_empty() {
        return Err(AnalysisError::Columns(
            "expected at least one frame, the columns are empty".into(),
        ));
    }
    for i in 0..t.len() {
        if !t[i].is_finite() || !kinetic[i].is_finite() {
            return Err(AnalysisError::Columns(format!(
                "frame {i}: expected finite t and kinetic, found t = {}, kinetic = {}",
                t[i], kinetic[i]
            )));
        }
        if i > 0 && t[i] <= t[i - 1] {
            return Err(AnalysisError::Columns(format!(
                "frame {i}: expected t to increase strictly, found t = {} after {}",
                t[i],
                t[i - 1]
            )));
        }
    }

    let t_start = options.t_start.unwrap_or(t[0]);
    let t_end = options.t_end.unwrap_or(t[t.len() - 1]);
    let too_few = |found: usize| AnalysisError::TooFewPeaks {
        found,
        needed: options.min_peaks,
        t_start,
        t_end,
        hint: "fit a longer stretch of the run, or lower peak_floor / min_prominence; \
               an overdamped motion (zeta >= 1) has no peaks",
    };
    // Window [i0, i1] (inclusive).
    let Some(i0) = t.iter().position(|&ti| ti >= t_start) else {
        return Err(too_few(0));
    };
    let Some(i1) = t.iter().rposition(|&ti| ti <= t_end) else {
        return Err(too_few(0));
    };
    if i1 < i0 + 2 {
        return Err(too_few(0));
    }
    let k = kinetic;
    let ke_max = k[i0..=i1].iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if ke_max <= 0.0 {
        return Err(too_few(0));
    }
    let floor = options.peak_floor * ke_max;

    // Candidates: strict local maxima (plateaus counted once, at the middle).
    let mut peaks: Vec<usize> = Vec::new();
    let mut i = i0 + 1;
    while i < i1 {
        if k[i] > k[i - 1] {
            let mut j = i;
            while j < i1 && k[j + 1] == k[i] {
                j += 1;
            }
            if j < i1 && k[j + 1] < k[i] {
                let m = (i + j) / 2;
                if k[m] > 0.0
                    && k[m] >= floor
                    && prominence(k, i0, i1, i, j) >= options.min_prominence * k[m]
                {
                    peaks.push(m);
                }
            }
            i = j + 1;
        } else {
            i += 1;
        }
    }
    if peaks.len() < options.min_peaks {
        return Err(too_few(peaks.len()));
    }

    // Refinement: vertex of the parabola through ln KE at m-1, m, m+1.
    let mut times = Vec::with_capacity(peaks.len());
    let mut logs = Vec::with_capacity(peaks.len());
    for &m in &peaks {
        let (tm, ym) = refine_peak(t, k, m);
        times.push(tm);
        logs.push(ym);
    }

    // Peak numbering from the median spacing.
    let mut gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_by(f64::total_cmp);
    let median_gap = gaps[gaps.len() / 2];
    if median_gap.is_nan() || median_gap <= 0.0 {
        // Only possible for peaks one frame apart: no resolvable oscillation.
        return Err(too_few(1));
    }
    let index: Vec<f64> = times
        .iter()
        .map(|tk| ((tk - times[0]) / median_gap).round())
        .collect();
    let (_, half_period, time_res) = line_fit(&index, &times);
    let omega_d = std::f64::consts::PI / half_period;

    let (_, slope, log_res) = line_fit(&times, &logs);
    let n = times.len() as f64;
    let ssr: f64 = log_res.iter().map(|r| r * r).sum();
    let mean_log = logs.iter().sum::<f64>() / n;
    let sst: f64 = logs.iter().map(|y| (y - mean_log) * (y - mean_log)).sum();
    let mean_t = times.iter().sum::<f64>() / n;
    let stt: f64 = times.iter().map(|x| (x - mean_t) * (x - mean_t)).sum();
    let slope_std_err = (ssr / (n - 2.0) / stt).sqrt();

    let sigma = -0.5 * slope;
    let omega = omega_d.hypot(sigma);
    let zeta = sigma / omega;
    // dζ/dσ = ω_d² / ω³.
    let zeta_std_err = omega_d * omega_d / omega.powi(3) * 0.5 * slope_std_err;

    Ok(DampingFit {
        zeta,
        zeta_std_err,
        omega,
        omega_d,
        decay_rate: sigma,
        peaks_used: times.len(),
        peak_values: logs.iter().map(|y| y.exp()).collect(),
        peak_times: times,
        rms_log_residual: (ssr / n).sqrt(),
        r_squared: (sst > 0.0).then(|| 1.0 - ssr / sst),
        rms_time_residual: (time_res.iter().map(|r| r * r).sum::<f64>() / n).sqrt(),
    })
}

/// [`fit_damping`] on the `t` and `kinetic` columns of a run.
///
/// # Errors
/// As [`fit_damping`].
pub fn fit_damping_columns(
    columns: &EnergyColumns,
    options: &DampingFitOptions,
) -> Result<DampingFit, AnalysisError> {
    fit_damping(&columns.t, &columns.kinetic, options)
}

/// Prominence of the plateau `k[i..=j]` (all equal) inside the window
/// `[i0, i1]`: its value minus the higher of the minima on each side, each
/// taken up to the nearest strictly higher sample or the window edge.
fn prominence(k: &[f64], i0: usize, i1: usize, i: usize, j: usize) -> f64 {
    let v = k[i];
    let mut left_min = v;
    for l in (i0..i).rev() {
        if k[l] > v {
            break;
        }
        left_min = left_min.min(k[l]);
    }
    let mut right_min = v;
    for r in j + 1..=i1 {
        if k[r] > v {
            break;
        }
        right_min = right_min.min(k[r]);
    }
    v - left_min.max(right_min)
}

/// Time and `ln KE` of the vertex of the parabola through `(t, ln k)` at
/// `m-1, m, m+1`; falls back to the sample itself where that parabola does
/// not open downward or a neighbour is not positive. The vertex time is
/// clamped to `[t[m-1], t[m+1]]`.
fn refine_peak(t: &[f64], k: &[f64], m: usize) -> (f64, f64) {
    let (ta, tb, tc) = (t[m - 1], t[m], t[m + 1]);
    if k[m - 1] <= 0.0 || k[m + 1] <= 0.0 {
        return (tb, k[m].ln());
    }
    let (ya, yb, yc) = (k[m - 1].ln(), k[m].ln(), k[m + 1].ln());
    let d1 = (yb - ya) / (tb - ta);
    let d2 = (yc - yb) / (tc - tb);
    let c = (d2 - d1) / (tc - ta);
    if c >= 0.0 {
        return (tb, yb);
    }
    // Newton form y = ya + d1 (t - ta) + c (t - ta)(t - tb).
    let ts = (0.5 * (ta + tb) - d1 / (2.0 * c)).clamp(ta, tc);
    let ys = ya + d1 * (ts - ta) + c * (ts - ta) * (ts - tb);
    (ts, ys)
}
