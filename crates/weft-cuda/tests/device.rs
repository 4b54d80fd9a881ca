//! Device detection and the doctor report. Without a driver (CI, this
//! machine) detection must return `NoDevice::NoDriver` without any panic;
//! with a device present its fields are checked and printed.

use weft_cuda::device::driver_present;
use weft_cuda::{Device, NoDevice, doctor, nvrtc};

#[test]
fn detection_reports_the_missing_driver_or_a_sane_device() {
    match Device::detect() {
        Ok(d) => {
            eprintln!("CUDA device found: {d:?}");
            assert!(driver_present());
            assert!(d.device_count >= 1);
            assert!(d.compute_capability.0 >= 5, "{d:?}");
            assert!(d.total_memory > 1 << 30, "{d:?}");
            assert!(d.driver_version >= 11000, "{d:?}");
        }
        Err(e) => {
            eprintln!("SKIPPED device checks: no CUDA device ({e})");
            if !driver_present() {
                assert_eq!(e, NoDevice::NoDriver);
                assert!(e.to_string().contains("libcuda"), "{e}");
            } else {
                assert_ne!(e, NoDevice::NoDriver);
            }
        }
    }
}

#[test]
fn doctor_names_driver_and_nvrtc_state() {
    let report = doctor();
    eprintln!("{report}");
    if driver_present() {
        assert!(report.contains("driver"), "{report}");
    } else {
        assert!(report.contains("no CUDA driver"), "{report}");
        assert!(report.contains("CPU backend"), "{report}");
    }
    match nvrtc::version() {
        Ok((major, minor)) => {
            assert!(
                report.contains(&format!("nvrtc: version {major}.{minor}")),
                "{report}"
            );
            assert!(!report.contains("FAILS"), "{report}");
            assert_eq!(report.matches(" compiles for ").count(), 2, "{report}");
        }
        Err(_) => assert!(
            report.contains("nvrtc: none (libnvrtc not found"),
            "{report}"
        ),
    }
}
