"""Drape a garment with weft and load it into Blender as curves with the
yarn radius (the PyPI ``bpy`` wheel, or Blender's own Python).

    python blender_yarns.py PATTERN.json OUT.blend [SPACING_MM]

weft is Y up, Blender Z up: a point (x, y, z) goes to (x, -z, y). Each yarn
becomes a poly spline of one curve object whose bevel gives every point
the yarn's radius (bevel depth 1 m times the point radius in metres).
"""

import sys

import bpy

import weft


def add_yarns(result, name="weft yarns"):
    """Adds the yarns of a :class:`weft.DrapeResult` to the scene as one
    curve object (returned)."""
    curve = bpy.data.curves.new(name, type="CURVE")
    curve.dimensions = "3D"
    curve.bevel_depth = 1.0
    curve.bevel_resolution = 2
    curve.use_fill_caps = True
    for yarn in result.yarns:
        spline = curve.splines.new("POLY")
        spline.points.add(len(yarn.points) - 1)
        for p, (x, y, z) in zip(spline.points, yarn.points):
            p.co = (x, -z, y, 1.0)
            p.radius = yarn.radius
    obj = bpy.data.objects.new(name, curve)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def main(argv):
    pattern, blend = argv[0], argv[1]
    spacing = float(argv[2]) if len(argv) > 2 else 20.0
    result = weft.drape(pattern, spacing_mm=spacing)
    add_yarns(result)
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    print(f"{len(result.yarns)} yarns -> {blend}")


if __name__ == "__main__":
    main(sys.argv[1:])
