//! Driver and device detection, without panics and before any CUDA call
//! that could fail hard.
//!
//! [`Device::detect`] first asks the dynamic loader whether `libcuda` exists
//! at all (no symbol is called when it does not), then initialises the
//! driver and picks device 0. Every failure is a [`NoDevice`] value with a
//! reason the caller can print before falling back to the CPU backend.

use thiserror::Error;

/// Why no CUDA device can be used.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum NoDevice {
    /// The dynamic loader finds no `libcuda` (no NVIDIA driver installed).
    #[error("no CUDA driver: libcuda.so was not found by the dynamic loader")]
    NoDriver,
    /// The driver library exists but `cuInit` (or a later query) failed, e.g.
    /// no GPU visible, driver/kernel module mismatch, or a driver older than
    /// the CUDA 13 API this crate is built against.
    #[error("CUDA driver present but unusable: {0}")]
    DriverError(String),
    /// The driver works but reports no device.
    #[error("CUDA driver initialised but it reports no device")]
    NoDeviceFound,
}

/// A detected CUDA device (ordinal 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Device ordinal.
    pub ordinal: i32,
    /// Device name as the driver reports it.
    pub name: String,
    /// Compute capability `(major, minor)`.
    pub compute_capability: (i32, i32),
    /// Total device memory (bytes).
    pub total_memory: usize,
    /// Driver API version, e.g. 13000 for CUDA 13.0.
    pub driver_version: i32,
    /// Number of devices the driver reports.
    pub device_count: i32,
}

/// Whether the dynamic loader finds `libcuda` (no call into it is made).
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the library by its candidate names.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

impl Device {
    /// Detects the first CUDA device.
    ///
    /// # Errors
    /// [`NoDevice::NoDriver`] when `libcuda` is absent (checked before any
    /// driver call), [`NoDevice::DriverError`] when initialisation or a
    /// query fails (or panics inside the bindings),
    /// [`NoDevice::NoDeviceFound`] when the driver reports zero devices.
    pub fn detect() -> Result<Device, NoDevice> {
        if !driver_present() {
            return Err(NoDevice::NoDriver);
        }
        std::panic::catch_unwind(query)
            .map_err(|_| NoDevice::DriverError("a CUDA driver call panicked".into()))?
    }
}

fn query() -> Result<Device, NoDevice> {
    use cudarc::driver::{result, sys};
    let err = |what: &str, e: result::DriverError| NoDevice::DriverError(format!("{what}: {e:?}"));
    result::init().map_err(|e| err("cuInit", e))?;
    let mut driver_version = 0;
    // SAFETY: valid out-pointer; the driver is initialised.
    unsafe { sys::cuDriverGetVersion(&mut driver_version) }
        .result()
        .map_err(|e| err("cuDriverGetVersion", e))?;
    let device_count = result::device::get_count().map_err(|e| err("cuDeviceGetCount", e))?;
    if device_count < 1 {
        return Err(NoDevice::NoDeviceFound);
    }
    let dev = result::device::get(0).map_err(|e| err("cuDeviceGet", e))?;
    let name = result::device::get_name(dev).map_err(|e| err("cuDeviceGetName", e))?;
    // SAFETY: `dev` is a valid device handle from cuDeviceGet.
    let (major, minor, total_memory) = unsafe {
        let major = result::device::get_attribute(
            dev,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        )
        .map_err(|e| err("cuDeviceGetAttribute", e))?;
        let minor = result::device::get_attribute(
            dev,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        )
        .map_err(|e| err("cuDeviceGetAttribute", e))?;
        let mem = result::device::total_mem(dev).map_err(|e| err("cuDeviceTotalMem", e))?;
        (major, minor, mem)
    };
    Ok(Device {
        ordinal: 0,
        name,
        compute_capability: (major, minor),
        total_memory,
        driver_version,
        device_count,
    })
}

/// A human-readable report of the CUDA environment (for `weft doctor`):
/// the driver and device found or why none, the NVRTC library and version
/// or why none, and whether the kernel sources compile with it. Never
/// panics; compiling the kernels takes a few seconds when NVRTC is present.
pub fn doctor() -> String {
    let mut out = String::new();
    match Device::detect() {
        Ok(d) => out.push_str(&format!(
            "driver: CUDA driver API {}.{} ({} device(s))\ndevice: {} (compute capability {}.{}, {:.1} GiB)\n",
            d.driver_version / 1000,
            (d.driver_version % 1000) / 10,
            d.device_count,
            d.name,
            d.compute_capability.0,
            d.compute_capability.1,
            d.total_memory as f64 / (1u64 << 30) as f64
        )),
        Err(e) => out.push_str(&format!("driver/device: none ({e}); the CPU backend will be used\n")),
    }
    match crate::nvrtc::version() {
        Ok((major, minor)) => {
            out.push_str(&format!("nvrtc: version {major}.{minor}\n"));
            for src in crate::kernels::SOURCES {
                match crate::nvrtc::compile(&src, crate::nvrtc::DEFAULT_ARCH) {
                    Ok(_) => out.push_str(&format!(
                        "kernels: {} compiles for {}\n",
                        src.name,
                        crate::nvrtc::DEFAULT_ARCH
                    )),
                    Err(e) => out.push_str(&format!("kernels: {} FAILS: {e}\n", src.name)),
                }
            }
        }
        Err(e) => out.push_str(&format!("nvrtc: none ({e})\n")),
    }
    out
}
