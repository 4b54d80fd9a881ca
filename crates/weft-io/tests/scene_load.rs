//! Scene files that are valid: the DESIGN §8 example, defaults, damping
//! forms, object numbering across colliders, mesh paths, keyframes.

use approx::assert_relative_eq;
use serde_json::{Value, json};
use std::path::Path;
use weft_core::{Damping, ModeCoefficients, NodeSelector};
use weft_io::{
    ColliderShape, DampingSpec, ModeSpec, OutputFormat, PreconditionerChoice, Scene, SceneObject,
    interpolate_keyframes,
};

fn example_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/design_example.json")
}

fn minimal() -> Value {
    json!({
        "duration": 1.0,
        "time_step": {"dt": 0.002},
        "output": {"interval": 0.01},
        "materials": {"cotton": {"radius": 0.00025, "density": 130.0,
            "stretch_stiffness": 500.0, "bending_stiffness": 1e-5}},
        "objects": []
    })
}

fn parse(v: &Value) -> Scene {
    Scene::from_str(&v.to_string(), "scene.json").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn design_example_parses_and_builds() {
    let scene = Scene::from_path(example_path()).unwrap();
    assert_eq!(scene.duration, 10.0);
    assert_eq!(scene.time_step.dt, 0.001);
    assert_eq!(scene.time_step.dt_min, Some(1e-6));
    assert_eq!(scene.output.formats, vec![OutputFormat::Obj]);
    assert_eq!(scene.objects.len(), 5);
    let types: Vec<&str> = scene.objects.iter().map(|o| o.type_name()).collect();
    assert_eq!(types, ["yarn", "woven_patch", "sphere", "plane", "handle"]);

    let built = scene.build().unwrap();
    let f = &built.fabric;
    // yarn 3 nodes + patch 200 x 200 crossings.
    assert_eq!(f.node_count(), 40_003);
    assert_eq!(f.objects.len(), 2);
    assert_eq!(f.yarns.len(), 1 + 200 + 200);
    assert_eq!(
        built.fabric_object,
        vec![Some(0), Some(1), None, None, None]
    );
    assert_eq!(built.scene_object, vec![0, 1]);
    assert_eq!(built.node_range(1), Some(3..40_003));
    assert_eq!(built.node_range(2), None);

    // Settings.
    assert_eq!(built.duration, 10.0);
    assert_eq!(built.gravity, [0.0, -9.81, 0.0]);
    assert_eq!(built.time_step.dt, 0.001);
    assert!(built.time_step.adaptive);
    assert_eq!(built.time_step.dt_min, 1e-6);
    assert_eq!(built.time_step.dt_max, 0.01);
    assert_eq!(built.integrator.newton_max_iterations, 20);
    assert_eq!(built.integrator.cg_max_iterations, 10_000);
    assert_eq!(built.output.interval, 0.01);

    // Material, with the damping enum.
    let m = &f.materials[0];
    assert_eq!(m.name, "cotton");
    assert_eq!(m.radius, 0.00025);
    assert_eq!(m.friction.mu, 0.3);
    assert_eq!(m.friction.anchor_stiffness, 100.0);
    assert_eq!(
        m.damping,
        Damping::StrainRate(ModeCoefficients {
            stretch: 3e-7,
            ..Default::default()
        })
    );

    // Yarn: node 0 pinned, point mass and initial velocity on node 2.
    assert_eq!(f.free[0][..3], [false; 3]);
    assert_eq!(f.free[1][..3], [true; 3]);
    assert_eq!(f.point_mass[2], 0.001);
    assert_eq!(f.initial.x_dot[2].as_slice(), &[0.0, 1.0, 0.0]);
    assert_eq!(f.initial.x_dot[1].as_slice(), &[0.0, 0.0, 0.0]);

    // Patch corners 0 = (warp 0, weft 0) and 1 = (warp 0, weft 199) pinned.
    let (c0, c1, c2) = (3, 3 + 199, 3 + 199 * 200 + 199);
    assert_eq!(f.free[c0][..3], [false; 3]);
    assert_eq!(f.free[c1][..3], [false; 3]);
    assert_eq!(f.free[c2][..3], [true; 3]);
    // Corner 0 sits at center - size/2 along warp (x) and weft (z = normal × warp).
    let x0 = f.initial.x[c0];
    assert_relative_eq!(x0.x, -0.0575, epsilon = 1e-15);
    assert_relative_eq!(x0.y, 0.1, epsilon = 1e-15);

    // Colliders in file order, plane normal normalised.
    assert_eq!(built.colliders.len(), 2);
    assert_eq!(built.colliders[0].object, 2);
    assert_eq!(
        built.colliders[0].shape,
        ColliderShape::Sphere {
            center: [0.0; 3],
            radius: 0.05
        }
    );
    assert_eq!(built.colliders[0].stiffness, 1e3);
    assert_eq!(built.colliders[0].friction, 0.3);
    assert_eq!(built.colliders[1].object, 3);
    assert_eq!(built.colliders[1].friction, 0.0);
    assert_eq!(
        built.colliders[1].shape,
        ColliderShape::Plane {
            point: [0.0, -0.1, 0.0],
            normal: [0.0, 1.0, 0.0]
        }
    );

    // Handle resolved to global nodes, keyframes kept.
    assert_eq!(built.handles.len(), 1);
    let h = &built.handles[0];
    assert_eq!((h.object, h.target), (4, 1));
    assert_eq!(h.nodes, vec![c0, c1]);
    assert_eq!(h.keyframes, vec![(0.0, [0.0; 3]), (0.5, [0.0, 0.02, 0.0])]);
    assert_relative_eq!(h.displacement_at(0.25)[1], 0.01, epsilon = 1e-15);
}

/// `integrator.preconditioner` takes its four values (default `auto`);
/// anything else is an error naming the key path.
#[test]
fn preconditioner_values() {
    let mut v = minimal();
    assert_eq!(
        parse(&v).integrator.preconditioner,
        PreconditionerChoice::Auto
    );
    for (name, want) in [
        ("auto", PreconditionerChoice::Auto),
        ("cholesky", PreconditionerChoice::Cholesky),
        ("multigrid", PreconditionerChoice::Multigrid),
        ("block_jacobi", PreconditionerChoice::BlockJacobi),
    ] {
        v["integrator"] = json!({"preconditioner": name});
        assert_eq!(parse(&v).integrator.preconditioner, want);
    }
    v["integrator"] = json!({"preconditioner": "amg"});
    let e = Scene::from_str(&v.to_string(), "scene.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("scene.json") && e.contains("preconditioner"),
        "{e}"
    );
}

#[test]
fn defaults_of_optional_keys() {
    let mut v = minimal();
    v["objects"] = json!([{"type": "yarn", "material": "cotton",
        "nodes": [[0, 0, 0], [0.001, 0, 0]]}]);
    let scene = parse(&v);
    assert!(scene.time_step.adaptive);
    assert_eq!(scene.time_step.dt_min(), 1e-7);
    assert_eq!(scene.time_step.dt_max(), 0.02);
    assert_eq!(scene.integrator.newton_max_iterations, 20);
    assert_eq!(scene.integrator.newton_tolerance, 1e-6);
    assert_eq!(scene.integrator.cg_tolerance, 1e-8);
    assert_eq!(scene.integrator.cg_max_iterations, 10_000);
    assert_eq!(scene.output.formats, vec![OutputFormat::Obj]);
    assert_eq!(scene.gravity, [0.0, -9.81, 0.0]);
    let m = &scene.materials["cotton"];
    assert_eq!((m.shear_stiffness, m.contact_stiffness), (0.0, 0.0));
    assert_eq!((m.friction.mu, m.friction.anchor_stiffness), (0.0, 0.0));
    assert_eq!(m.damping, DampingSpec::None);
    let SceneObject::Yarn(y) = &scene.objects[0] else {
        panic!("yarn")
    };
    assert!(!y.sliding && y.pinned.is_empty() && y.rest_lengths.is_none());

    // dt below the default dt_min lowers dt_min to dt.
    v["time_step"] = json!({"dt": 1e-8});
    assert_eq!(parse(&v).build().unwrap().time_step.dt_min, 1e-8);

    // A patch with defaults: normal +y, warp +x, plain, sliding.
    v["objects"] = json!([{"type": "woven_patch", "material": "cotton",
        "size": [0.01, 0.02], "yarn_counts": [3, 4], "center": [0, 0, 0]}]);
    let built = parse(&v).build().unwrap();
    assert_eq!(built.fabric.node_count(), 12);
    // Interior crossing (k=1, l=1) = node 1·4 + 1 has u and v free (sliding
    // default true); (k=1, l=0) is a warp yarn's end: u fixed, v free.
    assert_eq!(built.fabric.free[5][3..], [true, true]);
    assert_eq!(built.fabric.free[4][3..], [false, true]);
}

#[test]
fn damping_forms() {
    let mut v = minimal();
    v["objects"] = json!([{"type": "yarn", "material": "cotton",
        "nodes": [[0, 0, 0], [0.001, 0, 0]]}]);
    let cases = [
        (
            json!({"model": "strain_rate", "beta": {"stretch": 0.01, "bending": 0.02}}),
            DampingSpec::StrainRateBeta(ModeSpec {
                stretch: 0.01,
                bending: 0.02,
                ..Default::default()
            }),
        ),
        (
            json!({"model": "rayleigh", "alpha": 0.5, "beta": 1e-3}),
            DampingSpec::Rayleigh {
                alpha: 0.5,
                beta: 1e-3,
            },
        ),
        (
            json!({"model": "rayleigh", "beta": 2}),
            DampingSpec::Rayleigh {
                alpha: 0.0,
                beta: 2.0,
            },
        ),
        (json!({"model": "none"}), DampingSpec::None),
        (
            json!({"model": "strain_rate", "contact": 4e-7}),
            DampingSpec::StrainRate(ModeSpec {
                contact: 4e-7,
                ..Default::default()
            }),
        ),
    ];
    for (json_damping, expected) in cases {
        v["materials"]["cotton"]["damping"] = json_damping.clone();
        let scene = parse(&v);
        assert_eq!(
            scene.materials["cotton"].damping, expected,
            "{json_damping}"
        );
        let built = scene.build().unwrap();
        assert_eq!(built.fabric.materials[0].damping, expected.to_damping());
    }
    // β form resolves to k_d = β k [SBO18 eq. 12].
    v["materials"]["cotton"]["damping"] =
        json!({"model": "strain_rate", "beta": {"stretch": 0.01, "bending": 0.02}});
    let c = parse(&v).build().unwrap().fabric.materials[0].strain_rate_coefficients();
    assert_relative_eq!(c.stretch, 0.01 * 500.0, max_relative = 1e-15);
    assert_relative_eq!(c.bending, 0.02 * 1e-5, max_relative = 1e-15);
}

#[test]
fn internally_tagged_objects_deny_unknown_fields() {
    // The derived serde path (serde_json::from_value) and Scene::from_str
    // both accept `type` anywhere in the object and reject unknown keys.
    let ok = json!({"radius": 1, "type": "sphere", "center": [0, 0, 0], "stiffness": 1});
    let obj: SceneObject = serde_json::from_value(ok.clone()).unwrap();
    assert!(matches!(obj, SceneObject::Sphere(ref s) if s.radius == 1.0));
    let bad =
        json!({"type": "sphere", "center": [0, 0, 0], "radius": 1, "stiffness": 1, "colour": 2});
    let e = serde_json::from_value::<SceneObject>(bad.clone()).unwrap_err();
    assert!(e.to_string().contains("unknown field `colour`"), "{e}");

    let mut v = minimal();
    v["objects"] = json!([ok]);
    assert!(matches!(parse(&v).objects[0], SceneObject::Sphere(_)));
    v["objects"] = json!([bad]);
    let e = Scene::from_str(&v.to_string(), "scene.json").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("scene.json: objects[0].colour: unknown field `colour`"),
        "{e}"
    );
}

#[test]
fn serialize_round_trip() {
    let mut scene = Scene::from_path(example_path()).unwrap();
    // Exercise the other damping forms and selector kinds too.
    scene.materials.get_mut("cotton").unwrap().damping = DampingSpec::StrainRateBeta(ModeSpec {
        stretch: 0.1,
        ..Default::default()
    });
    let text = serde_json::to_string_pretty(&scene).unwrap();
    let back = Scene::from_str(&text, &scene.source.display().to_string()).unwrap();
    assert_eq!(back, scene);
    // The derived Deserialize reads it as well.
    let derived: Scene = serde_json::from_str(&text).unwrap();
    assert_eq!(derived.objects, scene.objects);
}

#[test]
fn object_numbering_spans_colliders() {
    let mut v = minimal();
    v["objects"] = json!([
        {"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 3], "stiffness": 10},
        {"type": "woven_patch", "material": "cotton", "size": [0.01, 0.01],
         "yarn_counts": [3, 4], "center": [0, 0, 0], "pinned": ["edge:weft_start"]},
        {"type": "capsule", "a": [0, 0, 0], "b": [0, 1, 0], "radius": 0.1, "stiffness": 5,
         "keyframes": [[0, [0, 0, 0]], [1, [1, 0, 0]]]},
        {"type": "yarn", "material": "cotton", "nodes": [[0, 0, 0], [0.001, 0, 0], [0.002, 0, 0]],
         "sliding": true},
        {"type": "handle", "object": 3, "nodes": [2, "1"], "keyframes": [[0, [0, 0, 0]]]},
        {"type": "handle", "object": 1, "nodes": ["corner:2", "edge:weft_end"],
         "keyframes": [[0, [0, 0, 0]]]}
    ]);
    let built = parse(&v).build().unwrap();
    assert_eq!(
        built.fabric_object,
        vec![None, Some(0), None, Some(1), None, None]
    );
    assert_eq!(built.scene_object, vec![1, 3]);
    assert_eq!(built.fabric.node_count(), 15);
    // Yarn nodes are 12..15; handle on its nodes 2 and 1.
    assert_eq!(built.handles[0].nodes, vec![14, 13]);
    assert!(built.fabric.free[13][..3].iter().all(|f| !f));
    assert!(built.fabric.free[12][..3].iter().all(|f| *f));
    // Sliding yarn: interior u free, ends fixed.
    assert_eq!(
        [
            built.fabric.free[12][3],
            built.fabric.free[13][3],
            built.fabric.free[14][3]
        ],
        [false, true, false]
    );
    // corner:2 = (2, 3) = node 11, then edge:weft_end = (2, 0..4) = 8..12 without repeating 11.
    assert_eq!(built.handles[1].nodes, vec![11, 8, 9, 10]);
    // edge:weft_start pinned: nodes 0..4.
    for n in 0..4 {
        assert!(built.fabric.free[n][..3].iter().all(|f| !f));
    }
    assert!(built.fabric.free[4][..3].iter().all(|f| *f));
    assert_eq!(
        built.colliders[0].shape,
        ColliderShape::Plane {
            point: [0.0; 3],
            normal: [0.0, 0.0, 1.0]
        }
    );
    assert_eq!(built.colliders[1].object, 2);
    assert_eq!(built.colliders[1].translation_at(0.5), [0.5, 0.0, 0.0]);
    // Selector parsing kept the kinds.
    let SceneObject::Handle(h) = &parse(&v).objects[5] else {
        panic!("handle")
    };
    assert_eq!(h.nodes[0].0, NodeSelector::Corner(2));
}

#[test]
fn patch_initial_velocities() {
    let mut v = minimal();
    v["objects"] = json!([{"type": "woven_patch", "material": "cotton", "size": [0.01, 0.01],
        "yarn_counts": [2, 3], "center": [0, 0, 0], "initial_velocity": [0, -1, 0],
        "initial_velocities": {"corner:2": [1, 2, 3], "4": [0, 0, 5]}}]);
    let built = parse(&v).build().unwrap();
    let xd: Vec<[f64; 3]> = built
        .fabric
        .initial
        .x_dot
        .iter()
        .map(|p| [p.x, p.y, p.z])
        .collect();
    assert_eq!(
        xd,
        vec![
            [0.0, -1.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.0, 0.0, 5.0],
            [1.0, 2.0, 3.0]
        ]
    );
}

/// Patch `point_masses` add to every node their selector picks, and
/// entries on one node add up; the simulation sees them in its kinetic
/// energy.
#[test]
fn patch_point_masses() {
    let mut v = minimal();
    v["objects"] = json!([{"type": "woven_patch", "material": "cotton", "size": [0.01, 0.01],
        "yarn_counts": [2, 3], "center": [0, 0, 0], "initial_velocity": [0, 0, 2],
        "point_masses": {"edge:weft_start": 0.5, "corner:0": 0.25}}]);
    let built = parse(&v).build().unwrap();
    assert_eq!(built.fabric.point_mass, vec![0.75, 0.5, 0.5, 0.0, 0.0, 0.0]);
    let without = {
        let mut w = v.clone();
        w["objects"][0]
            .as_object_mut()
            .unwrap()
            .remove("point_masses");
        parse(&w)
            .build()
            .unwrap()
            .simulation(false)
            .unwrap()
            .energies()
            .kinetic
    };
    let with = built.simulation(false).unwrap().energies().kinetic;
    // ½ Σ m v² of the point masses at 2 m/s: ½ · 1.75 kg · 4 m²/s².
    assert_relative_eq!(with - without, 3.5, max_relative = 1e-12);
}

/// A collider the solver rejects when the simulation is set up (here a
/// malformed OBJ mesh) is a scene error naming the file and the object.
#[test]
fn simulation_names_a_rejected_collider() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("body.obj"), "v 0 0 0\nv 1 0\nf 1 2 3\n").unwrap();
    let mut v = minimal();
    v["objects"] = json!([{"type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0],
        "stiffness": 100}, {"type": "mesh", "path": "body.obj", "stiffness": 100}]);
    let path = dir.path().join("scene.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let built = Scene::from_path(&path).unwrap().build().unwrap();
    let Err(e) = built.simulation(false) else {
        panic!("the malformed mesh was accepted")
    };
    let s = e.to_string();
    assert_eq!(e.path(), Some("objects[1]"), "{s}");
    assert!(
        s.starts_with(&format!("{}: objects[1]: ", path.display())) && s.contains("body.obj"),
        "{s}"
    );
}

#[test]
fn mesh_path_resolves_against_scene_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("meshes")).unwrap();
    std::fs::write(
        dir.path().join("meshes/body.obj"),
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",
    )
    .unwrap();
    let mut v = minimal();
    v["objects"] = json!([{"type": "mesh", "path": "meshes/body.obj", "stiffness": 100,
        "scale": 0.01, "translation": [0, 1, 0]}]);
    let path = dir.path().join("scene.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let built = Scene::from_path(&path).unwrap().build().unwrap();
    assert_eq!(
        built.colliders[0].shape,
        ColliderShape::Mesh {
            path: dir.path().join("meshes/body.obj"),
            translation: [0.0, 1.0, 0.0],
            scale: 0.01
        }
    );
    // Missing file: error at build with the path and where it looked.
    v["objects"][0]["path"] = json!("meshes/nope.obj");
    std::fs::write(&path, v.to_string()).unwrap();
    let e = Scene::from_path(&path).unwrap().build().unwrap_err();
    let s = e.to_string();
    assert!(
        s.starts_with(&format!(
            "{}: objects[0].path: mesh file 'meshes/nope.obj' not found",
            path.display()
        )),
        "{s}"
    );
    assert!(
        s.contains(&dir.path().join("meshes/nope.obj").display().to_string()),
        "{s}"
    );
}

#[test]
fn animated_mesh_frames_resolve_and_bad_keys_are_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("walk")).unwrap();
    let path = dir.path().join("scene.json");
    let err = |obj: serde_json::Value| {
        let mut v = minimal();
        v["objects"] = json!([obj]);
        std::fs::write(&path, v.to_string()).unwrap();
        match Scene::from_path(&path) {
            Err(e) => e.to_string(),
            Ok(s) => match s.build() {
                Err(e) => e.to_string(),
                Ok(b) => format!("built {:?}", b.colliders[0].shape),
            },
        }
    };
    let ok = err(json!({"type": "mesh", "frames": "walk", "fps": 30, "stiffness": 100}));
    assert_eq!(
        ok,
        format!(
            "built {:?}",
            ColliderShape::AnimatedMesh {
                frames: dir.path().join("walk"),
                fps: 30.0,
                translation: [0.0; 3],
                scale: 1.0
            }
        )
    );
    for (obj, place, says) in [
        (
            json!({"type": "mesh", "path": "a.obj", "frames": "walk", "fps": 30, "stiffness": 1}),
            "objects[0].frames",
            "not both",
        ),
        (
            json!({"type": "mesh", "frames": "walk", "stiffness": 1}),
            "objects[0].fps",
            "frames per second",
        ),
        (
            json!({"type": "mesh", "frames": "walk", "fps": -1, "stiffness": 1}),
            "objects[0].fps",
            "",
        ),
        (
            json!({"type": "mesh", "path": "a.obj", "fps": 30, "stiffness": 1}),
            "objects[0].fps",
            "`frames`, which is absent",
        ),
        (
            json!({"type": "mesh", "stiffness": 1}),
            "objects[0].path",
            "expected an OBJ file path",
        ),
        (
            json!({"type": "mesh", "frames": "run", "fps": 30, "stiffness": 1}),
            "objects[0].frames",
            "frame folder 'run' not found",
        ),
    ] {
        let s = err(obj);
        assert!(
            s.starts_with(&format!("{}: {place}", path.display())) && s.contains(says),
            "{s}"
        );
    }
}

#[test]
fn keyframe_interpolation() {
    let keys = [
        (0.5, [0.0, 0.0, 0.0]),
        (1.0, [1.0, -2.0, 0.0]),
        (3.0, [1.0, 2.0, 4.0]),
    ];
    assert_eq!(interpolate_keyframes(&keys, 0.0), [0.0, 0.0, 0.0]);
    assert_eq!(interpolate_keyframes(&keys, 0.75), [0.5, -1.0, 0.0]);
    assert_eq!(interpolate_keyframes(&keys, 1.0), [1.0, -2.0, 0.0]);
    assert_eq!(interpolate_keyframes(&keys, 2.5), [1.0, 1.0, 3.0]);
    assert_eq!(interpolate_keyframes(&keys, 9.0), [1.0, 2.0, 4.0]);
    assert_eq!(interpolate_keyframes(&[], 1.0), [0.0; 3]);
}

/// The shipped [SBO17 §6.3] sphere scene is cotton shirting: the cotton
/// preset homogenised at the patch's yarn spacing.
#[test]
fn sbo17_sphere_scene_is_the_cotton_preset() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/scenes/sbo17_sphere_drop.json");
    let scene = Scene::from_path(path).unwrap();
    let s = 0.115 / 199.0;
    assert_eq!(
        scene.core_materials(),
        vec![weft_core::FabricPreset::Cotton.material(s, false)]
    );
}

/// Collider keyframes with a rotation vector turn the collider about its
/// pivot: a capsule along x (midpoint (1, 0, 0)) turned a quarter turn
/// about y over 1 s lies along z at t = 1 s, its ends move at `ω × r`
/// halfway, a translation-only key keeps its old meaning, a serialised
/// scene reads back, and a key with four entries or a rotation of two
/// is refused with its place named.
#[test]
fn collider_keyframes_rotate_about_the_pivot() {
    use nalgebra::Vector3;
    use std::f64::consts::FRAC_PI_2;
    let mut v = minimal();
    v["objects"] = json!([
        {"type": "capsule", "a": [0.5, 0, 0], "b": [1.5, 0, 0], "radius": 0.1,
         "stiffness": 100, "friction": 0.3,
         "keyframes": [[0, [0, 0, 0]], [1, [0, 0.2, 0], [0, FRAC_PI_2, 0]]]},
        {"type": "sphere", "center": [0, 1, 0], "radius": 0.2, "stiffness": 100,
         "keyframes": [[0, [0, 0, 0]], [1, [1, 0, 0]]]}
    ]);
    let scene = parse(&v);
    let text = serde_json::to_string(&scene).unwrap();
    assert_eq!(Scene::from_str(&text, "scene.json").unwrap(), scene);
    let built = scene.build().unwrap();
    assert_eq!(built.colliders[0].shape.pivot(), [1.0, 0.0, 0.0]);
    let (c, _) = weft_io::collider(&built.colliders[0]).unwrap();
    // t = 0: the capsule's end b = (1.5, 0, 0) is on its axis.
    let (phi, _) = c.distance(&Vector3::new(1.5, 0.0, 0.0), 0.0);
    assert_relative_eq!(phi, -0.1, epsilon = 1e-12);
    // t = 1: turned by +90° about y (x → -z), lifted by 0.2: the ends are
    // at (1, 0.2, ∓0.5).
    for z in [-0.5, 0.5] {
        let (phi, _) = c.distance(&Vector3::new(1.0, 0.2, z), 1.0);
        assert_relative_eq!(phi, -0.1, epsilon = 1e-12);
    }
    let (phi, _) = c.distance(&Vector3::new(1.5, 0.2, 0.0), 1.0);
    assert_relative_eq!(phi, 0.4, epsilon = 1e-12);
    // Halfway: ω = (0, π/2, 0) rad/s, ḋ = (0, 0.2, 0) m/s; the point 0.5 m
    // from the pivot along the turned axis moves at ḋ + ω × r.
    let angle = 0.5 * FRAC_PI_2;
    let pivot = Vector3::new(1.0, 0.1, 0.0);
    let r = Vector3::new(angle.cos(), 0.0, -angle.sin()) * 0.5;
    let want = Vector3::new(0.0, 0.2, 0.0) + Vector3::new(0.0, FRAC_PI_2, 0.0).cross(&r);
    let got = c.velocity_at(&(pivot + r), 0.5);
    assert!((got - want).norm() < 1e-12, "{got} vs {want}");
    // The translation-only sphere: world coordinates as before.
    let (s, _) = weft_io::collider(&built.colliders[1]).unwrap();
    let (phi, _) = s.distance(&Vector3::new(0.5, 1.0, 0.0), 0.5);
    assert_relative_eq!(phi, -0.2, epsilon = 1e-12);
    // Malformed keys.
    for (bad, what) in [
        (json!([[0, [0, 0, 0], [0, 0, 0], [1, 1, 1]]]), "keyframe"),
        (json!([[0, [0, 0, 0], [1, 2]]]), ""),
    ] {
        let mut w = v.clone();
        w["objects"][0]["keyframes"] = bad;
        let e = Scene::from_str(&w.to_string(), "scene.json")
            .and_then(|s| s.build().map(|_| ()))
            .expect_err("accepted");
        let msg = e.to_string();
        assert!(msg.contains("objects[0]") && msg.contains(what), "{msg}");
    }
}
