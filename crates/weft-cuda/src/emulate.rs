//! The `.cu` kernels of `kernels/` executed **serially on the host** (one
//! thread per block, CUDA built-ins emulated in
//! `csrc/host_cuda_emulation.hpp`), driven by the same [`AssemblyPlan`] and
//! the same launch sequence the device path uses.
//!
//! This is how the kernels' own logic (gathers, the element-to-block
//! scatter, colourings, the sum of terms, reductions, the fused PCG
//! updates) is tested without a GPU: tests/emulation.rs compares it with the
//! CPU [`weft_solver::Assembler`] and [`weft_solver::pcg::pcg`]. It says
//! nothing about device-specific behaviour (warp shuffles with more than one
//! thread per block, atomics under contention, device math library ulps,
//! launch limits), which only a GPU run can check.
//!
//! Without a C++ compiler at build time every function returns
//! [`HostError::Unavailable`].

#![cfg_attr(
    not(weft_host_shim),
    allow(unused_mut, unused_variables, unused_imports, dead_code)
)]

use crate::host::{GpuCollider, HostError};
use crate::plan::{AcceptScalars, AssemblyPlan, GpuMaterial, StepColliders, energies_from};
use std::cell::RefCell;
use weft_solver::Energies;
use weft_solver::assembly::StrainPeak;
use weft_solver::bsr::Block;
use weft_solver::pcg::{LinearOps, PcgResult, PcgStatus};

#[cfg(weft_host_shim)]
#[allow(clippy::too_many_arguments)]
mod ffi {
    use super::{GpuCollider, GpuMaterial};
    unsafe extern "C" {
        pub fn weft_emu_assembly_block(block: u32, grid: u32);
        pub fn weft_emu_pcg_block(block: u32, grid: u32);
        pub fn weft_assemble_segments(
            elems: *const u32,
            count: i32,
            seg_nodes: *const u32,
            seg_slot: *const i32,
            seg_material: *const u32,
            seg_spacing: *const f64,
            seg_blocks: *const u32,
            materials: *const GpuMaterial,
            q: *const f64,
            v: *const f64,
            q_n: *const f64,
            v_n: *const f64,
            h: f64,
            gx: f64,
            gy: f64,
            gz: f64,
            drag: f64,
            residual: *mut f64,
            values: *mut f64,
            with_matrix: i32,
            jacobian_flags: i32,
            energies: *mut f64,
            seg_strain: *mut f64,
        );
        pub fn weft_assemble_bending(
            elems: *const u32,
            count: i32,
            bend_nodes: *const u32,
            bend_slot: *const i32,
            bend_material: *const u32,
            bend_blocks: *const u32,
            materials: *const GpuMaterial,
            q_n: *const f64,
            v: *const f64,
            h: f64,
            threshold: f64,
            residual: *mut f64,
            values: *mut f64,
            with_matrix: i32,
            jacobian_flags: i32,
            energies: *mut f64,
        );
        pub fn weft_assemble_triangles(
            elems: *const u32,
            count: i32,
            tri_nodes: *const u32,
            tri_data: *const f64,
            tri_blocks: *const u32,
            q_n: *const f64,
            v: *const f64,
            h: f64,
            residual: *mut f64,
            values: *mut f64,
            with_matrix: i32,
            jacobian_flags: i32,
            energies: *mut f64,
        );
        pub fn weft_assemble_hinges(
            elems: *const u32,
            count: i32,
            hinge_nodes: *const u32,
            hinge_data: *const f64,
            hinge_blocks: *const u32,
            q_n: *const f64,
            v: *const f64,
            h: f64,
            residual: *mut f64,
            values: *mut f64,
            with_matrix: i32,
            jacobian_flags: i32,
            energies: *mut f64,
        );
        pub fn weft_assemble_shear(
            elems: *const u32,
            count: i32,
            shear_nodes: *const u32,
            shear_material: *const u32,
            shear_spacing: *const f64,
            shear_blocks: *const u32,
            materials: *const GpuMaterial,
            q_n: *const f64,
            v: *const f64,
            h: f64,
            threshold: f64,
            residual: *mut f64,
            values: *mut f64,
            with_matrix: i32,
            jacobian_flags: i32,
            energies: *mut f64,
        );
        pub fn weft_assemble_anchors(
            count: i32,
            anchor_node: *const u32,
            anchor_slot: *const i32,
            anchor_material: *const u32,
            anchors: *const f64,
            materials: *const GpuMaterial,
            diag: *const u32,
            q_n: *const f64,
            v: *const f64,
            h: f64,
            residual: *mut f64,
            values: *mut f64,
            with_matrix: i32,
            energies: *mut f64,
        );
        pub fn weft_assemble_colliders(
            nodes: i32,
            colliders: *const GpuCollider,
            collider_count: i32,
            node_radius: *const f64,
            diag: *const u32,
            q_n: *const f64,
            q: *const f64,
            v: *const f64,
            h: f64,
            residual: *mut f64,
            values: *mut f64,
            with_matrix: i32,
            energies: *mut f64,
        );
        pub fn weft_assemble_planes(
            nodes: i32,
            plane_offsets: *const u32,
            planes: *const GpuCollider,
            node_radius: *const f64,
            diag: *const u32,
            q_n: *const f64,
            q: *const f64,
            v: *const f64,
            h: f64,
            residual: *mut f64,
            values: *mut f64,
            with_matrix: i32,
            energies: *mut f64,
        );
        pub fn weft_assemble_repulsion(
            count: i32,
            pair_nodes: *const u32,
            face_from: i32,
            law: i32,
            d0: f64,
            k: f64,
            diag: *const u32,
            q: *const f64,
            h: f64,
            residual: *mut f64,
            values: *mut f64,
            with_matrix: i32,
            energies: *mut f64,
        );
        pub fn weft_assemble_attachments(
            count: i32,
            attach_node: *const u32,
            attach_point: *const f64,
            attach_k: *const f64,
            diag: *const u32,
            q_n: *const f64,
            v: *const f64,
            h: f64,
            residual: *mut f64,
            values: *mut f64,
            with_matrix: i32,
            energies: *mut f64,
        );
        pub fn weft_assemble_ties(
            count: i32,
            tie_nodes: *const u32,
            tie_t: *const f64,
            tie_blocks: *const u32,
            k: f64,
            kd: f64,
            q_n: *const f64,
            v: *const f64,
            h: f64,
            residual: *mut f64,
            values: *mut f64,
            with_matrix: i32,
            energies: *mut f64,
        );
        pub fn weft_assemble_point_masses(
            nodes: i32,
            point_mass: *const f64,
            node_alpha: *const f64,
            diag: *const u32,
            q: *const f64,
            v: *const f64,
            v_n: *const f64,
            h: f64,
            gx: f64,
            gy: f64,
            gz: f64,
            residual: *mut f64,
            values: *mut f64,
            with_matrix: i32,
            energies: *mut f64,
        );
        pub fn weft_advance(n: i32, q_n: *const f64, v: *const f64, h: f64, q: *mut f64);
        pub fn weft_accept_segments(
            count: i32,
            seg_nodes: *const u32,
            seg_slot: *const i32,
            q: *const f64,
            strain_ref: *const f64,
            strain_new: *mut f64,
            first_bad: *mut u32,
            part_val: *mut f64,
            part_idx: *mut u32,
        );
        pub fn weft_accept_finish(
            blocks: i32,
            part_val: *const f64,
            part_idx: *const u32,
            first_bad: *const u32,
            result: *mut f64,
        );
        pub fn weft_update_anchors(
            count: i32,
            anchor_node: *const u32,
            anchor_slot: *const i32,
            anchor_material: *const u32,
            anchor_nbrs: *const u32,
            anchor_yarn_material: *const u32,
            anchor_side: *const f64,
            materials: *const GpuMaterial,
            floor: f64,
            q: *const f64,
            anchors: *mut f64,
        );
        pub fn weft_max_abs(
            n: i32,
            x: *const f64,
            idx_in: *const u32,
            part_val: *mut f64,
            part_idx: *mut u32,
        );
        pub fn weft_bsr_spmv(
            n: i32,
            row_ptr: *const u32,
            cols: *const u32,
            values: *const f64,
            x: *const f64,
            free: *const f64,
            y: *mut f64,
        );
        pub fn weft_bsr_spmv_dot(
            n: i32,
            row_ptr: *const u32,
            cols: *const u32,
            values: *const f64,
            x: *const f64,
            free: *const f64,
            y: *mut f64,
            partial: *mut f64,
        );
        pub fn weft_block_jacobi_setup(
            n: i32,
            diag: *const u32,
            values: *const f64,
            free: *const f64,
            inverse: *mut f64,
        );
        pub fn weft_block_jacobi_apply_dot(
            n: i32,
            inverse: *const f64,
            r: *const f64,
            z: *mut f64,
            partial: *mut f64,
        );
        pub fn weft_block_jacobi_apply(n: i32, inverse: *const f64, r: *const f64, z: *mut f64);
        pub fn weft_dot_partial(len: i32, a: *const f64, b: *const f64, partial: *mut f64);
        pub fn weft_sum_partials(count: i32, partial: *const f64, out: *mut f64);
        pub fn weft_axpy(len: i32, a: f64, x: *const f64, y: *mut f64);
        pub fn weft_xpby(len: i32, x: *const f64, b: f64, y: *mut f64);
        pub fn weft_mask(len: i32, free: *const f64, v: *mut f64);
        pub fn weft_pcg_update_xr(
            len: i32,
            scalars: *const f64,
            p: *const f64,
            ap: *const f64,
            x: *mut f64,
            r: *mut f64,
            partial: *mut f64,
        );
        pub fn weft_pcg_update_p(
            len: i32,
            rz_new: *const f64,
            rz_old: *const f64,
            z: *const f64,
            p: *mut f64,
        );
        pub fn weft_residual_start(
            len: i32,
            b: *const f64,
            ax: *const f64,
            free: *const f64,
            r: *mut f64,
        );
    }
}

/// Runs `$call` once per emulated block `0..$grid` after setting the block
/// index with `$set`.
#[cfg(weft_host_shim)]
macro_rules! launch {
    ($set:ident, $grid:expr, $call:expr) => {{
        let grid = ($grid) as u32;
        for b in 0..grid {
            // SAFETY: the setter only writes thread-local launch indices; the
            // kernel call's pointers come from live slices of the lengths the
            // kernel documents (checked by the callers below).
            unsafe {
                ffi::$set(b, grid);
                $call;
            }
        }
    }};
}

/// `weft_assemble_triangles` and `weft_assemble_hinges`: elements, count,
/// nodes, per-element data, blocks, `q_n`, `v`, `h`, residual, values,
/// `with_matrix`, `jacobian_flags`, energies.
#[cfg(weft_host_shim)]
type ShellKernel = unsafe extern "C" fn(
    *const u32,
    i32,
    *const u32,
    *const f64,
    *const u32,
    *const f64,
    *const f64,
    f64,
    *mut f64,
    *mut f64,
    i32,
    i32,
    *mut f64,
);

#[cfg(not(weft_host_shim))]
fn unavailable<T>() -> Result<T, HostError> {
    Err(HostError::Unavailable)
}

/// The backward-Euler residual and system matrix of one Newton iterate,
/// computed by the assembly kernels on the host: same contract as
/// [`weft_solver::Assembler::assemble`] (`q = q_n + h v`; `residual` of
/// length `5 n`, `values` the matrix blocks of the plan's pattern, rewritten
/// when `with_matrix`, with the exact or the PSD-projected elastic Hessians
/// as [`AssemblyPlan::exact_hessians`] says (and the dissipation's position
/// Jacobian as [`AssemblyPlan::dissipation_position_jacobian`] says); `anchors` one per fabric anchor, m; `colliders` from
/// [`crate::plan::colliders_at`] at the step's end time, analytic colliders,
/// the mesh colliders' tangent planes, the self-collision pairs and the
/// attachment springs). Returns the
/// energies and the largest stretch strain.
///
/// # Errors
/// [`HostError::Unavailable`] without the host build.
///
/// # Panics
/// When a slice length does not match the plan.
#[allow(clippy::too_many_arguments)]
pub fn assemble(
    plan: &AssemblyPlan,
    colliders: &StepColliders,
    q_n: &[f64],
    v_n: &[f64],
    v: &[f64],
    h: f64,
    anchors: &[f64],
    residual: &mut [f64],
    values: &mut [Block],
    with_matrix: bool,
) -> Result<(Energies, StrainPeak), HostError> {
    let len = 5 * plan.nodes;
    assert!(q_n.len() == len && v_n.len() == len && v.len() == len && residual.len() == len);
    assert_eq!(values.len(), plan.cols.len());
    assert_eq!(anchors.len(), plan.anchor_node.len());
    if !colliders.planes.is_empty() {
        assert_eq!(colliders.plane_offsets.len(), plan.nodes + 1);
    }
    #[cfg(not(weft_host_shim))]
    {
        unavailable()
    }
    #[cfg(weft_host_shim)]
    {
        let mut q = vec![0.0; len];
        launch!(
            weft_emu_assembly_block,
            len,
            ffi::weft_advance(len as i32, q_n.as_ptr(), v.as_ptr(), h, q.as_mut_ptr())
        );
        residual.iter_mut().for_each(|r| *r = 0.0);
        if with_matrix {
            values.iter_mut().for_each(|b| *b = [[0.0; 5]; 5]);
        }
        let vals = values.as_mut_ptr() as *mut f64;
        let wm = i32::from(with_matrix);
        let flags = crate::plan::jacobian_flags(
            plan.exact_hessians,
            plan.dissipation_position_jacobian,
            with_matrix,
        );
        let mut en = [0.0f64; 4];
        let nseg = plan.seg_slot.len();
        let mut seg_strain = vec![0.0; nseg];
        let [gx, gy, gz] = plan.gravity;
        for c in 0..plan.seg_colours.colours() {
            let elems = plan.seg_colours.colour(c);
            launch!(
                weft_emu_assembly_block,
                elems.len(),
                ffi::weft_assemble_segments(
                    elems.as_ptr(),
                    elems.len() as i32,
                    plan.seg_nodes.as_ptr(),
                    plan.seg_slot.as_ptr(),
                    plan.seg_material.as_ptr(),
                    plan.seg_spacing.as_ptr(),
                    plan.seg_blocks.as_ptr(),
                    plan.materials.as_ptr(),
                    q.as_ptr(),
                    v.as_ptr(),
                    q_n.as_ptr(),
                    v_n.as_ptr(),
                    h,
                    gx,
                    gy,
                    gz,
                    plan.drag,
                    residual.as_mut_ptr(),
                    vals,
                    wm,
                    flags,
                    en.as_mut_ptr(),
                    seg_strain.as_mut_ptr(),
                )
            );
        }
        for c in 0..plan.bend_colours.colours() {
            let elems = plan.bend_colours.colour(c);
            launch!(
                weft_emu_assembly_block,
                elems.len(),
                ffi::weft_assemble_bending(
                    elems.as_ptr(),
                    elems.len() as i32,
                    plan.bend_nodes.as_ptr(),
                    plan.bend_slot.as_ptr(),
                    plan.bend_material.as_ptr(),
                    plan.bend_blocks.as_ptr(),
                    plan.materials.as_ptr(),
                    q_n.as_ptr(),
                    v.as_ptr(),
                    h,
                    plan.bending_threshold,
                    residual.as_mut_ptr(),
                    vals,
                    wm,
                    flags,
                    en.as_mut_ptr(),
                )
            );
        }
        for c in 0..plan.shear_colours.colours() {
            let elems = plan.shear_colours.colour(c);
            launch!(
                weft_emu_assembly_block,
                elems.len(),
                ffi::weft_assemble_shear(
                    elems.as_ptr(),
                    elems.len() as i32,
                    plan.shear_nodes.as_ptr(),
                    plan.shear_material.as_ptr(),
                    plan.shear_spacing.as_ptr(),
                    plan.shear_blocks.as_ptr(),
                    plan.materials.as_ptr(),
                    q_n.as_ptr(),
                    v.as_ptr(),
                    h,
                    plan.shear_threshold,
                    residual.as_mut_ptr(),
                    vals,
                    wm,
                    flags,
                    en.as_mut_ptr(),
                )
            );
        }
        // Triangles and hinges: the same kernel signature over their own
        // colouring, nodes, per-element data and blocks.
        let shell_kernels = [
            (
                ffi::weft_assemble_triangles as ShellKernel,
                &plan.tri_colours,
                &plan.tri_nodes,
                &plan.tri_data,
                &plan.tri_blocks,
            ),
            (
                ffi::weft_assemble_hinges as ShellKernel,
                &plan.hinge_colours,
                &plan.hinge_nodes,
                &plan.hinge_data,
                &plan.hinge_blocks,
            ),
        ];
        for (kernel, colouring, nodes, data, blocks) in shell_kernels {
            for c in 0..colouring.colours() {
                let elems = colouring.colour(c);
                launch!(
                    weft_emu_assembly_block,
                    elems.len(),
                    kernel(
                        elems.as_ptr(),
                        elems.len() as i32,
                        nodes.as_ptr(),
                        data.as_ptr(),
                        blocks.as_ptr(),
                        q_n.as_ptr(),
                        v.as_ptr(),
                        h,
                        residual.as_mut_ptr(),
                        vals,
                        wm,
                        flags,
                        en.as_mut_ptr(),
                    )
                );
            }
        }
        let na = plan.anchor_node.len();
        launch!(
            weft_emu_assembly_block,
            na,
            ffi::weft_assemble_anchors(
                na as i32,
                plan.anchor_node.as_ptr(),
                plan.anchor_slot.as_ptr(),
                plan.anchor_material.as_ptr(),
                anchors.as_ptr(),
                plan.materials.as_ptr(),
                plan.diag.as_ptr(),
                q_n.as_ptr(),
                v.as_ptr(),
                h,
                residual.as_mut_ptr(),
                vals,
                wm,
                en.as_mut_ptr(),
            )
        );
        let nties = plan.tie_t.len();
        if nties > 0 && (plan.tie_stiffness > 0.0 || plan.tie_damping > 0.0) {
            launch!(
                weft_emu_assembly_block,
                nties,
                ffi::weft_assemble_ties(
                    nties as i32,
                    plan.tie_nodes.as_ptr(),
                    plan.tie_t.as_ptr(),
                    plan.tie_blocks.as_ptr(),
                    plan.tie_stiffness,
                    plan.tie_damping,
                    q_n.as_ptr(),
                    v.as_ptr(),
                    h,
                    residual.as_mut_ptr(),
                    vals,
                    wm,
                    en.as_mut_ptr(),
                )
            );
        }
        let natt = colliders.attach_nodes.len();
        if natt > 0 {
            launch!(
                weft_emu_assembly_block,
                natt,
                ffi::weft_assemble_attachments(
                    natt as i32,
                    colliders.attach_nodes.as_ptr(),
                    colliders.attach_points.as_ptr(),
                    colliders.attach_stiffness.as_ptr(),
                    plan.diag.as_ptr(),
                    q_n.as_ptr(),
                    v.as_ptr(),
                    h,
                    residual.as_mut_ptr(),
                    vals,
                    wm,
                    en.as_mut_ptr(),
                )
            );
        }
        let npairs = colliders.pairs.len() / 4;
        if npairs > 0 {
            launch!(
                weft_emu_assembly_block,
                npairs,
                ffi::weft_assemble_repulsion(
                    npairs as i32,
                    colliders.pairs.as_ptr(),
                    colliders.face_from as i32,
                    colliders.repulsion_law,
                    colliders.d0,
                    colliders.repulsion_stiffness,
                    plan.diag.as_ptr(),
                    q.as_ptr(),
                    h,
                    residual.as_mut_ptr(),
                    vals,
                    wm,
                    en.as_mut_ptr(),
                )
            );
        }
        let planes = &colliders.planes;
        let colliders_offsets = &colliders.plane_offsets;
        let colliders = &colliders.analytic;
        if !colliders.is_empty() {
            launch!(
                weft_emu_assembly_block,
                plan.nodes,
                ffi::weft_assemble_colliders(
                    plan.nodes as i32,
                    colliders.as_ptr(),
                    colliders.len() as i32,
                    plan.node_radius.as_ptr(),
                    plan.diag.as_ptr(),
                    q_n.as_ptr(),
                    q.as_ptr(),
                    v.as_ptr(),
                    h,
                    residual.as_mut_ptr(),
                    vals,
                    wm,
                    en.as_mut_ptr(),
                )
            );
        }
        if !planes.is_empty() {
            launch!(
                weft_emu_assembly_block,
                plan.nodes,
                ffi::weft_assemble_planes(
                    plan.nodes as i32,
                    colliders_offsets.as_ptr(),
                    planes.as_ptr(),
                    plan.node_radius.as_ptr(),
                    plan.diag.as_ptr(),
                    q_n.as_ptr(),
                    q.as_ptr(),
                    v.as_ptr(),
                    h,
                    residual.as_mut_ptr(),
                    vals,
                    wm,
                    en.as_mut_ptr(),
                )
            );
        }
        launch!(
            weft_emu_assembly_block,
            plan.nodes,
            ffi::weft_assemble_point_masses(
                plan.nodes as i32,
                plan.point_mass.as_ptr(),
                plan.node_alpha.as_ptr(),
                plan.diag.as_ptr(),
                q.as_ptr(),
                v.as_ptr(),
                v_n.as_ptr(),
                h,
                gx,
                gy,
                gz,
                residual.as_mut_ptr(),
                vals,
                wm,
                en.as_mut_ptr(),
            )
        );
        // Largest |strain|: per-block partials, then one block over them.
        let mut peak = StrainPeak::default();
        if nseg > 0 {
            let mut pv = vec![0.0; nseg];
            let mut pi = vec![0u32; nseg];
            launch!(
                weft_emu_assembly_block,
                nseg,
                ffi::weft_max_abs(
                    nseg as i32,
                    seg_strain.as_ptr(),
                    std::ptr::null(),
                    pv.as_mut_ptr(),
                    pi.as_mut_ptr(),
                )
            );
            let (mut v1, mut i1) = ([0.0], [0u32]);
            launch!(
                weft_emu_assembly_block,
                1,
                ffi::weft_max_abs(
                    nseg as i32,
                    pv.as_ptr(),
                    pi.as_ptr(),
                    v1.as_mut_ptr(),
                    i1.as_mut_ptr(),
                )
            );
            peak = StrainPeak {
                value: v1[0],
                segment: i1[0] as usize,
            };
        }
        Ok((energies_from(&en), peak))
    }
}

/// Blocks of the emulated acceptance reduction: one per element up to
/// 1024, so that several partials are reduced as on the device.
#[cfg(weft_host_shim)]
fn accept_blocks(count: usize) -> usize {
    count.clamp(1, 1024)
}

/// The acceptance kernels (`weft_accept_segments`, `weft_accept_finish`)
/// run on the host over the plan's segments at the coordinates `q` (`5 n`,
/// m) against the strain reference `strain_ref` (one per segment); the new
/// strains go to `strain_new`.
///
/// # Errors
/// [`HostError::Unavailable`] without the host build.
///
/// # Panics
/// When a slice length does not match the plan.
pub fn accept_segments(
    plan: &AssemblyPlan,
    q: &[f64],
    strain_ref: &[f64],
    strain_new: &mut [f64],
) -> Result<AcceptScalars, HostError> {
    let nseg = plan.seg_slot.len();
    assert_eq!(q.len(), 5 * plan.nodes);
    assert!(strain_ref.len() == nseg && strain_new.len() == nseg);
    #[cfg(not(weft_host_shim))]
    {
        unavailable()
    }
    #[cfg(weft_host_shim)]
    {
        let blocks = accept_blocks(nseg);
        let mut first_bad = [0u32];
        let mut pv = vec![0.0; blocks];
        let mut pi = vec![0u32; blocks];
        launch!(
            weft_emu_assembly_block,
            blocks,
            ffi::weft_accept_segments(
                nseg as i32,
                plan.seg_nodes.as_ptr(),
                plan.seg_slot.as_ptr(),
                q.as_ptr(),
                strain_ref.as_ptr(),
                strain_new.as_mut_ptr(),
                first_bad.as_mut_ptr(),
                pv.as_mut_ptr(),
                pi.as_mut_ptr(),
            )
        );
        let mut result = [0.0; 3];
        launch!(
            weft_emu_assembly_block,
            1,
            ffi::weft_accept_finish(
                blocks as i32,
                pv.as_ptr(),
                pi.as_ptr(),
                first_bad.as_ptr(),
                result.as_mut_ptr(),
            )
        );
        Ok(AcceptScalars::from_result(result))
    }
}

/// The friction-anchor update kernel (`weft_update_anchors`) run on the
/// host: `anchors` (m, one per plan anchor) updated in place from the
/// coordinates `q` (`5 n`), as `Assembler::update_anchors`.
///
/// # Errors
/// [`HostError::Unavailable`] without the host build.
///
/// # Panics
/// When a slice length does not match the plan.
pub fn update_anchors(
    plan: &AssemblyPlan,
    q: &[f64],
    anchors: &mut [f64],
) -> Result<(), HostError> {
    let na = plan.anchor_node.len();
    assert_eq!(q.len(), 5 * plan.nodes);
    assert_eq!(anchors.len(), na);
    #[cfg(not(weft_host_shim))]
    {
        unavailable()
    }
    #[cfg(weft_host_shim)]
    {
        launch!(
            weft_emu_assembly_block,
            na,
            ffi::weft_update_anchors(
                na as i32,
                plan.anchor_node.as_ptr(),
                plan.anchor_slot.as_ptr(),
                plan.anchor_material.as_ptr(),
                plan.anchor_nbrs.as_ptr(),
                plan.anchor_yarn_material.as_ptr(),
                plan.anchor_side.as_ptr(),
                plan.materials.as_ptr(),
                plan.normal_force_floor,
                q.as_ptr(),
                anchors.as_mut_ptr(),
            )
        );
        Ok(())
    }
}

/// [`LinearOps`] over the PCG kernels run on the host: the system matrix
/// `values` on the plan's pattern, block-Jacobi inverses set up by
/// `weft_block_jacobi_setup`.
pub struct EmulatedOps<'a> {
    plan: &'a AssemblyPlan,
    values: &'a [Block],
    /// Inverse diagonal blocks (25 per node, row-major), from the kernel.
    pub inverse: Vec<f64>,
    partial: RefCell<Vec<f64>>,
}

impl<'a> EmulatedOps<'a> {
    /// Sets up the block-Jacobi preconditioner of `values` with the kernel.
    ///
    /// # Errors
    /// [`HostError::Unavailable`] without the host build.
    pub fn new(plan: &'a AssemblyPlan, values: &'a [Block]) -> Result<Self, HostError> {
        assert_eq!(values.len(), plan.cols.len());
        let n = plan.nodes;
        let mut inverse = vec![0.0; 25 * n];
        #[cfg(not(weft_host_shim))]
        {
            let _ = &mut inverse;
            unavailable()
        }
        #[cfg(weft_host_shim)]
        {
            launch!(
                weft_emu_pcg_block,
                n,
                ffi::weft_block_jacobi_setup(
                    n as i32,
                    plan.diag.as_ptr(),
                    values.as_ptr() as *const f64,
                    plan.free.as_ptr(),
                    inverse.as_mut_ptr(),
                )
            );
            Ok(Self {
                plan,
                values,
                inverse,
                partial: RefCell::new(vec![0.0; 5 * n]),
            })
        }
    }

    fn len(&self) -> usize {
        5 * self.plan.nodes
    }

    /// Sum of the first `count` partials with `weft_sum_partials`.
    #[cfg(weft_host_shim)]
    fn sum(&self, count: usize) -> f64 {
        let partial = self.partial.borrow();
        let mut out = [0.0];
        launch!(
            weft_emu_pcg_block,
            1,
            ffi::weft_sum_partials(count as i32, partial.as_ptr(), out.as_mut_ptr())
        );
        out[0]
    }
}

#[cfg(weft_host_shim)]
impl LinearOps for EmulatedOps<'_> {
    fn apply(&self, x: &[f64], y: &mut [f64]) {
        let p = self.plan;
        launch!(
            weft_emu_pcg_block,
            p.nodes,
            ffi::weft_bsr_spmv(
                p.nodes as i32,
                p.row_ptr.as_ptr(),
                p.cols.as_ptr(),
                self.values.as_ptr() as *const f64,
                x.as_ptr(),
                p.free.as_ptr(),
                y.as_mut_ptr(),
            )
        );
    }
    fn precondition(&self, r: &[f64], z: &mut [f64]) {
        let n = self.plan.nodes;
        launch!(
            weft_emu_pcg_block,
            n,
            ffi::weft_block_jacobi_apply(
                n as i32,
                self.inverse.as_ptr(),
                r.as_ptr(),
                z.as_mut_ptr()
            )
        );
    }
    fn dot(&self, a: &[f64], b: &[f64]) -> f64 {
        let len = self.len();
        {
            let mut partial = self.partial.borrow_mut();
            launch!(
                weft_emu_pcg_block,
                len,
                ffi::weft_dot_partial(len as i32, a.as_ptr(), b.as_ptr(), partial.as_mut_ptr())
            );
        }
        self.sum(len)
    }
    fn axpy(&self, a: f64, x: &[f64], y: &mut [f64]) {
        let len = self.len();
        launch!(
            weft_emu_pcg_block,
            len,
            ffi::weft_axpy(len as i32, a, x.as_ptr(), y.as_mut_ptr())
        );
    }
    fn xpby(&self, x: &[f64], b: f64, y: &mut [f64]) {
        let len = self.len();
        launch!(
            weft_emu_pcg_block,
            len,
            ffi::weft_xpby(len as i32, x.as_ptr(), b, y.as_mut_ptr())
        );
    }
    fn mask(&self, v: &mut [f64]) {
        let len = self.len();
        launch!(
            weft_emu_pcg_block,
            len,
            ffi::weft_mask(len as i32, self.plan.free.as_ptr(), v.as_mut_ptr())
        );
    }
}

/// PCG as the device loop runs it, with the fused kernels
/// (`weft_bsr_spmv_dot`, `weft_pcg_update_xr`,
/// `weft_block_jacobi_apply_dot`, `weft_pcg_update_p`): the step lengths
/// `α = rᵀz / pᵀAp` and `β = rᵀz' / rᵀz` are read by the kernels from
/// device scalars, and only `|r|` (and `pᵀAp` for the curvature check)
/// would cross to the host per iteration. Same contract and stopping rules
/// as [`weft_solver::pcg::pcg`].
///
/// # Errors
/// [`HostError::Unavailable`] without the host build.
pub fn fused_pcg(
    ops: &EmulatedOps<'_>,
    b: &[f64],
    x: &mut [f64],
    tolerance: f64,
    max_iterations: usize,
) -> Result<PcgResult, HostError> {
    #[cfg(not(weft_host_shim))]
    {
        unavailable()
    }
    #[cfg(weft_host_shim)]
    {
        let p = ops.plan;
        let (n, len) = (p.nodes, ops.len());
        let vals = ops.values.as_ptr() as *const f64;
        let spmv = |x: &[f64], y: &mut [f64]| ops.apply(x, y);
        let mut ax = vec![0.0; len];
        spmv(x, &mut ax);
        let mut r = vec![0.0; len];
        launch!(
            weft_emu_pcg_block,
            len,
            ffi::weft_residual_start(
                len as i32,
                b.as_ptr(),
                ax.as_ptr(),
                p.free.as_ptr(),
                r.as_mut_ptr()
            )
        );
        let mut bm = b.to_vec();
        ops.mask(&mut bm);
        let b_norm = ops.dot(&bm, &bm).sqrt();
        if b_norm == 0.0 {
            x.iter_mut().for_each(|v| *v = 0.0);
            return Ok(PcgResult {
                status: PcgStatus::Converged,
                iterations: 0,
                relative_residual: 0.0,
            });
        }
        let mut z = vec![0.0; len];
        // scalars = [rz, pAp]; rz_new separately for β.
        let mut scalars = [0.0f64; 2];
        let mut rz_new = [0.0f64];
        {
            let mut partial = ops.partial.borrow_mut();
            launch!(
                weft_emu_pcg_block,
                n,
                ffi::weft_block_jacobi_apply_dot(
                    n as i32,
                    ops.inverse.as_ptr(),
                    r.as_ptr(),
                    z.as_mut_ptr(),
                    partial.as_mut_ptr()
                )
            );
        }
        scalars[0] = ops.sum(n);
        let mut pv = z.clone();
        let mut ap = vec![0.0; len];
        let mut rr = ops.dot(&r, &r);
        for it in 0..max_iterations {
            let rn = rr.sqrt();
            if rn <= tolerance * b_norm {
                return Ok(PcgResult {
                    status: PcgStatus::Converged,
                    iterations: it,
                    relative_residual: rn / b_norm,
                });
            }
            {
                let mut partial = ops.partial.borrow_mut();
                launch!(
                    weft_emu_pcg_block,
                    n,
                    ffi::weft_bsr_spmv_dot(
                        n as i32,
                        p.row_ptr.as_ptr(),
                        p.cols.as_ptr(),
                        vals,
                        pv.as_ptr(),
                        p.free.as_ptr(),
                        ap.as_mut_ptr(),
                        partial.as_mut_ptr()
                    )
                );
            }
            scalars[1] = ops.sum(n);
            let pap = scalars[1];
            if pap <= 0.0 || !pap.is_finite() {
                if it == 0 {
                    x.copy_from_slice(&z);
                }
                return Ok(PcgResult {
                    status: PcgStatus::NegativeCurvature,
                    iterations: it,
                    relative_residual: rn / b_norm,
                });
            }
            {
                let mut partial = ops.partial.borrow_mut();
                launch!(
                    weft_emu_pcg_block,
                    len,
                    ffi::weft_pcg_update_xr(
                        len as i32,
                        scalars.as_ptr(),
                        pv.as_ptr(),
                        ap.as_ptr(),
                        x.as_mut_ptr(),
                        r.as_mut_ptr(),
                        partial.as_mut_ptr()
                    )
                );
            }
            rr = ops.sum(len);
            {
                let mut partial = ops.partial.borrow_mut();
                launch!(
                    weft_emu_pcg_block,
                    n,
                    ffi::weft_block_jacobi_apply_dot(
                        n as i32,
                        ops.inverse.as_ptr(),
                        r.as_ptr(),
                        z.as_mut_ptr(),
                        partial.as_mut_ptr()
                    )
                );
            }
            rz_new[0] = ops.sum(n);
            launch!(
                weft_emu_pcg_block,
                len,
                ffi::weft_pcg_update_p(
                    len as i32,
                    rz_new.as_ptr(),
                    scalars.as_ptr(),
                    z.as_ptr(),
                    pv.as_mut_ptr()
                )
            );
            scalars[0] = rz_new[0];
        }
        let rn = rr.sqrt();
        Ok(PcgResult {
            status: if rn <= tolerance * b_norm {
                PcgStatus::Converged
            } else {
                PcgStatus::MaxIterations
            },
            iterations: max_iterations,
            relative_residual: rn / b_norm,
        })
    }
}

#[cfg(not(weft_host_shim))]
impl LinearOps for EmulatedOps<'_> {
    // Without the host build `EmulatedOps::new` always fails, so no value
    // exists to call these on.
    fn apply(&self, _: &[f64], _: &mut [f64]) {
        unreachable!("EmulatedOps cannot be constructed without the host build")
    }
    fn precondition(&self, _: &[f64], _: &mut [f64]) {
        unreachable!("EmulatedOps cannot be constructed without the host build")
    }
    fn dot(&self, _: &[f64], _: &[f64]) -> f64 {
        unreachable!("EmulatedOps cannot be constructed without the host build")
    }
    fn axpy(&self, _: f64, _: &[f64], _: &mut [f64]) {
        unreachable!("EmulatedOps cannot be constructed without the host build")
    }
    fn xpby(&self, _: &[f64], _: f64, _: &mut [f64]) {
        unreachable!("EmulatedOps cannot be constructed without the host build")
    }
    fn mask(&self, _: &mut [f64]) {
        unreachable!("EmulatedOps cannot be constructed without the host build")
    }
}
