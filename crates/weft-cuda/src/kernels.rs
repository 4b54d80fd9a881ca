//! The CUDA C sources of `kernels/`, embedded at compile time, and their
//! expansion into self-contained NVRTC programs.
//!
//! NVRTC compiles one string; local `#include "file.cuh"` lines are replaced
//! by the header's text (each header once, as `#pragma once` would), so the
//! program needs no include path and no CUDA headers.

/// A header of `kernels/`: `(file name, text)`.
pub const HEADERS: [(&str, &str); 4] = [
    (
        "weft_math.cuh",
        include_str!("../../../kernels/weft_math.cuh"),
    ),
    (
        "weft_elements.cuh",
        include_str!("../../../kernels/weft_elements.cuh"),
    ),
    (
        "weft_collide.cuh",
        include_str!("../../../kernels/weft_collide.cuh"),
    ),
    (
        "weft_reduce.cuh",
        include_str!("../../../kernels/weft_reduce.cuh"),
    ),
];

/// One kernel source file of `kernels/` and the `extern "C"` kernels it
/// defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSource {
    /// File name in `kernels/`.
    pub name: &'static str,
    /// Source text (with `#include`s not yet expanded).
    pub text: &'static str,
    /// The `__global__` entry points, as loaded by name from the module.
    pub entry_points: &'static [&'static str],
}

/// Element assembly kernels (`kernels/weft_assembly.cu`).
pub const ASSEMBLY: KernelSource = KernelSource {
    name: "weft_assembly.cu",
    text: include_str!("../../../kernels/weft_assembly.cu"),
    entry_points: &[
        "weft_assemble_segments",
        "weft_assemble_bending",
        "weft_assemble_shear",
        "weft_assemble_triangles",
        "weft_assemble_hinges",
        "weft_assemble_anchors",
        "weft_assemble_colliders",
        "weft_assemble_planes",
        "weft_assemble_repulsion",
        "weft_assemble_attachments",
        "weft_assemble_ties",
        "weft_assemble_point_masses",
        "weft_advance",
        "weft_max_abs",
        "weft_accept_segments",
        "weft_accept_finish",
        "weft_update_anchors",
    ],
};

/// PCG kernels (`kernels/weft_pcg.cu`).
pub const PCG: KernelSource = KernelSource {
    name: "weft_pcg.cu",
    text: include_str!("../../../kernels/weft_pcg.cu"),
    entry_points: &[
        "weft_bsr_spmv",
        "weft_bsr_spmv_dot",
        "weft_block_jacobi_setup",
        "weft_block_jacobi_apply_dot",
        "weft_block_jacobi_apply",
        "weft_dot_partial",
        "weft_sum_partials",
        "weft_axpy",
        "weft_xpby",
        "weft_mask",
        "weft_pcg_update_xr",
        "weft_pcg_update_p",
        "weft_residual_start",
    ],
};

/// Every kernel source file.
pub const SOURCES: [KernelSource; 2] = [ASSEMBLY, PCG];

/// The source `text` with every `#include "X"` of a header in [`HEADERS`]
/// replaced by that header's (recursively expanded) text, each header at
/// most once. Includes of unknown files are left in place (NVRTC then
/// reports them).
pub fn expand(text: &str) -> String {
    let mut done: Vec<&'static str> = Vec::new();
    let mut out = String::with_capacity(text.len() * 4);
    expand_into(text, &mut done, &mut out);
    out
}

fn expand_into(text: &str, done: &mut Vec<&'static str>, out: &mut String) {
    for line in text.lines() {
        let included = line
            .trim()
            .strip_prefix("#include")
            .map(str::trim)
            .and_then(|s| s.strip_prefix('"'))
            .and_then(|s| s.strip_suffix('"'));
        match included.and_then(|f| HEADERS.iter().find(|(n, _)| *n == f)) {
            Some((name, body)) => {
                if !done.contains(name) {
                    done.push(name);
                    out.push_str(&format!("// ---- begin {name}\n"));
                    expand_into(body, done, out);
                    out.push_str(&format!("// ---- end {name}\n"));
                }
            }
            None => {
                if line.trim() != "#pragma once" {
                    out.push_str(line);
                }
                out.push('\n');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_inlines_each_header_once_and_leaves_no_local_include() {
        let s = expand(ASSEMBLY.text);
        for (name, _) in HEADERS {
            let begins = s.matches(&format!("// ---- begin {name}\n")).count();
            assert_eq!(begins, 1, "{name} inlined {begins} times");
        }
        assert!(!s.contains("#include \""), "a local include is left");
        assert!(!s.contains("#pragma once"));
        // Every declared entry point is defined as an extern "C" kernel.
        for src in SOURCES {
            let e = expand(src.text);
            for k in src.entry_points {
                assert!(
                    e.contains(&format!("extern \"C\" __global__ void {k}(")),
                    "{}: entry point {k} not found",
                    src.name
                );
            }
            assert_eq!(
                e.matches("extern \"C\" __global__ void ").count(),
                src.entry_points.len(),
                "{}: entry point list incomplete",
                src.name
            );
        }
    }
}
