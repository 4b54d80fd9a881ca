//! The device path: kernels compiled with NVRTC and launched with cudarc on
//! device 0, driven by an [`AssemblyPlan`].
//!
//! Its launch sequence is the one [`crate::emulate`] runs on the host and
//! tests against the CPU backend. On a device it has run once, on an H100
//! on 2026-11-26, where the parity tests of tests/gpu.rs passed (see the
//! crate docs); CI has no GPU, so those tests skip there.
//!
//! - [`CudaBackend`]: context, stream and the loaded kernels.
//! - [`DeviceSystem`]: the plan and the state resident on the device;
//!   assembly ([`DeviceSystem::assemble`]), block-Jacobi setup and a fully
//!   device-resident PCG ([`DeviceSystem::solve`]: per iteration only `|r|²`
//!   and `pᵀAp` are read back, 16 bytes).
//! - [`CudaOps`]: [`LinearOps`] over the kernels for the existing host PCG
//!   driver; it copies vectors to and from the device on every call, so it
//!   is a correctness adapter, not the fast path.

use crate::device::{Device, NoDevice};
use crate::host::GpuCollider;
use crate::kernels::{ASSEMBLY, PCG};
use crate::nvrtc::{self, NvrtcError};
use crate::plan::StepColliders;
use crate::plan::{AcceptScalars, AssemblyPlan, GpuMaterial, energies_from};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DeviceRepr, DriverError, LaunchConfig,
    PushKernelArg,
};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use thiserror::Error;
use weft_solver::Energies;
use weft_solver::assembly::StrainPeak;
use weft_solver::bsr::Block;
use weft_solver::pcg::{LinearOps, PcgResult, PcgStatus};

// SAFETY: both are #[repr(C)] plain-old-data structs of f64/i32 fields whose
// layout matches the C structs of kernels/ (`GpuMaterial`, `Collider`).
unsafe impl DeviceRepr for GpuMaterial {}
unsafe impl DeviceRepr for GpuCollider {}

/// Threads per block of every launch (a multiple of 32; `weft_max_abs`
/// needs exactly 256).
pub const THREADS: u32 = 256;
/// Most blocks of a grid-stride reduction (size of the partials buffer).
pub const MAX_REDUCTION_BLOCKS: u32 = 1024;

/// Why the device path failed.
#[derive(Debug, Error)]
pub enum CudaError {
    /// No usable device.
    #[error(transparent)]
    NoDevice(#[from] NoDevice),
    /// Kernel compilation failed.
    #[error(transparent)]
    Nvrtc(#[from] NvrtcError),
    /// A driver call failed (allocation, copy, module load, launch).
    #[error("CUDA driver call failed: {0:?}")]
    Driver(DriverError),
    /// A length does not match the plan.
    #[error("{what}: expected length {expected}, got {got}")]
    Length {
        /// Which argument.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Given length.
        got: usize,
    },
}

impl From<DriverError> for CudaError {
    fn from(e: DriverError) -> Self {
        CudaError::Driver(e)
    }
}

fn check_len(what: &'static str, got: usize, expected: usize) -> Result<(), CudaError> {
    if got == expected {
        Ok(())
    } else {
        Err(CudaError::Length {
            what,
            expected,
            got,
        })
    }
}

/// The virtual architecture NVRTC targets for a device of compute
/// capability `(major, minor)`: `compute_XY`, at least `compute_80` (the
/// oldest the kernels are compiled for in CI).
pub fn arch_for(cc: (i32, i32)) -> &'static str {
    match cc {
        (m, _) if m >= 10 => "compute_100",
        (9, _) => "compute_90",
        (8, 9) => "compute_89",
        (8, 6) => "compute_86",
        _ => "compute_80",
    }
}

/// Device 0 with its context, stream and every kernel of `kernels/` loaded.
pub struct CudaBackend {
    /// The device.
    pub device: Device,
    /// The NVRTC target used.
    pub arch: &'static str,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    functions: HashMap<&'static str, CudaFunction>,
}

impl CudaBackend {
    /// Detects device 0, compiles both kernel sources for it and loads every
    /// entry point.
    ///
    /// # Errors
    /// [`CudaError::NoDevice`] without a device (see [`Device::detect`]),
    /// [`CudaError::Nvrtc`] when NVRTC is missing or fails,
    /// [`CudaError::Driver`] when a module does not load.
    pub fn new() -> Result<Self, CudaError> {
        let device = Device::detect()?;
        let arch = arch_for(device.compute_capability);
        let ctx = CudaContext::new(device.ordinal as usize)?;
        let stream = ctx.default_stream();
        let mut functions = HashMap::new();
        for src in [ASSEMBLY, PCG] {
            let ptx = nvrtc::compile(&src, arch)?;
            let module = ctx.load_module(ptx)?;
            for &name in src.entry_points {
                functions.insert(name, module.load_function(name)?);
            }
        }
        Ok(Self {
            device,
            arch,
            ctx,
            stream,
            functions,
        })
    }

    fn f(&self, name: &'static str) -> &CudaFunction {
        &self.functions[name]
    }

    /// Blocks all host work until the stream is idle.
    ///
    /// # Errors
    /// [`CudaError::Driver`] when a queued kernel failed.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        Ok(self.stream.synchronize()?)
    }

    /// The CUDA context (for callers that allocate their own buffers).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
}

fn grid(count: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((count as u32).div_ceil(THREADS).max(1), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn reduction_grid(len: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            (len as u32)
                .div_ceil(THREADS)
                .clamp(1, MAX_REDUCTION_BLOCKS),
            1,
            1,
        ),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The plan and the state of one system, resident on the device.
pub struct DeviceSystem<'b> {
    backend: &'b CudaBackend,
    nodes: usize,
    nnz: usize,
    materials: CudaSlice<GpuMaterial>,
    seg: [CudaSlice<u32>; 4], // nodes, material, blocks, colour elements
    seg_slot: CudaSlice<i32>,
    seg_spacing: CudaSlice<f64>,
    seg_offsets: Vec<usize>,
    bend: [CudaSlice<u32>; 4],
    bend_slot: CudaSlice<i32>,
    bend_offsets: Vec<usize>,
    shear: [CudaSlice<u32>; 4],
    shear_spacing: CudaSlice<f64>,
    shear_offsets: Vec<usize>,
    /// Membrane triangles: nodes, blocks, colour elements; per-triangle
    /// data ([`AssemblyPlan::tri_data`]); colour offsets.
    tri: [CudaSlice<u32>; 3],
    tri_data: CudaSlice<f64>,
    tri_offsets: Vec<usize>,
    /// Hinges: nodes, blocks, colour elements; data; colour offsets.
    hinge: [CudaSlice<u32>; 3],
    hinge_data: CudaSlice<f64>,
    hinge_offsets: Vec<usize>,
    /// Seam ties: nodes (3 each), weights, blocks (9 each), count.
    tie_nodes: CudaSlice<u32>,
    tie_t: CudaSlice<f64>,
    tie_blocks: CudaSlice<u32>,
    tie_count: usize,
    /// Tie stiffness (N/m) and damping (N·s/m), the tie kernel's
    /// arguments; initialised from the plan (mirror `Assembler::tie_*`).
    pub tie_stiffness: f64,
    /// See `tie_stiffness`.
    pub tie_damping: f64,
    anchor_node: CudaSlice<u32>,
    anchor_slot: CudaSlice<i32>,
    anchor_material: CudaSlice<u32>,
    /// Anchor-update index arrays ([`AssemblyPlan::anchor_nbrs`], ...).
    anchor_nbrs: CudaSlice<u32>,
    anchor_yarn_material: CudaSlice<u32>,
    anchor_side: CudaSlice<f64>,
    normal_force_floor: f64,
    /// Strain reference of the acceptance check (one per segment) and the
    /// strains of the last checked step (swapped in on acceptance).
    strain_ref: CudaSlice<f64>,
    strain_new: CudaSlice<f64>,
    /// `count - e` of the first segment out of arc-length order (atomicMax).
    first_bad: CudaSlice<u32>,
    /// `[first_bad, largest strain change, its segment]`, read back (24 B).
    accept_result: CudaSlice<f64>,
    node_radius: CudaSlice<f64>,
    point_mass: CudaSlice<f64>,
    node_alpha: CudaSlice<f64>,
    free: CudaSlice<f64>,
    row_ptr: CudaSlice<u32>,
    cols: CudaSlice<u32>,
    diag: CudaSlice<u32>,
    gravity: [f64; 3],
    bending_threshold: f64,
    shear_threshold: f64,
    /// Exact (`true`) or PSD-projected (`false`) elastic Hessians in the
    /// matrix, bit 0 of the kernels' `jacobian_flags`; initialised from
    /// [`AssemblyPlan::exact_hessians`], read by every
    /// [`DeviceSystem::assemble`] (mirrors `Assembler::exact_hessians`).
    pub exact_hessians: bool,
    /// The dissipation's position Jacobian in the matrix, bit 1 of
    /// `jacobian_flags`; initialised from
    /// [`AssemblyPlan::dissipation_position_jacobian`] (mirrors
    /// `Assembler::dissipation_position_jacobian`).
    pub dissipation_position_jacobian: bool,
    /// Mass-proportional drag (1/s), the segment kernel's `drag` argument;
    /// initialised from [`AssemblyPlan::drag`] (mirrors `Assembler::drag`).
    pub drag: f64,
    /// Step state: `q_n`, `v_n`, iterate `v`, `q = q_n + h v`.
    q_n: CudaSlice<f64>,
    v_n: CudaSlice<f64>,
    v: CudaSlice<f64>,
    q: CudaSlice<f64>,
    anchors: CudaSlice<f64>,
    colliders: Option<CudaSlice<GpuCollider>>,
    collider_count: usize,
    /// Mesh colliders' tangent planes of the step: CSR offsets and planes.
    planes: Option<(CudaSlice<u32>, CudaSlice<GpuCollider>)>,
    /// Self-collision pairs of the step (4 nodes each; vertex–face from
    /// the index given), `d0` (m), `k` (N/m), the law's kernel code.
    pairs: Option<(CudaSlice<u32>, i32, f64, f64, i32)>,
    /// Attachment springs of the step: nodes, points (3 each), `k_a` (N/m).
    attachments: Option<(CudaSlice<u32>, CudaSlice<f64>, CudaSlice<f64>)>,
    /// Assembly outputs.
    residual: CudaSlice<f64>,
    values: CudaSlice<f64>,
    energies: CudaSlice<f64>,
    seg_strain: CudaSlice<f64>,
    /// PCG work space.
    inverse: CudaSlice<f64>,
    partial: CudaSlice<f64>,
    part_idx: CudaSlice<u32>,
    /// `[rᵀz, pᵀAp]`, read by `weft_pcg_update_xr`.
    scalars: CudaSlice<f64>,
    rz_new: CudaSlice<f64>,
    tmp: CudaSlice<f64>,
    max_idx: CudaSlice<u32>,
    anchor_count: usize,
    x: CudaSlice<f64>,
    r: CudaSlice<f64>,
    z: CudaSlice<f64>,
    p: CudaSlice<f64>,
    ap: CudaSlice<f64>,
}

/// Sums the first `blocks` entries of `partial` into `out[0]` on the device
/// and reads the value back.
fn reduce_into(
    b: &CudaBackend,
    partial: &CudaSlice<f64>,
    blocks: u32,
    out: &mut CudaSlice<f64>,
) -> Result<f64, CudaError> {
    let count = blocks as i32;
    // SAFETY: signature of weft_sum_partials; partial holds `blocks` entries,
    // out at least one.
    unsafe {
        b.stream
            .launch_builder(b.f("weft_sum_partials"))
            .arg(&count)
            .arg(partial)
            .arg(&mut *out)
            .launch(LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1024, 1, 1),
                shared_mem_bytes: 0,
            })?;
    }
    let v = b.stream.clone_dtoh(&*out)?;
    Ok(v[0])
}

/// Uploads one element type's `u32` arrays (e.g. nodes, material, blocks,
/// colour elements), each padded to one entry when empty (see [`nonempty`]).
fn u32_slices<const N: usize>(
    s: &Arc<CudaStream>,
    arrays: [&[u32]; N],
) -> Result<[CudaSlice<u32>; N], CudaError> {
    let slices = arrays
        .iter()
        .map(|a| s.clone_htod(&nonempty(a)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(slices
        .try_into()
        .unwrap_or_else(|_| unreachable!("N slices from N arrays")))
}

/// The `(start, end)` element ranges of the colours with offsets `offsets`
/// (`Colouring::offsets`), one launch each.
fn colour_ranges(offsets: &[usize]) -> impl Iterator<Item = (usize, usize)> + '_ {
    offsets.windows(2).map(|w| (w[0], w[1]))
}

fn nonempty<T: Clone + Default>(v: &[T]) -> Vec<T> {
    if v.is_empty() {
        vec![T::default()]
    } else {
        v.to_vec()
    }
}

impl<'b> DeviceSystem<'b> {
    /// Uploads `plan` (allocation of every buffer happens here, once).
    ///
    /// # Errors
    /// [`CudaError::Driver`] when an allocation or copy fails.
    pub fn new(backend: &'b CudaBackend, plan: &AssemblyPlan) -> Result<Self, CudaError> {
        let s = &backend.stream;
        let len = 5 * plan.nodes;
        let nnz = plan.cols.len();
        let nseg = plan.seg_slot.len();
        // Zero-length device buffers are avoided with one dummy element.
        let up_u = |v: &[u32]| nonempty(v);
        Ok(Self {
            backend,
            nodes: plan.nodes,
            nnz,
            materials: s.clone_htod(&nonempty(&plan.materials))?,
            seg: u32_slices(
                s,
                [
                    &plan.seg_nodes,
                    &plan.seg_material,
                    &plan.seg_blocks,
                    &plan.seg_colours.elements,
                ],
            )?,
            seg_slot: s.clone_htod(&nonempty(&plan.seg_slot))?,
            seg_spacing: s.clone_htod(&nonempty(&plan.seg_spacing))?,
            seg_offsets: plan.seg_colours.offsets.clone(),
            bend: u32_slices(
                s,
                [
                    &plan.bend_nodes,
                    &plan.bend_material,
                    &plan.bend_blocks,
                    &plan.bend_colours.elements,
                ],
            )?,
            bend_slot: s.clone_htod(&nonempty(&plan.bend_slot))?,
            bend_offsets: plan.bend_colours.offsets.clone(),
            shear: u32_slices(
                s,
                [
                    &plan.shear_nodes,
                    &plan.shear_material,
                    &plan.shear_blocks,
                    &plan.shear_colours.elements,
                ],
            )?,
            shear_spacing: s.clone_htod(&nonempty(&plan.shear_spacing))?,
            shear_offsets: plan.shear_colours.offsets.clone(),
            tri: u32_slices(
                s,
                [
                    &plan.tri_nodes,
                    &plan.tri_blocks,
                    &plan.tri_colours.elements,
                ],
            )?,
            tri_data: s.clone_htod(&nonempty(&plan.tri_data))?,
            tri_offsets: plan.tri_colours.offsets.clone(),
            hinge: u32_slices(
                s,
                [
                    &plan.hinge_nodes,
                    &plan.hinge_blocks,
                    &plan.hinge_colours.elements,
                ],
            )?,
            hinge_data: s.clone_htod(&nonempty(&plan.hinge_data))?,
            hinge_offsets: plan.hinge_colours.offsets.clone(),
            tie_nodes: s.clone_htod(&up_u(&plan.tie_nodes))?,
            tie_t: s.clone_htod(&nonempty(&plan.tie_t))?,
            tie_blocks: s.clone_htod(&up_u(&plan.tie_blocks))?,
            tie_count: plan.tie_t.len(),
            tie_stiffness: plan.tie_stiffness,
            tie_damping: plan.tie_damping,
            anchor_node: s.clone_htod(&up_u(&plan.anchor_node))?,
            anchor_slot: s.clone_htod(&nonempty(&plan.anchor_slot))?,
            anchor_material: s.clone_htod(&up_u(&plan.anchor_material))?,
            anchor_nbrs: s.clone_htod(&up_u(&plan.anchor_nbrs))?,
            anchor_yarn_material: s.clone_htod(&up_u(&plan.anchor_yarn_material))?,
            anchor_side: s.clone_htod(&nonempty(&plan.anchor_side))?,
            normal_force_floor: plan.normal_force_floor,
            strain_ref: s.alloc_zeros(nseg.max(1))?,
            strain_new: s.alloc_zeros(nseg.max(1))?,
            first_bad: s.alloc_zeros(1)?,
            accept_result: s.alloc_zeros(3)?,
            node_radius: s.clone_htod(&plan.node_radius)?,
            point_mass: s.clone_htod(&plan.point_mass)?,
            node_alpha: s.clone_htod(&plan.node_alpha)?,
            free: s.clone_htod(&plan.free)?,
            row_ptr: s.clone_htod(&plan.row_ptr)?,
            cols: s.clone_htod(&plan.cols)?,
            diag: s.clone_htod(&plan.diag)?,
            gravity: plan.gravity,
            bending_threshold: plan.bending_threshold,
            shear_threshold: plan.shear_threshold,
            exact_hessians: plan.exact_hessians,
            dissipation_position_jacobian: plan.dissipation_position_jacobian,
            drag: plan.drag,
            q_n: s.alloc_zeros(len)?,
            v_n: s.alloc_zeros(len)?,
            v: s.alloc_zeros(len)?,
            q: s.alloc_zeros(len)?,
            anchors: s.alloc_zeros(plan.anchor_node.len().max(1))?,
            colliders: None,
            collider_count: 0,
            planes: None,
            pairs: None,
            attachments: None,
            residual: s.alloc_zeros(len)?,
            values: s.alloc_zeros(25 * nnz)?,
            energies: s.alloc_zeros(4)?,
            seg_strain: s.alloc_zeros(nseg.max(1))?,
            inverse: s.alloc_zeros(25 * plan.nodes)?,
            partial: s.alloc_zeros(MAX_REDUCTION_BLOCKS.max(len as u32) as usize)?,
            part_idx: s.alloc_zeros(MAX_REDUCTION_BLOCKS.max(nseg as u32) as usize)?,
            scalars: s.alloc_zeros(2)?,
            rz_new: s.alloc_zeros(1)?,
            tmp: s.alloc_zeros(1)?,
            max_idx: s.alloc_zeros(1)?,
            anchor_count: plan.anchor_node.len(),
            x: s.alloc_zeros(len)?,
            r: s.alloc_zeros(len)?,
            z: s.alloc_zeros(len)?,
            p: s.alloc_zeros(len)?,
            ap: s.alloc_zeros(len)?,
        })
    }

    fn len(&self) -> usize {
        5 * self.nodes
    }

    /// Uploads the start-of-step state `q_n`, `v_n` (length `5 n`), the
    /// anchors (one per fabric anchor, m) and the colliders at the step's
    /// end time ([`crate::plan::colliders_at`]: analytic colliders and the
    /// mesh colliders' tangent planes).
    ///
    /// # Errors
    /// [`CudaError::Length`] for a wrong length, [`CudaError::Driver`] when
    /// a copy fails.
    pub fn upload_step(
        &mut self,
        q_n: &[f64],
        v_n: &[f64],
        anchors: &[f64],
        colliders: &StepColliders,
    ) -> Result<(), CudaError> {
        let s = &self.backend.stream;
        check_len("q_n", q_n.len(), self.len())?;
        check_len("v_n", v_n.len(), self.len())?;
        s.memcpy_htod(q_n, &mut self.q_n)?;
        s.memcpy_htod(v_n, &mut self.v_n)?;
        if !anchors.is_empty() {
            check_len("anchors", anchors.len(), self.anchors.len())?;
            s.memcpy_htod(anchors, &mut self.anchors)?;
        }
        self.set_colliders(colliders)
    }

    /// Uploads the Newton iterate `v` (m/s, length `5 n`).
    ///
    /// # Errors
    /// As [`DeviceSystem::upload_step`].
    pub fn set_velocity(&mut self, v: &[f64]) -> Result<(), CudaError> {
        check_len("v", v.len(), self.len())?;
        Ok(self.backend.stream.memcpy_htod(v, &mut self.v)?)
    }

    /// Assembles the residual and (if `with_matrix`) the system matrix on
    /// the device (launch sequence of [`crate::emulate::assemble`]) and
    /// returns the energies and the largest stretch strain (reads back 4 +
    /// 2 scalars).
    ///
    /// # Errors
    /// [`CudaError::Driver`] when a launch or copy fails.
    pub fn assemble(
        &mut self,
        h: f64,
        with_matrix: bool,
    ) -> Result<(Energies, StrainPeak), CudaError> {
        let e = self.assemble_energies(h, with_matrix)?;
        let peak = self.strain_peak()?;
        Ok((e, peak))
    }

    /// As [`DeviceSystem::assemble`] without the strain peak (reads back
    /// the 4 energies only).
    ///
    /// # Errors
    /// [`CudaError::Driver`] when a launch or copy fails.
    pub fn assemble_energies(&mut self, h: f64, with_matrix: bool) -> Result<Energies, CudaError> {
        self.launch_assembly(h, with_matrix)?;
        let en = self.backend.stream.clone_dtoh(&self.energies)?;
        Ok(energies_from(&en))
    }

    /// The launch sequence of [`DeviceSystem::assemble`] (residual,
    /// energies and, with `with_matrix`, the matrix into the system's
    /// buffers), nothing read back.
    fn launch_assembly(&mut self, h: f64, with_matrix: bool) -> Result<(), CudaError> {
        let b = self.backend;
        let s = &b.stream;
        let n_all = self.len();
        let len = n_all as i32;
        let wm = i32::from(with_matrix);
        let flags = crate::plan::jacobian_flags(
            self.exact_hessians,
            self.dissipation_position_jacobian,
            with_matrix,
        );
        let [gx, gy, gz] = self.gravity;
        // SAFETY (every launch below): argument types and order match the
        // kernel signatures in kernels/weft_assembly.cu; every buffer has the
        // length the kernel indexes (sizes from the plan).
        unsafe {
            s.launch_builder(b.f("weft_advance"))
                .arg(&len)
                .arg(&self.q_n)
                .arg(&self.v)
                .arg(&h)
                .arg(&mut self.q)
                .launch(grid(n_all))?;
        }
        s.memset_zeros(&mut self.residual)?;
        s.memset_zeros(&mut self.energies)?;
        if with_matrix {
            s.memset_zeros(&mut self.values)?;
        }
        for (o, e) in colour_ranges(&self.seg_offsets) {
            let count = (e - o) as i32;
            let elems = self.seg[3].slice(o..e);
            unsafe {
                s.launch_builder(b.f("weft_assemble_segments"))
                    .arg(&elems)
                    .arg(&count)
                    .arg(&self.seg[0])
                    .arg(&self.seg_slot)
                    .arg(&self.seg[1])
                    .arg(&self.seg_spacing)
                    .arg(&self.seg[2])
                    .arg(&self.materials)
                    .arg(&self.q)
                    .arg(&self.v)
                    .arg(&self.q_n)
                    .arg(&self.v_n)
                    .arg(&h)
                    .arg(&gx)
                    .arg(&gy)
                    .arg(&gz)
                    .arg(&self.drag)
                    .arg(&mut self.residual)
                    .arg(&mut self.values)
                    .arg(&wm)
                    .arg(&flags)
                    .arg(&mut self.energies)
                    .arg(&mut self.seg_strain)
                    .launch(grid(e - o))?;
            }
        }
        for (o, e) in colour_ranges(&self.bend_offsets) {
            let count = (e - o) as i32;
            let elems = self.bend[3].slice(o..e);
            unsafe {
                s.launch_builder(b.f("weft_assemble_bending"))
                    .arg(&elems)
                    .arg(&count)
                    .arg(&self.bend[0])
                    .arg(&self.bend_slot)
                    .arg(&self.bend[1])
                    .arg(&self.bend[2])
                    .arg(&self.materials)
                    .arg(&self.q_n)
                    .arg(&self.v)
                    .arg(&h)
                    .arg(&self.bending_threshold)
                    .arg(&mut self.residual)
                    .arg(&mut self.values)
                    .arg(&wm)
                    .arg(&flags)
                    .arg(&mut self.energies)
                    .launch(grid(e - o))?;
            }
        }
        for (o, e) in colour_ranges(&self.shear_offsets) {
            let count = (e - o) as i32;
            let elems = self.shear[3].slice(o..e);
            unsafe {
                s.launch_builder(b.f("weft_assemble_shear"))
                    .arg(&elems)
                    .arg(&count)
                    .arg(&self.shear[0])
                    .arg(&self.shear[1])
                    .arg(&self.shear_spacing)
                    .arg(&self.shear[2])
                    .arg(&self.materials)
                    .arg(&self.q_n)
                    .arg(&self.v)
                    .arg(&h)
                    .arg(&self.shear_threshold)
                    .arg(&mut self.residual)
                    .arg(&mut self.values)
                    .arg(&wm)
                    .arg(&flags)
                    .arg(&mut self.energies)
                    .launch(grid(e - o))?;
            }
        }
        for (name, nodes, data, offsets) in [
            (
                "weft_assemble_triangles",
                &self.tri,
                &self.tri_data,
                &self.tri_offsets,
            ),
            (
                "weft_assemble_hinges",
                &self.hinge,
                &self.hinge_data,
                &self.hinge_offsets,
            ),
        ] {
            for (o, e) in colour_ranges(offsets) {
                let count = (e - o) as i32;
                let elems = nodes[2].slice(o..e);
                unsafe {
                    s.launch_builder(b.f(name))
                        .arg(&elems)
                        .arg(&count)
                        .arg(&nodes[0])
                        .arg(data)
                        .arg(&nodes[1])
                        .arg(&self.q_n)
                        .arg(&self.v)
                        .arg(&h)
                        .arg(&mut self.residual)
                        .arg(&mut self.values)
                        .arg(&wm)
                        .arg(&flags)
                        .arg(&mut self.energies)
                        .launch(grid(e - o))?;
                }
            }
        }
        let na = self.anchor_count as i32;
        if na > 0 {
            unsafe {
                s.launch_builder(b.f("weft_assemble_anchors"))
                    .arg(&na)
                    .arg(&self.anchor_node)
                    .arg(&self.anchor_slot)
                    .arg(&self.anchor_material)
                    .arg(&self.anchors)
                    .arg(&self.materials)
                    .arg(&self.diag)
                    .arg(&self.q_n)
                    .arg(&self.v)
                    .arg(&h)
                    .arg(&mut self.residual)
                    .arg(&mut self.values)
                    .arg(&wm)
                    .arg(&mut self.energies)
                    .launch(grid(na as usize))?;
            }
        }
        let nodes = self.nodes as i32;
        if let Some(cols) = &self.colliders {
            let cc = self.collider_count as i32;
            unsafe {
                s.launch_builder(b.f("weft_assemble_colliders"))
                    .arg(&nodes)
                    .arg(cols)
                    .arg(&cc)
                    .arg(&self.node_radius)
                    .arg(&self.diag)
                    .arg(&self.q_n)
                    .arg(&self.q)
                    .arg(&self.v)
                    .arg(&h)
                    .arg(&mut self.residual)
                    .arg(&mut self.values)
                    .arg(&wm)
                    .arg(&mut self.energies)
                    .launch(grid(self.nodes))?;
            }
        }
        if self.tie_count > 0 && (self.tie_stiffness > 0.0 || self.tie_damping > 0.0) {
            let count = self.tie_count as i32;
            // SAFETY: signature of weft_assemble_ties; 3 nodes, 1 weight and
            // 9 block indices per tie, from the plan.
            unsafe {
                s.launch_builder(b.f("weft_assemble_ties"))
                    .arg(&count)
                    .arg(&self.tie_nodes)
                    .arg(&self.tie_t)
                    .arg(&self.tie_blocks)
                    .arg(&self.tie_stiffness)
                    .arg(&self.tie_damping)
                    .arg(&self.q_n)
                    .arg(&self.v)
                    .arg(&h)
                    .arg(&mut self.residual)
                    .arg(&mut self.values)
                    .arg(&wm)
                    .arg(&mut self.energies)
                    .launch(grid(self.tie_count))?;
            }
        }
        if let Some((nodes_a, points, k)) = &self.attachments {
            let count = nodes_a.len() as i32;
            // SAFETY: signature of weft_assemble_attachments; 3 point
            // coordinates and one stiffness per node, each node < n.
            unsafe {
                s.launch_builder(b.f("weft_assemble_attachments"))
                    .arg(&count)
                    .arg(nodes_a)
                    .arg(points)
                    .arg(k)
                    .arg(&self.diag)
                    .arg(&self.q_n)
                    .arg(&self.v)
                    .arg(&h)
                    .arg(&mut self.residual)
                    .arg(&mut self.values)
                    .arg(&wm)
                    .arg(&mut self.energies)
                    .launch(grid(nodes_a.len()))?;
            }
        }
        if let Some((pairs, face_from, d0, k, law)) = &self.pairs {
            let count = (pairs.len() / 4) as i32;
            // SAFETY: signature of weft_assemble_repulsion; 4 node indices
            // per pair, each < n (from the assembler's fabric).
            unsafe {
                s.launch_builder(b.f("weft_assemble_repulsion"))
                    .arg(&count)
                    .arg(pairs)
                    .arg(face_from)
                    .arg(law)
                    .arg(d0)
                    .arg(k)
                    .arg(&self.diag)
                    .arg(&self.q)
                    .arg(&h)
                    .arg(&mut self.residual)
                    .arg(&mut self.values)
                    .arg(&wm)
                    .arg(&mut self.energies)
                    .launch(grid(pairs.len() / 4))?;
            }
        }
        if let Some((offsets, planes)) = &self.planes {
            // SAFETY: signature of weft_assemble_planes; offsets has n + 1
            // entries (checked in set_colliders).
            unsafe {
                s.launch_builder(b.f("weft_assemble_planes"))
                    .arg(&nodes)
                    .arg(offsets)
                    .arg(planes)
                    .arg(&self.node_radius)
                    .arg(&self.diag)
                    .arg(&self.q_n)
                    .arg(&self.q)
                    .arg(&self.v)
                    .arg(&h)
                    .arg(&mut self.residual)
                    .arg(&mut self.values)
                    .arg(&wm)
                    .arg(&mut self.energies)
                    .launch(grid(self.nodes))?;
            }
        }
        unsafe {
            s.launch_builder(b.f("weft_assemble_point_masses"))
                .arg(&nodes)
                .arg(&self.point_mass)
                .arg(&self.node_alpha)
                .arg(&self.diag)
                .arg(&self.q)
                .arg(&self.v)
                .arg(&self.v_n)
                .arg(&h)
                .arg(&gx)
                .arg(&gy)
                .arg(&gz)
                .arg(&mut self.residual)
                .arg(&mut self.values)
                .arg(&wm)
                .arg(&mut self.energies)
                .launch(grid(self.nodes))?;
        }
        Ok(())
    }

    fn strain_peak(&mut self) -> Result<StrainPeak, CudaError> {
        let nseg = self.seg_offsets.last().copied().unwrap_or(0);
        if nseg == 0 {
            return Ok(StrainPeak::default());
        }
        let b = self.backend;
        let s = &b.stream;
        let cfg = reduction_grid(nseg);
        let blocks = cfg.grid_dim.0 as i32;
        let n = nseg as i32;
        let null = 0u64;
        let mut v1 = s.alloc_zeros::<f64>(1)?;
        let mut i1 = s.alloc_zeros::<u32>(1)?;
        // SAFETY: signatures of weft_max_abs; partial/part_idx hold at least
        // `blocks` entries; a null idx_in is passed as a zero pointer.
        unsafe {
            s.launch_builder(b.f("weft_max_abs"))
                .arg(&n)
                .arg(&self.seg_strain)
                .arg(&null)
                .arg(&mut self.partial)
                .arg(&mut self.part_idx)
                .launch(cfg)?;
            s.launch_builder(b.f("weft_max_abs"))
                .arg(&blocks)
                .arg(&self.partial)
                .arg(&self.part_idx)
                .arg(&mut v1)
                .arg(&mut i1)
                .launch(LaunchConfig {
                    grid_dim: (1, 1, 1),
                    block_dim: (THREADS, 1, 1),
                    shared_mem_bytes: 0,
                })?;
        }
        Ok(StrainPeak {
            value: s.clone_dtoh(&v1)?[0],
            segment: s.clone_dtoh(&i1)?[0] as usize,
        })
    }

    /// The residual of the last assembly (N·s, length `5 n`).
    ///
    /// # Errors
    /// [`CudaError::Driver`] when the copy fails.
    pub fn residual(&self) -> Result<Vec<f64>, CudaError> {
        Ok(self.backend.stream.clone_dtoh(&self.residual)?)
    }

    /// The matrix blocks of the last assembly (the plan's pattern).
    ///
    /// # Errors
    /// [`CudaError::Driver`] when the copy fails.
    pub fn matrix_values(&self) -> Result<Vec<Block>, CudaError> {
        let flat = self.backend.stream.clone_dtoh(&self.values)?;
        Ok(flat
            .chunks_exact(25)
            .map(|c| std::array::from_fn(|r| std::array::from_fn(|k| c[5 * r + k])))
            .collect())
    }

    /// Uploads matrix blocks (e.g. from the CPU assembler, for PCG tests).
    ///
    /// # Errors
    /// [`CudaError::Length`] when `values` does not have the pattern's
    /// size, [`CudaError::Driver`] when the copy fails.
    pub fn upload_matrix(&mut self, values: &[Block]) -> Result<(), CudaError> {
        check_len("values", values.len(), self.nnz)?;
        let flat: Vec<f64> = values.iter().flatten().flatten().copied().collect();
        Ok(self.backend.stream.memcpy_htod(&flat, &mut self.values)?)
    }

    /// Inverts the diagonal blocks of the current matrix on the device
    /// (block-Jacobi, as `BlockJacobi::new`).
    ///
    /// # Errors
    /// [`CudaError::Driver`] when the launch fails.
    pub fn setup_preconditioner(&mut self) -> Result<(), CudaError> {
        let b = self.backend;
        let n = self.nodes as i32;
        // SAFETY: signature of weft_block_jacobi_setup; inverse has 25 n.
        unsafe {
            b.stream
                .launch_builder(b.f("weft_block_jacobi_setup"))
                .arg(&n)
                .arg(&self.diag)
                .arg(&self.values)
                .arg(&self.free)
                .arg(&mut self.inverse)
                .launch(grid(self.nodes))?;
        }
        Ok(())
    }

    /// The block-Jacobi inverses (25 per node, row-major).
    ///
    /// # Errors
    /// [`CudaError::Driver`] when the copy fails.
    pub fn preconditioner(&self) -> Result<Vec<f64>, CudaError> {
        Ok(self.backend.stream.clone_dtoh(&self.inverse)?)
    }

    /// Solves `A x = b` on the free DOFs with the device-resident PCG loop
    /// (fused kernels; scalars stay on the device, `|r|²` and `pᵀAp` are read
    /// back per iteration), starting from `x = 0`, after
    /// [`DeviceSystem::setup_preconditioner`]. Same stopping rules as
    /// `weft_solver::pcg::pcg`. Returns the result and `x`.
    ///
    /// # Errors
    /// [`CudaError::Length`], [`CudaError::Driver`].
    pub fn solve(
        &mut self,
        b: &[f64],
        tolerance: f64,
        max_iterations: usize,
    ) -> Result<(PcgResult, Vec<f64>), CudaError> {
        check_len("b", b.len(), self.len())?;
        self.backend.stream.memcpy_htod(b, &mut self.r)?;
        let res = self.solve_resident(tolerance, max_iterations)?;
        Ok((res, self.backend.stream.clone_dtoh(&self.x)?))
    }

    /// The device-resident PCG loop of [`DeviceSystem::solve`] on the
    /// right-hand side already in the system's `r` buffer; the solution is
    /// left in its `x` buffer (nothing but scalars is read back).
    fn solve_resident(
        &mut self,
        tolerance: f64,
        max_iterations: usize,
    ) -> Result<PcgResult, CudaError> {
        let bk = self.backend;
        let s = &bk.stream;
        let len = self.len();
        let (li, ni) = (len as i32, self.nodes as i32);
        let rows = grid(self.nodes);
        let rblocks = rows.grid_dim.0;
        let red = reduction_grid(len);
        s.memset_zeros(&mut self.x)?;
        // x = 0, so r = mask(b).
        // SAFETY (all launches): signatures of kernels/weft_pcg.cu; vectors
        // have 5 n entries, partial at least max(blocks) entries.
        unsafe {
            s.launch_builder(bk.f("weft_mask"))
                .arg(&li)
                .arg(&self.free)
                .arg(&mut self.r)
                .launch(grid(len))?;
            s.launch_builder(bk.f("weft_dot_partial"))
                .arg(&li)
                .arg(&self.r)
                .arg(&self.r)
                .arg(&mut self.partial)
                .launch(red)?;
        }
        let bb = reduce_into(bk, &self.partial, red.grid_dim.0, &mut self.tmp)?;
        let b_norm = bb.sqrt();
        if b_norm == 0.0 {
            return Ok(PcgResult {
                status: PcgStatus::Converged,
                iterations: 0,
                relative_residual: 0.0,
            });
        }
        unsafe {
            s.launch_builder(bk.f("weft_block_jacobi_apply_dot"))
                .arg(&ni)
                .arg(&self.inverse)
                .arg(&self.r)
                .arg(&mut self.z)
                .arg(&mut self.partial)
                .launch(rows)?;
        }
        // scalars[0] = rᵀz.
        reduce_into(bk, &self.partial, rblocks, &mut self.tmp)?;
        s.memcpy_dtod(&self.tmp, &mut self.scalars.slice_mut(0..1))?;
        s.memcpy_dtod(&self.z, &mut self.p)?;
        let mut rr = bb;
        let finish = |status, iterations, rel| {
            Ok::<_, CudaError>(PcgResult {
                status,
                iterations,
                relative_residual: rel,
            })
        };
        for it in 0..max_iterations {
            let rn = rr.sqrt();
            if rn <= tolerance * b_norm {
                return finish(PcgStatus::Converged, it, rn / b_norm);
            }
            unsafe {
                s.launch_builder(bk.f("weft_bsr_spmv_dot"))
                    .arg(&ni)
                    .arg(&self.row_ptr)
                    .arg(&self.cols)
                    .arg(&self.values)
                    .arg(&self.p)
                    .arg(&self.free)
                    .arg(&mut self.ap)
                    .arg(&mut self.partial)
                    .launch(rows)?;
            }
            let pap = reduce_into(bk, &self.partial, rblocks, &mut self.tmp)?;
            if pap <= 0.0 || !pap.is_finite() {
                if it == 0 {
                    s.memcpy_dtod(&self.z, &mut self.x)?;
                }
                return finish(PcgStatus::NegativeCurvature, it, rn / b_norm);
            }
            // scalars[1] = pᵀAp.
            s.memcpy_dtod(&self.tmp, &mut self.scalars.slice_mut(1..2))?;
            unsafe {
                s.launch_builder(bk.f("weft_pcg_update_xr"))
                    .arg(&li)
                    .arg(&self.scalars)
                    .arg(&self.p)
                    .arg(&self.ap)
                    .arg(&mut self.x)
                    .arg(&mut self.r)
                    .arg(&mut self.partial)
                    .launch(red)?;
            }
            rr = reduce_into(bk, &self.partial, red.grid_dim.0, &mut self.tmp)?;
            unsafe {
                s.launch_builder(bk.f("weft_block_jacobi_apply_dot"))
                    .arg(&ni)
                    .arg(&self.inverse)
                    .arg(&self.r)
                    .arg(&mut self.z)
                    .arg(&mut self.partial)
                    .launch(rows)?;
            }
            reduce_into(bk, &self.partial, rblocks, &mut self.rz_new)?;
            unsafe {
                s.launch_builder(bk.f("weft_pcg_update_p"))
                    .arg(&li)
                    .arg(&self.rz_new)
                    .arg(&self.scalars)
                    .arg(&self.z)
                    .arg(&mut self.p)
                    .launch(grid(len))?;
            }
            // scalars[0] = rz_new for the next iteration.
            s.memcpy_dtod(&self.rz_new, &mut self.scalars.slice_mut(0..1))?;
        }
        let rn = rr.sqrt();
        let status = if rn <= tolerance * b_norm {
            PcgStatus::Converged
        } else {
            PcgStatus::MaxIterations
        };
        finish(status, max_iterations, rn / b_norm)
    }
}

/// [`LinearOps`] over the device kernels for the host PCG driver
/// (`weft_solver::pcg::pcg`): every call uploads its input vectors, launches
/// the kernel and downloads the result. A correctness adapter (PCIe traffic
/// per call), not the fast path; see [`DeviceSystem::solve`]. A failed
/// device call fills the output with NaN (so PCG stops) and is kept in
/// [`CudaOps::take_error`].
pub struct CudaOps<'s, 'b> {
    sys: RefCell<&'s mut DeviceSystem<'b>>,
    error: RefCell<Option<CudaError>>,
}

impl<'s, 'b> CudaOps<'s, 'b> {
    /// Wraps a system whose matrix and preconditioner are set up.
    pub fn new(sys: &'s mut DeviceSystem<'b>) -> Self {
        Self {
            sys: RefCell::new(sys),
            error: RefCell::new(None),
        }
    }

    /// The first device error seen, if any.
    pub fn take_error(&self) -> Option<CudaError> {
        self.error.borrow_mut().take()
    }

    fn run(
        &self,
        out: &mut [f64],
        f: impl FnOnce(&mut DeviceSystem<'b>) -> Result<Vec<f64>, CudaError>,
    ) {
        let mut sys = self.sys.borrow_mut();
        match f(&mut sys) {
            Ok(v) => out.copy_from_slice(&v),
            Err(e) => {
                out.iter_mut().for_each(|x| *x = f64::NAN);
                self.error.borrow_mut().get_or_insert(e);
            }
        }
    }
}

/// Runs one elementwise kernel over device copies of `x` (input) and `y`
/// (in/out) and returns the new `y`.
fn elementwise(
    sys: &mut DeviceSystem<'_>,
    name: &'static str,
    a: f64,
    x: &[f64],
    y: &[f64],
) -> Result<Vec<f64>, CudaError> {
    let b = sys.backend;
    let s = &b.stream;
    let li = sys.len() as i32;
    let (xd, yd) = (&mut sys.x, &mut sys.r);
    s.memcpy_htod(x, xd)?;
    s.memcpy_htod(y, yd)?;
    // SAFETY: signatures of weft_axpy (len, a, x, y), weft_xpby (len, x, b,
    // y) and weft_mask (len, free, v); buffers have 5 n entries.
    unsafe {
        match name {
            "weft_axpy" => s
                .launch_builder(b.f(name))
                .arg(&li)
                .arg(&a)
                .arg(&*xd)
                .arg(&mut *yd)
                .launch(grid(li as usize))?,
            "weft_xpby" => s
                .launch_builder(b.f(name))
                .arg(&li)
                .arg(&*xd)
                .arg(&a)
                .arg(&mut *yd)
                .launch(grid(li as usize))?,
            _ => s
                .launch_builder(b.f("weft_mask"))
                .arg(&li)
                .arg(&sys.free)
                .arg(&mut *yd)
                .launch(grid(li as usize))?,
        };
    }
    Ok(s.clone_dtoh(&sys.r)?)
}

impl LinearOps for CudaOps<'_, '_> {
    fn apply(&self, x: &[f64], y: &mut [f64]) {
        self.run(y, |sys| {
            let b = sys.backend;
            let s = &b.stream;
            let ni = sys.nodes as i32;
            let (xd, yd) = (&mut sys.p, &mut sys.ap);
            s.memcpy_htod(x, xd)?;
            // SAFETY: signature of weft_bsr_spmv; vectors have 5 n entries.
            unsafe {
                s.launch_builder(b.f("weft_bsr_spmv"))
                    .arg(&ni)
                    .arg(&sys.row_ptr)
                    .arg(&sys.cols)
                    .arg(&sys.values)
                    .arg(&*xd)
                    .arg(&sys.free)
                    .arg(&mut *yd)
                    .launch(grid(sys.nodes))?;
            }
            Ok(s.clone_dtoh(&sys.ap)?)
        });
    }
    fn precondition(&self, r: &[f64], z: &mut [f64]) {
        self.run(z, |sys| {
            let b = sys.backend;
            let s = &b.stream;
            let ni = sys.nodes as i32;
            let (rd, zd) = (&mut sys.r, &mut sys.z);
            s.memcpy_htod(r, rd)?;
            // SAFETY: signature of weft_block_jacobi_apply.
            unsafe {
                s.launch_builder(b.f("weft_block_jacobi_apply"))
                    .arg(&ni)
                    .arg(&sys.inverse)
                    .arg(&*rd)
                    .arg(&mut *zd)
                    .launch(grid(sys.nodes))?;
            }
            Ok(s.clone_dtoh(&sys.z)?)
        });
    }
    fn dot(&self, a: &[f64], b: &[f64]) -> f64 {
        let mut out = [0.0];
        self.run(&mut out, |sys| {
            let bk = sys.backend;
            let s = &bk.stream;
            let li = sys.len() as i32;
            let red = reduction_grid(sys.len());
            let (ad, bd) = (&mut sys.x, &mut sys.r);
            s.memcpy_htod(a, ad)?;
            s.memcpy_htod(b, bd)?;
            // SAFETY: signature of weft_dot_partial.
            unsafe {
                s.launch_builder(bk.f("weft_dot_partial"))
                    .arg(&li)
                    .arg(&*ad)
                    .arg(&*bd)
                    .arg(&mut sys.partial)
                    .launch(red)?;
            }
            Ok(vec![reduce_into(
                bk,
                &sys.partial,
                red.grid_dim.0,
                &mut sys.tmp,
            )?])
        });
        out[0]
    }
    fn axpy(&self, a: f64, x: &[f64], y: &mut [f64]) {
        let y0 = y.to_vec();
        self.run(y, |sys| elementwise(sys, "weft_axpy", a, x, &y0));
    }
    fn xpby(&self, x: &[f64], b: f64, y: &mut [f64]) {
        let y0 = y.to_vec();
        self.run(y, |sys| elementwise(sys, "weft_xpby", b, x, &y0));
    }
    fn mask(&self, v: &mut [f64]) {
        let v0 = v.to_vec();
        self.run(v, |sys| elementwise(sys, "weft_mask", 0.0, &v0, &v0));
    }
}

/// Device vector operations of the step driver ([`crate::step`]); every
/// vector has `5 n` entries and stays on the device; only scalars are read
/// back.
impl DeviceSystem<'_> {
    /// A device vector of `5 n` zeros.
    pub(crate) fn zeros(&self) -> Result<CudaSlice<f64>, CudaError> {
        Ok(self.backend.stream.alloc_zeros(self.len())?)
    }

    /// `dst = src`.
    pub(crate) fn copy(
        &self,
        src: &CudaSlice<f64>,
        dst: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        Ok(self.backend.stream.memcpy_dtod(src, dst)?)
    }

    /// `x = 0`.
    pub(crate) fn set_zero(&self, x: &mut CudaSlice<f64>) -> Result<(), CudaError> {
        Ok(self.backend.stream.memset_zeros(x)?)
    }

    /// `y += a x` (`weft_axpy`).
    pub(crate) fn axpy(
        &self,
        a: f64,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let b = self.backend;
        let li = self.len() as i32;
        // SAFETY: signature of weft_axpy (len, a, x, y); both have 5 n entries.
        unsafe {
            b.stream
                .launch_builder(b.f("weft_axpy"))
                .arg(&li)
                .arg(&a)
                .arg(x)
                .arg(y)
                .launch(grid(self.len()))?;
        }
        Ok(())
    }

    /// Zeroes the fixed DOFs of `x` (`weft_mask`).
    pub(crate) fn mask(&self, x: &mut CudaSlice<f64>) -> Result<(), CudaError> {
        let b = self.backend;
        let li = self.len() as i32;
        // SAFETY: signature of weft_mask (len, free, v); 5 n entries.
        unsafe {
            b.stream
                .launch_builder(b.f("weft_mask"))
                .arg(&li)
                .arg(&self.free)
                .arg(x)
                .launch(grid(self.len()))?;
        }
        Ok(())
    }

    /// `out = q_n + h v` (`weft_advance`).
    pub(crate) fn advance_into(
        &self,
        q_n: &CudaSlice<f64>,
        v: &CudaSlice<f64>,
        h: f64,
        out: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let b = self.backend;
        let li = self.len() as i32;
        // SAFETY: signature of weft_advance (n, q_n, v, h, q); 5 n entries.
        unsafe {
            b.stream
                .launch_builder(b.f("weft_advance"))
                .arg(&li)
                .arg(q_n)
                .arg(v)
                .arg(&h)
                .arg(out)
                .launch(grid(self.len()))?;
        }
        Ok(())
    }

    /// `xᵀy` (`weft_dot_partial` + `weft_sum_partials`; one scalar read).
    pub(crate) fn dot_dev(
        &mut self,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
    ) -> Result<f64, CudaError> {
        let bk = self.backend;
        let li = self.len() as i32;
        let red = reduction_grid(self.len());
        // SAFETY: signature of weft_dot_partial; partial holds ≥ blocks.
        unsafe {
            bk.stream
                .launch_builder(bk.f("weft_dot_partial"))
                .arg(&li)
                .arg(x)
                .arg(y)
                .arg(&mut self.partial)
                .launch(red)?;
        }
        reduce_into(bk, &self.partial, red.grid_dim.0, &mut self.tmp)
    }

    /// `(max |x_i|, i)` over the `5 n` entries (NaN ignored; `(0, 0)` when
    /// every entry is NaN), two launches of `weft_max_abs`, two scalars read.
    pub(crate) fn max_abs(&mut self, x: &CudaSlice<f64>) -> Result<(f64, usize), CudaError> {
        let b = self.backend;
        let s = &b.stream;
        let cfg = reduction_grid(self.len());
        let blocks = cfg.grid_dim.0 as i32;
        let n = self.len() as i32;
        let null = 0u64;
        // SAFETY: signature of weft_max_abs; partial/part_idx hold at least
        // `blocks` (≤ MAX_REDUCTION_BLOCKS) entries; a null idx_in is a zero
        // pointer; max_val/max_idx hold one entry.
        unsafe {
            s.launch_builder(b.f("weft_max_abs"))
                .arg(&n)
                .arg(x)
                .arg(&null)
                .arg(&mut self.partial)
                .arg(&mut self.part_idx)
                .launch(cfg)?;
            s.launch_builder(b.f("weft_max_abs"))
                .arg(&blocks)
                .arg(&self.partial)
                .arg(&self.part_idx)
                .arg(&mut self.tmp)
                .arg(&mut self.max_idx)
                .launch(LaunchConfig {
                    grid_dim: (1, 1, 1),
                    block_dim: (THREADS, 1, 1),
                    shared_mem_bytes: 0,
                })?;
        }
        let v = s.clone_dtoh(&self.tmp)?[0];
        let i = s.clone_dtoh(&self.max_idx)?[0] as usize;
        Ok(if v < 0.0 { (0.0, 0) } else { (v, i) })
    }

    /// Copies the step-start state into the system's `q_n`, `v_n` buffers
    /// (once per step).
    pub(crate) fn load_step_state(
        &mut self,
        q_n: &CudaSlice<f64>,
        v_n: &CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let s = &self.backend.stream;
        s.memcpy_dtod(q_n, &mut self.q_n)?;
        s.memcpy_dtod(v_n, &mut self.v_n)?;
        Ok(())
    }

    /// Assembles at the iterate `v` (copied into the system's `v` buffer)
    /// and swaps the masked residual into `r` (no copy).
    pub(crate) fn assemble_into(
        &mut self,
        v: &CudaSlice<f64>,
        h: f64,
        r: &mut CudaSlice<f64>,
        with_matrix: bool,
    ) -> Result<Energies, CudaError> {
        self.backend.stream.memcpy_dtod(v, &mut self.v)?;
        let e = self.assemble_energies(h, with_matrix)?;
        self.mask_residual_into(r)?;
        Ok(e)
    }

    /// The system matrix at the iterate `v` (copied into the system's `v`
    /// buffer) without reading the energies back; the masked residual is
    /// swapped into `scratch` (the Newton loop has it already: see
    /// [`weft_solver::StepBackend::assemble_matrix`]).
    pub(crate) fn assemble_matrix_into(
        &mut self,
        v: &CudaSlice<f64>,
        h: f64,
        scratch: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        self.backend.stream.memcpy_dtod(v, &mut self.v)?;
        self.launch_assembly(h, true)?;
        self.mask_residual_into(scratch)
    }

    /// Zeroes the fixed DOFs of the system's residual and swaps it into `r`
    /// (no copy).
    fn mask_residual_into(&mut self, r: &mut CudaSlice<f64>) -> Result<(), CudaError> {
        let bk = self.backend;
        let li = self.len() as i32;
        let cfg = grid(self.len());
        // SAFETY: signature of weft_mask (len, free, v); 5 n entries.
        unsafe {
            bk.stream
                .launch_builder(bk.f("weft_mask"))
                .arg(&li)
                .arg(&self.free)
                .arg(&mut self.residual)
                .launch(cfg)?;
        }
        std::mem::swap(&mut self.residual, r);
        Ok(())
    }

    /// Solves `A dv = rhs` with block-Jacobi PCG on the device from
    /// `dv = 0` (preconditioner set up from the current matrix); the
    /// solution is swapped into `dv`.
    pub(crate) fn solve_into(
        &mut self,
        rhs: &CudaSlice<f64>,
        dv: &mut CudaSlice<f64>,
        tolerance: f64,
        max_iterations: usize,
    ) -> Result<PcgResult, CudaError> {
        self.setup_preconditioner()?;
        self.backend.stream.memcpy_dtod(rhs, &mut self.r)?;
        let res = self.solve_resident(tolerance, max_iterations)?;
        std::mem::swap(&mut self.x, dv);
        Ok(res)
    }

    /// Uploads the friction anchors (m, one per fabric anchor).
    ///
    /// # Errors
    /// [`CudaError::Length`] for a wrong length, [`CudaError::Driver`] when
    /// the copy fails.
    pub fn set_anchors(&mut self, anchors: &[f64]) -> Result<(), CudaError> {
        if anchors.is_empty() {
            return Ok(());
        }
        check_len("anchors", anchors.len(), self.anchor_count)?;
        Ok(self
            .backend
            .stream
            .memcpy_htod(anchors, &mut self.anchors)?)
    }

    /// Uploads the contacts of the step (plane, sphere, capsule at the
    /// step's end time, the mesh colliders' tangent planes and the
    /// self-collision pairs; once per step).
    ///
    /// # Errors
    /// [`CudaError::Length`] when the plane offsets do not have `n + 1`
    /// entries, [`CudaError::Driver`] when a copy fails.
    pub(crate) fn set_colliders(&mut self, colliders: &StepColliders) -> Result<(), CudaError> {
        let s = &self.backend.stream;
        let analytic = &colliders.analytic;
        self.collider_count = analytic.len();
        self.colliders = if analytic.is_empty() {
            None
        } else {
            Some(s.clone_htod(analytic)?)
        };
        self.planes = if colliders.planes.is_empty() {
            None
        } else {
            check_len(
                "plane offsets",
                colliders.plane_offsets.len(),
                self.nodes + 1,
            )?;
            Some((
                s.clone_htod(&colliders.plane_offsets)?,
                s.clone_htod(&colliders.planes)?,
            ))
        };
        self.pairs = if colliders.pairs.is_empty() {
            None
        } else {
            Some((
                s.clone_htod(&colliders.pairs)?,
                colliders.face_from as i32,
                colliders.d0,
                colliders.repulsion_stiffness,
                colliders.repulsion_law,
            ))
        };
        self.attachments = if colliders.attach_nodes.is_empty() {
            None
        } else {
            Some((
                s.clone_htod(&colliders.attach_nodes)?,
                s.clone_htod(&colliders.attach_points)?,
                s.clone_htod(&colliders.attach_stiffness)?,
            ))
        };
        Ok(())
    }

    /// Writes single entries `x[i] = value` (a few per step: handle DOFs).
    pub(crate) fn set_entries(
        &self,
        x: &mut CudaSlice<f64>,
        entries: &[(usize, f64)],
    ) -> Result<(), CudaError> {
        let s = &self.backend.stream;
        for &(i, val) in entries {
            s.memcpy_htod(&[val], &mut x.slice_mut(i..i + 1))?;
        }
        Ok(())
    }

    /// The entries of a device vector on the host.
    pub(crate) fn download(&self, x: &CudaSlice<f64>) -> Result<Vec<f64>, CudaError> {
        Ok(self.backend.stream.clone_dtoh(x)?)
    }

    /// Uploads a host vector of `5 n` entries into a new device vector.
    ///
    /// # Errors
    /// [`CudaError::Length`] for a wrong length, [`CudaError::Driver`] when
    /// the copy fails.
    pub fn upload(&self, x: &[f64]) -> Result<CudaSlice<f64>, CudaError> {
        check_len("state", x.len(), self.len())?;
        Ok(self.backend.stream.clone_htod(x)?)
    }
}

impl DeviceSystem<'_> {
    /// Uploads a host buffer of any length (benchmark buffers).
    pub(crate) fn upload_raw(&self, x: &[f64]) -> Result<CudaSlice<f64>, CudaError> {
        Ok(self.backend.stream.clone_htod(x)?)
    }
}

impl DeviceSystem<'_> {
    /// Uploads the strain reference of the acceptance check (one stretch
    /// strain per segment, `Simulation::strain_reference`; once).
    ///
    /// # Errors
    /// [`CudaError::Length`] for a wrong length, [`CudaError::Driver`] when
    /// the copy fails.
    pub fn set_strain_reference(&mut self, strains: &[f64]) -> Result<(), CudaError> {
        let nseg = self.seg_offsets.last().copied().unwrap_or(0);
        check_len("strain reference", strains.len(), nseg)?;
        if nseg == 0 {
            return Ok(());
        }
        Ok(self
            .backend
            .stream
            .memcpy_htod(strains, &mut self.strain_ref)?)
    }

    /// The acceptance checks of `q` (`5 n`) on the device
    /// (`weft_accept_segments`, `weft_accept_finish`): the new strains stay
    /// on the device; three scalars (24 B) are read back.
    ///
    /// # Errors
    /// [`CudaError::Driver`] when a launch or copy fails.
    pub fn accept_segments(&mut self, q: &CudaSlice<f64>) -> Result<AcceptScalars, CudaError> {
        let nseg = self.seg_offsets.last().copied().unwrap_or(0);
        if nseg == 0 {
            return Ok(AcceptScalars::from_result([0.0, -1.0, 0.0]));
        }
        let b = self.backend;
        let s = &b.stream;
        let cfg = reduction_grid(nseg);
        let blocks = cfg.grid_dim.0 as i32;
        let n = nseg as i32;
        s.memset_zeros(&mut self.first_bad)?;
        // SAFETY: signatures of weft_accept_segments / weft_accept_finish;
        // seg arrays and strain buffers hold nseg entries, partial/part_idx
        // at least `blocks` (≤ MAX_REDUCTION_BLOCKS), result 3.
        unsafe {
            s.launch_builder(b.f("weft_accept_segments"))
                .arg(&n)
                .arg(&self.seg[0])
                .arg(&self.seg_slot)
                .arg(q)
                .arg(&self.strain_ref)
                .arg(&mut self.strain_new)
                .arg(&mut self.first_bad)
                .arg(&mut self.partial)
                .arg(&mut self.part_idx)
                .launch(cfg)?;
            s.launch_builder(b.f("weft_accept_finish"))
                .arg(&blocks)
                .arg(&self.partial)
                .arg(&self.part_idx)
                .arg(&self.first_bad)
                .arg(&mut self.accept_result)
                .launch(LaunchConfig {
                    grid_dim: (1, 1, 1),
                    block_dim: (THREADS, 1, 1),
                    shared_mem_bytes: 0,
                })?;
        }
        let r = s.clone_dtoh(&self.accept_result)?;
        Ok(AcceptScalars::from_result([r[0], r[1], r[2]]))
    }

    /// Makes the strains of the last [`DeviceSystem::accept_segments`] the
    /// strain reference (a buffer swap, no copy).
    pub fn commit_strains(&mut self) {
        std::mem::swap(&mut self.strain_ref, &mut self.strain_new);
    }

    /// Updates the friction anchors on the device from `q`
    /// (`weft_update_anchors`; nothing crosses the bus).
    ///
    /// # Errors
    /// [`CudaError::Driver`] when the launch fails.
    pub fn update_anchors(&mut self, q: &CudaSlice<f64>) -> Result<(), CudaError> {
        if self.anchor_count == 0 {
            return Ok(());
        }
        let b = self.backend;
        let count = self.anchor_count as i32;
        // SAFETY: signature of weft_update_anchors; the anchor arrays hold
        // anchor_count (x4, x2) entries, q 5 n.
        unsafe {
            b.stream
                .launch_builder(b.f("weft_update_anchors"))
                .arg(&count)
                .arg(&self.anchor_node)
                .arg(&self.anchor_slot)
                .arg(&self.anchor_material)
                .arg(&self.anchor_nbrs)
                .arg(&self.anchor_yarn_material)
                .arg(&self.anchor_side)
                .arg(&self.materials)
                .arg(&self.normal_force_floor)
                .arg(q)
                .arg(&mut self.anchors)
                .launch(grid(self.anchor_count))?;
        }
        Ok(())
    }

    /// The friction anchors (m) and the strain reference on the host (for
    /// a sync of the host simulation).
    ///
    /// # Errors
    /// [`CudaError::Driver`] when a copy fails.
    pub fn download_anchors_strains(&self) -> Result<(Vec<f64>, Vec<f64>), CudaError> {
        let s = &self.backend.stream;
        let nseg = self.seg_offsets.last().copied().unwrap_or(0);
        let mut a = s.clone_dtoh(&self.anchors)?;
        a.truncate(self.anchor_count);
        let mut e = s.clone_dtoh(&self.strain_ref)?;
        e.truncate(nseg);
        Ok((a, e))
    }
}
