//! The damping-ratio fit recovers ζ and ω of synthetic damped oscillators
//! written to and read back from energy.csv.
//!
//! Tolerances come from the accuracy analysis in `weft_analysis::damping`:
//! with η = ω_d Δt (phase per frame), N peaks spanning a time T, each refined
//! log peak is off by at most about η⁴ and each peak time by η³/ω_d, so
//! |Δζ| ≤ 1.5 e / (ω T) and |Δω/ω| ≤ 3 δ / (π (N-1)) with e = η⁴, δ = η³
//! (noise adds e += 5ν/p_min and δ += e/(2η) for additive noise of standard
//! deviation ν and smallest peak used p_min).

mod common;

use common::{Normal, Oscillator};
use weft_analysis::{
    AnalysisError, DampingFitOptions, fit_damping, fit_damping_columns, format_energy_csv,
    read_energy_csv,
};

const DT: f64 = 1.0 / 64.0;

/// Writes the columns to energy.csv in a temp dir and reads them back.
fn via_csv(c: &weft_analysis::EnergyColumns) -> weft_analysis::EnergyColumns {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("energy.csv");
    std::fs::write(&path, format_energy_csv(c).unwrap()).unwrap();
    read_energy_csv(&path).unwrap()
}

struct Bounds {
    zeta: f64,
    omega_rel: f64,
    time: f64,
}

fn bounds(osc: &Oscillator, fit: &weft_analysis::DampingFit, extra_log_err: f64) -> Bounds {
    let eta = osc.omega_d() * DT;
    let e = eta.powi(4) + extra_log_err;
    let delta = eta.powi(3) + extra_log_err / (2.0 * eta);
    let span = fit.peak_times.last().unwrap() - fit.peak_times[0];
    let n = fit.peaks_used as f64;
    Bounds {
        zeta: 1.5 * e / (osc.omega * span),
        omega_rel: 3.0 * delta / (std::f64::consts::PI * (n - 1.0)),
        time: delta / osc.omega_d(),
    }
}

fn check_noise_free(zeta: f64, duration: f64) {
    let osc = Oscillator::new(zeta);
    let n = (duration / DT) as usize + 1;
    let cols = via_csv(&osc.columns(DT, n, |_| 0.0));
    let fit = fit_damping_columns(&cols, &DampingFitOptions::default()).unwrap();
    let b = bounds(&osc, &fit, 0.0);
    let t_end = cols.t[cols.len() - 1];
    // Every true peak above the floor and one frame inside the data is found.
    // (The documented rule: above the floor, and the sampled KE falls below
    // half the peak on both sides within the data.)
    let floor = 1e-6 * cols.kinetic.iter().cloned().fold(0.0, f64::max);
    let half = std::f64::consts::PI / osc.omega_d();
    let ke = |t: f64| 0.5 * osc.mass * osc.state(t).1.powi(2);
    let drops = |lo: f64, hi: f64, p: f64| {
        cols.t
            .iter()
            .zip(&cols.kinetic)
            .any(|(&t, &k)| t > lo && t < hi && k <= 0.5 * p)
    };
    let expected: Vec<f64> = osc
        .peak_times(DT, t_end - DT)
        .into_iter()
        .filter(|&t| {
            let p = ke(t);
            p > 1.01 * floor && drops(t - half, t, p) && drops(t, t + half, p)
        })
        .collect();
    assert_eq!(
        fit.peaks_used,
        expected.len(),
        "zeta {zeta}: peaks {:?}",
        fit.peak_times
    );
    for (got, want) in fit.peak_times.iter().zip(&expected) {
        assert!(
            (got - want).abs() <= b.time,
            "zeta {zeta}: peak at {got}, expected {want} ± {}",
            b.time
        );
    }
    let dz = (fit.zeta - zeta).abs();
    let dw = (fit.omega / osc.omega - 1.0).abs();
    eprintln!(
        "zeta {zeta}: fit {} (err {dz:.2e} <= {:.2e}), omega err {dw:.2e} <= {:.2e}, peaks {}, rms {:.1e}",
        fit.zeta, b.zeta, b.omega_rel, fit.peaks_used, fit.rms_log_residual
    );
    assert!(dz <= b.zeta, "zeta {zeta}: |Δζ| = {dz:e} > {:e}", b.zeta);
    assert!(
        dw <= b.omega_rel,
        "zeta {zeta}: |Δω/ω| = {dw:e} > {:e}",
        b.omega_rel
    );
    assert!((fit.omega_d / osc.omega_d() - 1.0).abs() <= b.omega_rel);
    assert!((fit.decay_rate - osc.sigma()).abs() <= b.zeta * osc.omega * 1.01);
    // Noise-free: peaks lie on the envelope to the interpolation accuracy η⁴.
    let eta = osc.omega_d() * DT;
    assert!(
        fit.rms_log_residual <= eta.powi(4),
        "rms {}",
        fit.rms_log_residual
    );
    assert!(fit.r_squared.unwrap() > 1.0 - 1e-6);
    assert!(fit.zeta_std_err <= b.zeta);
}

#[test]
fn recovers_zeta_0_01() {
    check_noise_free(0.01, 12.0);
}

#[test]
fn recovers_zeta_0_05() {
    check_noise_free(0.05, 6.0);
}

#[test]
fn recovers_zeta_0_2() {
    check_noise_free(0.2, 3.0);
}

#[test]
fn undamped_gives_zeta_near_zero() {
    let osc = Oscillator::new(0.0);
    let cols = via_csv(&osc.columns(DT, (10.0 / DT) as usize + 1, |_| 0.0));
    let fit = fit_damping_columns(&cols, &DampingFitOptions::default()).unwrap();
    let b = bounds(&osc, &fit, 0.0);
    eprintln!("undamped: zeta {:e} (bound {:e})", fit.zeta, b.zeta);
    assert!(
        fit.zeta.abs() < b.zeta,
        "|ζ| = {:e} >= {:e}",
        fit.zeta.abs(),
        b.zeta
    );
    assert!((fit.omega / osc.omega - 1.0).abs() <= b.omega_rel);
    assert!(fit.peaks_used >= 28);
}

fn check_noisy(zeta: f64, duration: f64, seed: u64) {
    let osc = Oscillator::new(zeta);
    let n = (duration / DT) as usize + 1;
    let clean = osc.columns(DT, n, |_| 0.0);
    let ke_max = clean.kinetic.iter().cloned().fold(0.0, f64::max);
    let nu = 1e-5 * ke_max;
    let mut rng = Normal::new(seed);
    let noise: Vec<f64> = (0..n).map(|_| nu * rng.sample()).collect();
    let cols = via_csv(&osc.columns(DT, n, |i| noise[i]));
    let options = DampingFitOptions {
        peak_floor: 1e-3,
        ..DampingFitOptions::default()
    };
    let fit = fit_damping_columns(&cols, &options).unwrap();
    let p_min = fit
        .peak_values
        .iter()
        .cloned()
        .fold(f64::INFINITY, f64::min);
    let b = bounds(&osc, &fit, 5.0 * nu / p_min);
    let dz = (fit.zeta - zeta).abs();
    let dw = (fit.omega / osc.omega - 1.0).abs();
    eprintln!(
        "noisy zeta {zeta}: fit {} (err {dz:.2e} <= {:.2e}), omega err {dw:.2e} <= {:.2e}, peaks {}, rms {:.1e}, stderr {:.1e}",
        fit.zeta, b.zeta, b.omega_rel, fit.peaks_used, fit.rms_log_residual, fit.zeta_std_err
    );
    // Only true peaks: all lie within the time bound of an exact peak.
    let exact = osc.peak_times(0.0, duration);
    for t in &fit.peak_times {
        let nearest = exact
            .iter()
            .map(|e| (e - t).abs())
            .fold(f64::INFINITY, f64::min);
        assert!(
            nearest <= b.time,
            "peak at {t} is {nearest} from any true peak"
        );
    }
    assert!(fit.peaks_used >= 4);
    assert!(dz <= b.zeta, "zeta {zeta}: |Δζ| = {dz:e} > {:e}", b.zeta);
    assert!(
        dw <= b.omega_rel,
        "zeta {zeta}: |Δω/ω| = {dw:e} > {:e}",
        b.omega_rel
    );
    // The noise shows in the goodness of fit but stays below its bound.
    assert!(fit.rms_log_residual <= 5.0 * nu / p_min + eta4(&osc));
}

fn eta4(osc: &Oscillator) -> f64 {
    (osc.omega_d() * DT).powi(4)
}

#[test]
fn recovers_zeta_with_small_noise() {
    check_noisy(0.01, 12.0, 1);
    check_noisy(0.05, 6.0, 2);
    check_noisy(0.2, 3.0, 3);
}

#[test]
fn noise_picked_up_below_the_floor_shows_in_the_goodness_of_fit() {
    // Same noisy ζ = 0.2 data as above, but with the default floor (1e-6),
    // far below the noise (1e-5 of the largest KE): the decayed tail's noise
    // wiggles pass as peaks, lie far off the envelope and off the peak grid,
    // and the goodness-of-fit numbers say so, unlike with a floor above the
    // noise.
    let osc = Oscillator::new(0.2);
    let n = (3.0 / DT) as usize + 1;
    let ke_max = osc
        .columns(DT, n, |_| 0.0)
        .kinetic
        .iter()
        .cloned()
        .fold(0.0, f64::max);
    let mut rng = Normal::new(3);
    let noise: Vec<f64> = (0..n).map(|_| 1e-5 * ke_max * rng.sample()).collect();
    let cols = osc.columns(DT, n, |i| noise[i]);
    let loose = fit_damping_columns(&cols, &DampingFitOptions::default()).unwrap();
    let floored = fit_damping_columns(
        &cols,
        &DampingFitOptions {
            peak_floor: 1e-3,
            ..DampingFitOptions::default()
        },
    )
    .unwrap();
    assert!(loose.peaks_used > floored.peaks_used);
    assert!(loose.rms_log_residual > 0.1, "{loose:?}");
    assert!(loose.rms_log_residual > 20.0 * floored.rms_log_residual);
    assert!(loose.rms_time_residual > 20.0 * floored.rms_time_residual);
}

#[test]
fn too_few_peaks_is_an_error_naming_counts() {
    let osc = Oscillator::new(0.05);
    // 1.2 periods: two KE peaks.
    let duration = 1.2 * 2.0 * std::f64::consts::PI / osc.omega_d();
    let n = (duration / DT) as usize + 1;
    let cols = osc.columns(DT, n, |_| 0.0);
    let t_end = cols.t[n - 1];
    let expected = osc.peak_times(DT, t_end - DT).len();
    assert!(expected < 4);
    let e = fit_damping_columns(&cols, &DampingFitOptions::default()).unwrap_err();
    match &e {
        AnalysisError::TooFewPeaks { found, needed, .. } => {
            assert_eq!(*found, expected);
            assert_eq!(*needed, 4);
        }
        other => panic!("expected TooFewPeaks, got {other:?}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("found {expected} kinetic-energy peak")),
        "{msg}"
    );
    assert!(msg.contains("need at least 4"), "{msg}");
    // Fewer than 3 peaks is never accepted: the fit needs a residual.
    let opts = DampingFitOptions {
        min_peaks: 2,
        ..DampingFitOptions::default()
    };
    assert!(matches!(
        fit_damping_columns(&cols, &opts),
        Err(AnalysisError::InvalidOption {
            name: "min_peaks",
            ..
        })
    ));
}

#[test]
fn overdamped_has_no_peaks() {
    // x = (1 + ω t) e^{-ω t} (critically damped): KE has one maximum then decays.
    let omega = 5.0;
    let t: Vec<f64> = (0..400).map(|i| i as f64 * DT).collect();
    let ke: Vec<f64> = t
        .iter()
        .map(|&t| {
            let v = -omega * omega * t * (-omega * t).exp();
            0.5 * v * v
        })
        .collect();
    let e = fit_damping(&t, &ke, &DampingFitOptions::default()).unwrap_err();
    assert!(
        matches!(
            e,
            AnalysisError::TooFewPeaks {
                found: 1,
                needed: 4,
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn time_window_restricts_the_fit() {
    // A window over the same oscillator gives the same ζ from fewer peaks,
    // all inside the window.
    let osc = Oscillator::new(0.05);
    let cols = osc.columns(DT, (6.0 / DT) as usize + 1, |_| 0.0);
    let all = fit_damping_columns(&cols, &DampingFitOptions::default()).unwrap();
    let opts = DampingFitOptions {
        t_start: Some(2.0),
        t_end: Some(4.0),
        ..DampingFitOptions::default()
    };
    let win = fit_damping_columns(&cols, &opts).unwrap();
    assert!(win.peaks_used < all.peaks_used);
    assert!(win.peak_times.iter().all(|&t| (2.0..=4.0).contains(&t)));
    let b = bounds(&osc, &win, 0.0);
    assert!((win.zeta - 0.05).abs() <= b.zeta);
}

#[test]
fn rejects_bad_input() {
    let o = DampingFitOptions::default();
    assert!(matches!(
        fit_damping(&[0.0, 1.0], &[1.0], &o),
        Err(AnalysisError::Columns(_))
    ));
    assert!(matches!(
        fit_damping(&[], &[], &o),
        Err(AnalysisError::Columns(_))
    ));
    assert!(matches!(
        fit_damping(&[0.0, 1.0, 1.0], &[1.0, 2.0, 3.0], &o),
        Err(AnalysisError::Columns(_))
    ));
    assert!(matches!(
        fit_damping(&[0.0, 1.0, 2.0], &[1.0, f64::NAN, 3.0], &o),
        Err(AnalysisError::Columns(_))
    ));
    for bad in [
        DampingFitOptions {
            peak_floor: 1.0,
            ..o.clone()
        },
        DampingFitOptions {
            peak_floor: -0.1,
            ..o.clone()
        },
        DampingFitOptions {
            min_prominence: 0.0,
            ..o.clone()
        },
        DampingFitOptions {
            t_start: Some(f64::NAN),
            ..o.clone()
        },
    ] {
        assert!(matches!(
            fit_damping(&[0.0, 1.0, 2.0], &[1.0, 2.0, 3.0], &bad),
            Err(AnalysisError::InvalidOption { .. })
        ));
    }
}
