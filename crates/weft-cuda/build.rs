//! Compiles the host shim over the kernel headers (`kernels/*.cuh`) with the
//! system C++ compiler, CUDA qualifiers defined away, for the host parity
//! tests. A missing or failing compiler does not fail the build: the cfg
//! `weft_host_shim` is then not set and the parity tests skip with a message.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(weft_host_shim)");
    println!("cargo::rerun-if-changed=csrc/host_shim.cpp");
    for h in ["weft_math.cuh", "weft_elements.cuh", "weft_collide.cuh"] {
        println!("cargo::rerun-if-changed=../../kernels/{h}");
    }
    let result = cc::Build::new()
        .cpp(true)
        .file("csrc/host_shim.cpp")
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
