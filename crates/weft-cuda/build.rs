//! Compiles the host shim over the kernel headers (`kernels/*.cuh`) and the
//! kernels themselves (`kernels/*.cu`, executed serially) with the system
//! C++ compiler, CUDA qualifiers defined away, for the host parity and
//! emulation tests. A missing or failing compiler does not fail the build: the cfg
//! `weft_host_shim` is then not set and the parity tests skip with a message.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(weft_host_shim)");
    for f in [
        "host_shim.cpp",
        "emulate_assembly.cpp",
        "emulate_pcg.cpp",
        "host_cuda_emulation.hpp",
    ] {
        println!("cargo::rerun-if-changed=csrc/{f}");
    }
    for h in [
        "weft_math.cuh",
        "weft_elements.cuh",
        "weft_collide.cuh",
        "weft_reduce.cuh",
        "weft_assembly.cu",
        "weft_pcg.cu",
    ] {
        println!("cargo::rerun-if-changed=../../kernels/{h}");
    }
    let result = cc::Build::new()
        .cpp(true)
        .file("csrc/host_shim.cpp")
        // The .cu kernels themselves, run serially on the host (one thread
        // per block) for the emulation tests against the CPU assembler.
        .file("csrc/emulate_assembly.cpp")
        .file("csrc/emulate_pcg.cpp")
        .std("c++17")
        // No fused multiply-add contraction: the Rust reference has none.
        .flag_if_supported("-ffp-contract=off")
        .opt_level(2)
        .warnings(true)
        .try_compile("weft_host_shim");
    match result {
        Ok(()) => println!("cargo::rustc-cfg=weft_host_shim"),
        Err(e) => println!(
            "cargo::warning=weft-cuda: host shim over kernels/*.cuh not built ({e}); the host \
             parity tests will skip"
        ),
    }
}
