"""weft: yarn-level woven cloth simulation, from Python.

Thin shells over the Rust library (the same code paths as the ``weft``
command line):

- :func:`run` simulates a scene file (DESIGN §8) and returns its results as
  numpy arrays;
- :func:`drape` weaves, sews and drapes a sewing pattern (GarmentCode or
  Garment-Pattern-Generator JSON) on a body, level by level.

Units are SI (metres, seconds, joules). Every error of the library is
raised as :class:`WeftError`; its message names the file and the place in
it (a JSON path, a panel, a line).
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np

from . import _native
from ._native import WeftError

__all__ = ["run", "drape", "RunResult", "DrapeResult", "Yarn", "WeftError"]
__version__ = _native.__version__


@dataclass
class RunResult:
    """The results of :func:`run`.

    Attributes:
        positions: final node positions, shape (N, 3), m.
        u, v: final warp and weft arc-length coordinates, shape (N,), m.
        energies: per output frame (row 0 is t = 0), columns of
            ``energy.csv``: ``t`` (s), ``kinetic``, ``elastic``,
            ``gravity``, ``dissipated`` (J), ``h`` (s), ``newton_iters``,
            ``cg_iters``; each an array of shape (frames,).
        summary: ``run_summary.json`` as a dict (steps, rejections,
            iterations, wall time).
        out: the folder holding the outputs.
    """

    positions: np.ndarray
    u: np.ndarray
    v: np.ndarray
    energies: Dict[str, np.ndarray]
    summary: Dict[str, Any]
    out: str


@dataclass
class Yarn:
    """One yarn of a draped garment: its smoothed centreline ``points``,
    shape (M, 3), m, and its ``radius`` (m)."""

    points: np.ndarray
    radius: float


@dataclass
class DrapeResult:
    """The results of :func:`drape`.

    Attributes:
        positions: final node positions of the finest level, shape (N, 3), m.
        yarns: the yarn curves (what ``yarns.usda`` and ``yarns.obj`` hold).
        summary: ``summary.json`` as a dict (per level: spacing, nodes,
            steps, static or not; seam gaps, penetration, slide-off).
        out: the output folder, or None when none was asked for.
    """

    positions: np.ndarray
    yarns: List[Yarn] = field(default_factory=list)
    summary: Dict[str, Any] = field(default_factory=dict)
    out: Optional[str] = None


def _read_energies(path: str) -> Dict[str, np.ndarray]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, data = rows[0], np.array(rows[1:], dtype=float)
    return {name: data[:, i] for i, name in enumerate(header)}


def run(
    scene: "os.PathLike[str] | str",
    out: "os.PathLike[str] | str | None" = None,
    *,
    one_iteration: bool = False,
    checkpoint_every_s: Optional[float] = None,
    resume: bool = False,
) -> RunResult:
    """Simulates the scene file ``scene`` on the CPU, as ``weft run`` does.

    Args:
        scene: the scene file (JSON, DESIGN §8).
        out: the output folder (created; outputs there are replaced). A
            temporary folder when None (its files are gone after the call;
            the arrays stay).
        one_iteration: one Newton iteration per step.
        checkpoint_every_s: write ``out/checkpoint.json`` at the first
            output frame after every this many seconds of wall time.
        resume: go on from ``out/checkpoint.json``.

    Returns:
        A :class:`RunResult`.

    Raises:
        WeftError: a bad scene (naming the file and the JSON path), a
            checkpoint that does not fit, or a failed simulation.
    """
    options = json.dumps(
        {
            "one_iteration": one_iteration,
            "checkpoint_every_s": checkpoint_every_s,
            "resume": resume,
        }
    )
    if out is None:
        with tempfile.TemporaryDirectory(prefix="weft-run-") as tmp:
            return _run(scene, tmp, options)
    return _run(scene, out, options)


def _run(scene, out, options) -> RunResult:
    summary = json.loads(_native.run(os.fspath(scene), os.fspath(out), options))
    with open(os.path.join(out, "final_state.json")) as f:
        state = json.load(f)
    return RunResult(
        positions=np.asarray(state["x"], dtype=float).reshape(-1, 3),
        u=np.asarray(state["u"], dtype=float),
        v=np.asarray(state["v"], dtype=float),
        energies=_read_energies(os.path.join(out, "energy.csv")),
        summary=summary,
        out=os.fspath(out),
    )


def drape(
    pattern: "os.PathLike[str] | str",
    *,
    body: "os.PathLike[str] | str | None" = None,
    body_scale: float = 1.0,
    spacing_mm: float = 20.0,
    material: str = "cotton",
    out: "os.PathLike[str] | str | None" = None,
    **options: Any,
) -> DrapeResult:
    """Weaves, sews and drapes the sewing pattern ``pattern``, as
    ``weft drape`` does.

    Args:
        pattern: GarmentCode (``*_specification.json``) or
            Garment-Pattern-Generator JSON.
        body: a closed body mesh (OBJ, Y up, feet at y = 0); weft's
            mannequin when None.
        body_scale: factor from the OBJ's units to metres.
        spacing_mm: the final yarn spacing (mm).
        material: the fabric preset (``cotton``, ``denim``, ``silk``).
        out: write the outputs there (``summary.json``, ``final_state.json``,
            yarn curves, ``preview.png``); none when None.
        **options: any other field of ``weft_garment::DrapeOptions``
            (``coarse_spacing_mm``, ``sew_duration``, ``relax`` as a dict,
            ``strict``, ``formats``, ...); an unknown one is an error.

    Returns:
        A :class:`DrapeResult`.

    Raises:
        WeftError: a bad pattern or body (naming the file and the place), an
            unknown option, or a failed or (with ``strict=True``) slid-off
            drape.
    """
    opts = dict(options)
    opts["spacing_mm"] = spacing_mm
    opts["material"] = material
    if body is not None:
        opts["body"] = {"obj": {"path": os.fspath(body), "scale": body_scale}}
    summary, positions, curves = _native.drape(
        os.fspath(pattern),
        json.dumps(opts),
        None if out is None else os.fspath(out),
    )
    return DrapeResult(
        positions=np.asarray(positions, dtype=float).reshape(-1, 3),
        yarns=[
            Yarn(points=np.asarray(p, dtype=float).reshape(-1, 3), radius=r)
            for p, r in curves
        ],
        summary=json.loads(summary),
        out=None if out is None else os.fspath(out),
    )
