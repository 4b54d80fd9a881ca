//! Run-time compilation of the kernel sources with NVRTC.
//!
//! `libnvrtc` is loaded dynamically (cudarc `dynamic-loading`, CUDA 13 API)
//! the first time it is needed; [`library_present`] checks for it first so a
//! missing library is an error value, never a panic. NVRTC needs no GPU and
//! no driver. In CI it comes from the PyPI wheel `nvidia-cuda-nvrtc`
//! (`.ci/run` puts its `lib/` folder on `LD_LIBRARY_PATH`).

use crate::kernels::{KernelSource, expand};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};
use thiserror::Error;

/// The virtual architecture the kernels are compiled for by default
/// (Ampere; `atomicAdd` on doubles needs 6.0 or newer).
pub const DEFAULT_ARCH: &str = "compute_80";

/// Why NVRTC could not compile a kernel source.
#[derive(Debug, Error)]
pub enum NvrtcError {
    /// No `libnvrtc` shared library was found by the dynamic loader.
    #[error(
        "libnvrtc not found (searched libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12, ...); install \
         the `nvidia-cuda-nvrtc` wheel or a CUDA toolkit and put its lib/ folder on \
         LD_LIBRARY_PATH"
    )]
    LibraryMissing,
    /// The library was found but a call into it panicked (e.g. a symbol of
    /// the CUDA 13 API is missing from an older library).
    #[error("libnvrtc is present but unusable: {0}")]
    LibraryUnusable(String),
    /// Compilation failed; `log` is NVRTC's program log.
    #[error("NVRTC failed to compile {source_name} for {arch}: {message}\n{log}")]
    Compile {
        /// Kernel file name.
        source_name: String,
        /// Target architecture.
        arch: String,
        /// NVRTC's error code.
        message: String,
        /// The program log.
        log: String,
    },
}

/// Whether the dynamic loader finds `libnvrtc` (no call into it is made).
pub fn library_present() -> bool {
    // SAFETY: only tries to open the library by its candidate names.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// NVRTC's `(major, minor)` version.
///
/// # Errors
/// [`NvrtcError::LibraryMissing`] without the library,
/// [`NvrtcError::LibraryUnusable`] if the call fails.
pub fn version() -> Result<(i32, i32), NvrtcError> {
    if !library_present() {
        return Err(NvrtcError::LibraryMissing);
    }
    std::panic::catch_unwind(|| {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: valid out-pointers; the library is present.
        let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
        (status, major, minor)
    })
    .map_err(|_| NvrtcError::LibraryUnusable("nvrtcVersion panicked".into()))
    .and_then(|(status, major, minor)| {
        if status == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
            Ok((major, minor))
        } else {
            Err(NvrtcError::LibraryUnusable(format!(
                "nvrtcVersion returned {status:?}"
            )))
        }
    })
}

/// Compiles one kernel source (its local includes expanded, see
/// [`expand`]) to PTX for `arch` (e.g. [`DEFAULT_ARCH`] or
/// `"compute_90"`), in IEEE double precision (no fast math, no FMA
/// contraction, so device results stay close to the host parity tests).
///
/// # Errors
/// [`NvrtcError::LibraryMissing`] without `libnvrtc`;
/// [`NvrtcError::Compile`] with NVRTC's log when the source does not compile.
pub fn compile(source: &KernelSource, arch: &'static str) -> Result<Ptx, NvrtcError> {
    if !library_present() {
        return Err(NvrtcError::LibraryMissing);
    }
    let program = expand(source.text);
    let opts = CompileOptions {
        arch: Some(arch),
        name: Some(source.name.to_string()),
        fmad: Some(false),
        prec_div: Some(true),
        prec_sqrt: Some(true),
        ftz: Some(false),
        options: vec!["--std=c++17".into()],
        ..Default::default()
    };
    let result =
        std::panic::catch_unwind(move || cudarc::nvrtc::compile_ptx_with_opts(program, opts))
            .map_err(|_| NvrtcError::LibraryUnusable("NVRTC call panicked".into()))?;
    result.map_err(|e| match e {
        CompileError::CompileError { nvrtc, log, .. } => NvrtcError::Compile {
            source_name: source.name.into(),
            arch: arch.into(),
            message: format!("{nvrtc:?}"),
            log: log.to_string_lossy().into_owned(),
        },
        other => NvrtcError::Compile {
            source_name: source.name.into(),
            arch: arch.into(),
            message: format!("{other:?}"),
            log: String::new(),
        },
    })
}
