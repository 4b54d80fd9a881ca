"""Tests of the Python module (run by CI after `maturin build`)."""

import json
import os
import pathlib

import numpy as np
import pytest

import weft

REPO = pathlib.Path(__file__).resolve().parents[3]
SCENES = REPO / "data" / "scenes"
SKIRT = REPO / "data" / "patterns" / "a_line_skirt.json"


def drape_skirt(**options):
    """The shipped skirt at 60 mm, sewn 0.3 s and draped 0.1-0.2 s."""
    return weft.drape(
        SKIRT,
        spacing_mm=60,
        coarse_spacing_mm=60,
        sew_duration=0.3,
        relax={"min_time": 0.1, "max_time": 0.2},
        **options,
    )


def test_run_free_fall_matches_gravity(tmp_path):
    """A free patch in free fall: backward Euler gives the exact velocity
    g t for any steps, so the kinetic energy grows as t² (within 1 %);
    its position drop is ½ g t² plus backward Euler's lag, at most 15 %
    with these steps; and the arrays have the shapes the docs give."""
    r = weft.run(SCENES / "free_fall_patch.json", tmp_path / "out")
    n = r.positions.shape[0]
    assert r.positions.shape == (n, 3) and n == 36
    assert r.u.shape == (n,) and r.v.shape == (n,)
    assert r.summary["completed"] is True
    t, ke = r.energies["t"], r.energies["kinetic"]
    assert len(t) == 6 and t[0] == 0.0 and abs(t[-1] - 0.05) < 1e-12
    np.testing.assert_allclose(ke[1:] / ke[-1], (t[1:] / t[-1]) ** 2, rtol=1e-2)
    drop = 0.1 - r.positions[:, 1].mean()
    exact = 0.5 * 9.81 * 0.05**2
    assert exact < drop < 1.15 * exact, (drop, exact)
    # The gravity energy released is M g drop, the kinetic energy ½ M (g t)².
    released = r.energies["gravity"][0] - r.energies["gravity"][-1]
    assert abs(ke[-1] / released - exact / drop) < 0.01 * exact / drop
    assert (tmp_path / "out" / "final_state.json").is_file()


def test_run_without_out_and_a_bad_scene(tmp_path):
    r = weft.run(SCENES / "free_fall_patch.json")
    assert np.isfinite(r.positions).all()
    scene = json.loads((SCENES / "free_fall_patch.json").read_text())
    scene["gravty"] = [0, -9.81, 0]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(scene))
    with pytest.raises(weft.WeftError) as e:
        weft.run(bad, tmp_path / "o")
    assert "bad.json" in str(e.value) and "gravty" in str(e.value)


def test_drape_skirt(tmp_path):
    """The shipped skirt at 60 mm: every node finite, the yarns carry
    cotton's radius (0.3 mm), it stays on the body, and the outputs are
    written."""
    d = drape_skirt(formats=["obj"], out=tmp_path / "skirt")
    assert d.positions.shape == (d.summary["nodes"], 3)
    assert np.isfinite(d.positions).all()
    assert d.yarns and all(abs(y.radius - 0.3e-3) < 1e-12 for y in d.yarns)
    assert all(y.points.shape[1] == 3 for y in d.yarns)
    assert d.summary["slid_off"] is False
    assert (tmp_path / "skirt" / "summary.json").is_file()


def test_drape_errors_name_the_problem(tmp_path):
    with pytest.raises(weft.WeftError) as e:
        weft.drape(SKIRT, no_such_option=1)
    assert "no_such_option" in str(e.value)
    bad = tmp_path / "broken.json"
    bad.write_text('{"pattern": {"panels": {}}}')
    with pytest.raises(weft.WeftError) as e:
        weft.drape(bad, spacing_mm=60)
    assert "broken.json" in str(e.value)


def test_blender_example_loads_a_drape(tmp_path):
    """examples/blender_yarns.py puts every yarn into Blender as a spline
    with the yarn's radius, Z up; skipped (saying so) without bpy."""
    bpy = pytest.importorskip("bpy", reason="the bpy wheel is not installed")
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "blender_yarns", REPO / "crates" / "weft-py" / "examples" / "blender_yarns.py"
    )
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    d = drape_skirt()
    obj = example.add_yarns(d)
    splines = obj.data.splines
    assert len(splines) == len(d.yarns)
    s, y = splines[0], d.yarns[0]
    assert len(s.points) == len(y.points)
    assert abs(s.points[0].radius - y.radius) < 1e-9
    x0, y0, z0 = y.points[0]
    co = s.points[0].co
    assert abs(co[0] - x0) < 1e-6 and abs(co[1] + z0) < 1e-6 and abs(co[2] - y0) < 1e-6
    blend = tmp_path / "skirt.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    assert blend.stat().st_size > 0
