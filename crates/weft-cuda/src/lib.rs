//! # weft-cuda
//!
//! Foundations of the CUDA backend of weft (DESIGN §7): the CUDA C sources
//! in `kernels/` (element math headers shared by every kernel, assembly
//! kernels, BSR SpMV, block-Jacobi and the PCG vector operations), their
//! compilation with NVRTC, and device detection — all without CUDA at build
//! time: `cudarc` is used with dynamic loading only, so `libcuda` and
//! `libnvrtc` are looked up when first needed and their absence is reported,
//! never a panic.
//!
//! What is checked where:
//!
//! - [`host`]: the kernel headers compiled for the host by `build.rs` and
//!   compared element by element with `weft-potentials`
//!   (tests/host_parity.rs).
//! - [`kernels`]: the kernel sources; tests/nvrtc_compile.rs compiles every
//!   one with NVRTC ([`nvrtc`]) when the library is found.
//! - [`device`]: driver/device detection ([`Device::detect`]) and
//!   [`doctor`].
//!
//! Coverage of the kernels: stretch, bending (small-angle switch), shear
//! (small-angle form, jamming), parallel contact, sliding anchors, gravity,
//! Eulerian mass and inertia force, strain-rate and Rayleigh damping,
//! plane/sphere/capsule colliders, and triangle-mesh colliders through the
//! per-node tangent planes the host takes once per step
//! (`weft_solver::Assembler::begin_step`, uploaded as [`plan::StepColliders`]). The elastic Hessians in the system
//! matrix are the PSD projections of `weft_potentials::elastic_projected`
//! by default, or the exact ones ([`plan::AssemblyPlan::exact_hessians`],
//! mirroring `weft_solver::Assembler::exact_hessians`). Self-collision repulsion runs on
//! the device over the segment pairs the host finds at the step start.
//!
//! - [`step`]: the backward-Euler step on the device. [`step::CudaStep`]
//!   implements `weft_solver::StepBackend`, so the CPU's own Newton loop and
//!   adaptive step control drive the kernels ([`step::CudaSimulation`]);
//!   [`step::check_supported`] refuses up front what the kernels lack
//!   (the Cholesky
//!   preconditioner); [`step::EmulatedStep`] runs the same step with the
//!   kernels executed on the host (tests/step.rs: trajectory parity with the
//!   CPU without a GPU, rejections, anchors, and the bytes read back per
//!   step, [`step::Downloads`]).
//!
//! Bus traffic of the device step: the whole Newton/PCG loop of a step,
//! the acceptance checks (arc-length order, strain jumps: kernels
//! `weft_accept_segments`/`weft_accept_finish`, 3 scalars = 24 B read back)
//! and the friction-anchor update (`weft_update_anchors`) run on the
//! device; the state, the anchors and the strain reference are uploaded
//! once and downloaded only by [`step::CudaSimulation::sync`] (at the end
//! of every [`step::CudaSimulation::advance_to`], i.e. at output frames).
//! Per step only scalars are read back (energies, norms, PCG scalars) and
//! the step's collider data and handle velocities uploaded. **The one
//! remaining per-step download of whole vectors**: with triangle-mesh
//! colliders or self-collision, `q_n` and `v_n` (`80 n` B) are downloaded
//! once per step attempt, because `weft_solver::Assembler::begin_step`
//! takes the mesh colliders' tangent planes and finds the self-collision
//! pairs on the host (BVH queries), which are then uploaded.
//! - [`mod@bench`]: the device rows of `weft bench --backend cuda`.
//!
//! **First run on a GPU on 2026-11-26** (an H100; BENCHMARKS.md): the
//! parity tests of tests/gpu.rs passed (assembly, PCG, acceptance and
//! anchor kernels; the trajectory test on its first scene, the other four
//! not reached in the time given). CI has no GPU: there only the host
//! compilation (parity), the serial host execution (emulation, including
//! the whole step) and NVRTC compilation are tested.

pub mod bench;
pub mod cuda;
pub mod device;
pub mod emulate;
pub mod host;
pub mod kernels;
pub mod nvrtc;
pub mod plan;
pub mod step;

pub use device::{Device, NoDevice, doctor};
