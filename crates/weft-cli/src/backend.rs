//! `--backend auto|cpu|cuda` of `weft run`, `weft drape` and `weft bench`:
//! which engine steps the simulation, and why.

use anyhow::{Result, anyhow};
use clap::ValueEnum;
use weft_cuda::cuda::CudaBackend;
use weft_cuda::step::{CudaSimulation, check_supported};
use weft_cuda::{Device, NoDevice};
use weft_solver::{Simulation, SolverError, StepStats};

/// The `--backend` flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    /// CUDA when a usable driver and device are found and the scene uses
    /// only what the CUDA backend implements; otherwise the CPU, with a
    /// one-line message saying why.
    Auto,
    /// The CPU backend (rayon; sparse Cholesky or block-Jacobi PCG).
    Cpu,
    /// The CUDA backend (block-Jacobi PCG on the device); an error when no
    /// usable device is found or the scene uses a feature it lacks.
    Cuda,
}

/// The engine chosen for a simulation.
pub enum Selected {
    /// The CPU; `reason` says why `auto` did not pick CUDA (`None` when the
    /// CPU was asked for).
    Cpu {
        /// Why not CUDA.
        reason: Option<String>,
    },
    /// The CUDA backend with its kernels loaded.
    Cuda(Box<CudaBackend>),
}

impl Selected {
    /// One line for the terminal: the backend used and, for the CPU under
    /// `auto`, why.
    pub fn describe(&self) -> String {
        match self {
            Selected::Cpu { reason: None } => "backend: cpu".into(),
            Selected::Cpu {
                reason: Some(why), ..
            } => format!("backend: cpu ({why})"),
            Selected::Cuda(b) => format!(
                "backend: cuda ({}, compute capability {}.{}, block-Jacobi PCG on the device)",
                b.device.name, b.device.compute_capability.0, b.device.compute_capability.1
            ),
        }
    }
}

/// Picks the engine for `sim` (`what` names the command in errors).
///
/// # Errors
/// With `cuda`: the scene uses a feature the CUDA backend lacks (named), no
/// usable driver/device (why), or the kernels fail to compile or load.
pub fn select(choice: BackendChoice, sim: &Simulation, what: &str) -> Result<Selected> {
    match choice {
        BackendChoice::Cpu => Ok(Selected::Cpu { reason: None }),
        BackendChoice::Cuda => {
            check_supported(sim).map_err(|e| {
                anyhow!("{what} --backend cuda: the CUDA backend does not support this scene: {e}")
            })?;
            let b = CudaBackend::new()
                .map_err(|e| anyhow!("{what} --backend cuda: no usable CUDA device: {e}"))?;
            Ok(Selected::Cuda(Box::new(b)))
        }
        BackendChoice::Auto => {
            if let Err(e) = check_supported(sim) {
                return Ok(Selected::Cpu {
                    reason: Some(format!("auto: the scene needs the CPU: {e}")),
                });
            }
            match Device::detect() {
                Err(e) => Ok(Selected::Cpu {
                    reason: Some(format!("auto: {}", no_device(&e))),
                }),
                Ok(_) => match CudaBackend::new() {
                    Ok(b) => Ok(Selected::Cuda(Box::new(b))),
                    Err(e) => Ok(Selected::Cpu {
                        reason: Some(format!("auto: the CUDA backend failed to start: {e}")),
                    }),
                },
            }
        }
    }
}

fn no_device(e: &NoDevice) -> String {
    format!("no usable CUDA device: {e}")
}

/// A simulation on the engine [`select`] chose.
pub enum Engine<'b> {
    /// Stepped on the CPU.
    Cpu(Box<Simulation>),
    /// Stepped on the device (state resident there; `sim` mirrors it).
    Cuda(Box<CudaSimulation<'b>>),
}

impl<'b> Engine<'b> {
    /// Wraps `sim` for `selected` (uploads it to the device for CUDA).
    ///
    /// # Errors
    /// A device failure while uploading.
    pub fn new(selected: &'b Selected, sim: Simulation) -> Result<Self> {
        Ok(match selected {
            Selected::Cpu { .. } => Engine::Cpu(Box::new(sim)),
            Selected::Cuda(b) => Engine::Cuda(Box::new(CudaSimulation::new(b, sim)?)),
        })
    }

    /// The host simulation (on CUDA: the mirror, current after every
    /// [`Engine::advance_to`]).
    pub fn sim(&self) -> &Simulation {
        match self {
            Engine::Cpu(s) => s,
            Engine::Cuda(c) => &c.sim,
        }
    }

    /// Mutable access to the host simulation (for energies and outputs;
    /// changing the model on CUDA has no effect on the device).
    pub fn sim_mut(&mut self) -> &mut Simulation {
        match self {
            Engine::Cpu(s) => s,
            Engine::Cuda(c) => &mut c.sim,
        }
    }

    /// Advances to `t_end` (s) with adaptive steps. On CUDA the state stays
    /// on the device during the call: `on_step` sees the current time and
    /// step statistics but `q`, `v` and the anchors of the last sync, and
    /// the whole state is synced into the host simulation at the end.
    ///
    /// # Errors
    /// As `Simulation::advance_to`, plus device failures.
    pub fn advance_to(
        &mut self,
        t_end: f64,
        on_step: impl FnMut(&Simulation, &StepStats),
    ) -> Result<Vec<StepStats>, SolverError> {
        match self {
            Engine::Cpu(s) => s.advance_to(t_end, on_step),
            Engine::Cuda(c) => c.advance_to(t_end, on_step),
        }
    }
}
