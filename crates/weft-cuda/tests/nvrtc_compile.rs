//! Every kernel source of `kernels/` compiles with NVRTC (no GPU and no
//! driver needed). Skips with a visible message when `libnvrtc` is not
//! found; prints NVRTC's log on failure.

use weft_cuda::kernels::SOURCES;
use weft_cuda::nvrtc;

#[test]
fn every_kernel_source_compiles_with_nvrtc() {
    if !nvrtc::library_present() {
        eprintln!(
            "SKIPPED: NVRTC compile test: libnvrtc not found (install the `nvidia-cuda-nvrtc` \
             wheel and put its lib/ folder on LD_LIBRARY_PATH)"
        );
        return;
    }
    let (major, minor) = nvrtc::version().expect("nvrtcVersion");
    eprintln!("NVRTC {major}.{minor}");
    assert!(
        major >= 12,
        "NVRTC {major}.{minor} is older than the CUDA 12/13 API used here"
    );
    for arch in ["compute_80", "compute_90"] {
        for src in SOURCES {
            match nvrtc::compile(&src, arch) {
                Ok(ptx) => {
                    let text = ptx.to_src();
                    for k in src.entry_points {
                        assert!(
                            text.contains(&format!(".entry {k}(")),
                            "{} for {arch}: entry point {k} missing from the PTX",
                            src.name
                        );
                    }
                    eprintln!(
                        "{} compiled for {arch}: {} bytes of PTX",
                        src.name,
                        text.len()
                    );
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
}

#[test]
fn a_broken_source_reports_the_nvrtc_log() {
    if !nvrtc::library_present() {
        eprintln!("SKIPPED: NVRTC error-path test: libnvrtc not found");
        return;
    }
    let bad = weft_cuda::kernels::KernelSource {
        name: "broken.cu",
        text: "extern \"C\" __global__ void k(double* x) { x[0] = undefined_name; }",
        entry_points: &["k"],
    };
    let err = nvrtc::compile(&bad, nvrtc::DEFAULT_ARCH).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("broken.cu") && msg.contains("undefined_name"),
        "{msg}"
    );
}
