//! Every class of scene error names the file, the JSON path and what was
//! expected.

use serde_json::{Value, json};
use std::path::Path;
use weft_io::{Scene, SceneError};

fn example() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/design_example.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A small scene (builds fast) with a plane first, so scene and fabric
/// object numbers differ.
fn small() -> Value {
    json!({
        "duration": 1.0,
        "time_step": {"dt": 1e-3},
        "output": {"interval": 0.01},
        "materials": {"cotton": {"radius": 0.00025, "density": 130.0,
            "stretch_stiffness": 500.0, "bending_stiffness": 1e-5}},
        "objects": [
            {"type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0], "stiffness": 100},
            {"type": "yarn", "material": "cotton",
             "nodes": [[0, 0, 0], [0.001, 0, 0], [0.002, 0, 0]]},
            {"type": "woven_patch", "material": "cotton", "size": [0.01, 0.01],
             "yarn_counts": [3, 3], "center": [0, 0, 0]}
        ]
    })
}

fn load_err(v: &Value) -> SceneError {
    match Scene::from_str(&v.to_string(), "scene.json") {
        Ok(_) => panic!("scene accepted: {v}"),
        Err(e) => e,
    }
}

fn build_err(v: &Value) -> SceneError {
    let scene = Scene::from_str(&v.to_string(), "scene.json").unwrap_or_else(|e| panic!("{e}"));
    match scene.build() {
        Ok(_) => panic!("scene built: {v}"),
        Err(e) => e,
    }
}

/// Checks file, path and that the message contains `expect`.
fn check(e: &SceneError, path: &str, expect: &str) {
    let s = e.to_string();
    assert_eq!(e.file(), "scene.json", "{s}");
    assert_eq!(e.path(), Some(path), "{s}");
    assert!(s.starts_with(&format!("scene.json: {path}: ")), "{s}");
    assert!(s.contains(expect), "expected {expect:?} in {s}");
}

fn with(mut v: Value, f: impl FnOnce(&mut Value)) -> Value {
    f(&mut v);
    v
}

#[test]
fn wrong_types_and_shapes() {
    let e = load_err(&with(example(), |v| {
        v["objects"][1]["yarn_counts"] = json!("a")
    }));
    assert_eq!(
        e.to_string(),
        "scene.json: objects[1].yarn_counts: invalid type: string \"a\", expected an array of two integers"
    );
    let e = load_err(&with(example(), |v| {
        v["objects"][1]["yarn_counts"] = json!([200, "a"])
    }));
    check(
        &e,
        "objects[1].yarn_counts[1]",
        "invalid type: string \"a\"",
    );
    let e = load_err(&with(example(), |v| v["gravity"] = json!([0, -9.81])));
    check(
        &e,
        "gravity",
        "invalid length 2, expected an array of three numbers [x, y, z]",
    );
    let e = load_err(&with(example(), |v| {
        v["objects"][0]["nodes"][1] = json!([0.001, 0])
    }));
    check(&e, "objects[0].nodes[1]", "invalid length 2");
    let e = load_err(&with(example(), |v| {
        v["objects"][4]["keyframes"][1] = json!([0.5])
    }));
    check(
        &e,
        "objects[4].keyframes[1]",
        "expected a keyframe [t, [dx, dy, dz]]",
    );
    let e = load_err(&with(example(), |v| {
        v["objects"][0]["point_masses"]["2"] = json!("heavy")
    }));
    check(
        &e,
        "objects[0].point_masses.2",
        "invalid type: string \"heavy\"",
    );
    let e = load_err(&with(example(), |v| {
        v["integrator"]["newton_max_iterations"] = json!(2.5)
    }));
    check(
        &e,
        "integrator.newton_max_iterations",
        "invalid type: floating point `2.5`",
    );
    let e = load_err(&with(example(), |v| v["objects"] = json!({"a": 1})));
    check(&e, "objects", "expected an array of objects, got an object");
    let e = load_err(&with(example(), |v| v["objects"][3] = json!(5)));
    check(
        &e,
        "objects[3]",
        "expected an object with a \"type\" key, got a number",
    );
    let e = load_err(&json!([1, 2]));
    check(&e, "(top level)", "expected a JSON object");
}

#[test]
fn unknown_and_missing_keys() {
    let e = load_err(&with(example(), |v| v["time_stepp"] = json!({})));
    check(
        &e,
        "time_stepp",
        "unknown field `time_stepp`, expected one of",
    );
    let e = load_err(&with(example(), |v| v["time_step"]["h"] = json!(1)));
    check(&e, "time_step.h", "unknown field `h`");
    let e = load_err(&with(example(), |v| {
        v["objects"][2]["colour"] = json!("red")
    }));
    check(&e, "objects[2].colour", "unknown field `colour`");
    let e = load_err(&with(example(), |v| {
        v["materials"]["cotton"]["youngs_modulus"] = json!(1e9)
    }));
    check(&e, "materials.cotton.youngs_modulus", "unknown field");
    let e = load_err(&with(example(), |v| {
        v["materials"]["cotton"]["damping"]["strech"] = json!(1e-7)
    }));
    check(
        &e,
        "materials.cotton.damping.strech",
        "unknown field `strech`",
    );
    let e = load_err(&with(example(), |v| {
        v["materials"]["cotton"]["damping"] = json!({"model": "strain_rate", "beta": {"bend": 1}})
    }));
    check(
        &e,
        "materials.cotton.damping.beta.bend",
        "unknown field `bend`",
    );
    let e = load_err(&with(example(), |v| {
        v["materials"]["cotton"]["friction"] = json!({"mu": 0.3})
    }));
    check(
        &e,
        "materials.cotton.friction",
        "missing field `anchor_stiffness`",
    );
    let e = load_err(&with(example(), |v| {
        v.as_object_mut().unwrap().remove("duration");
    }));
    check(&e, "(top level)", "missing field `duration`");
    let e = load_err(&with(example(), |v| {
        v["objects"][2].as_object_mut().unwrap().remove("radius");
    }));
    check(&e, "objects[2]", "missing field `radius`");
    let e = load_err(&with(example(), |v| {
        v["objects"][2].as_object_mut().unwrap().remove("type");
    }));
    check(
        &e,
        "objects[2]",
        "missing field `type`: expected one of: yarn, woven_patch",
    );
    let e = load_err(&with(example(), |v| {
        v["objects"][2]["type"] = json!("cube")
    }));
    check(
        &e,
        "objects[2].type",
        "unknown object type 'cube': expected one of",
    );
}

#[test]
fn unknown_names() {
    let e = load_err(&with(example(), |v| {
        v["objects"][0]["material"] = json!("silk")
    }));
    assert_eq!(
        e.to_string(),
        "scene.json: objects[0].material: unknown material 'silk' (defined: cotton)"
    );
    let e = load_err(&with(example(), |v| {
        v["output"]["formats"] = json!(["obj", "ply"])
    }));
    check(
        &e,
        "output.formats[1]",
        "unknown variant `ply`, expected `obj`",
    );
    let e = load_err(&with(example(), |v| {
        v["output"]["formats"] = json!(["obj", "obj"])
    }));
    check(&e, "output.formats[1]", "duplicate format \"obj\"");
    let e = load_err(&with(example(), |v| {
        v["objects"][1]["weave"] = json!("twill")
    }));
    check(
        &e,
        "objects[1].weave",
        "unknown variant `twill`, expected `plain`",
    );
    let e = load_err(&with(example(), |v| {
        v["materials"]["cotton"]["damping"] = json!({"model": "viscous"})
    }));
    check(
        &e,
        "materials.cotton.damping.model",
        "unknown variant `viscous`, expected one of `strain_rate`, `rayleigh`, `none`",
    );
}

#[test]
fn damping_forms_that_do_not_fit_their_model() {
    let cases = [
        (
            json!({"model": "rayleigh", "alpha": 1, "stretch": 1e-7}),
            "model \"rayleigh\" takes \"alpha\" (1/s) and \"beta\" (s), not \"stretch\"",
        ),
        (
            json!({"model": "rayleigh", "beta": {"stretch": 1}}),
            "\"beta\" must be a number",
        ),
        (
            json!({"model": "strain_rate", "beta": 0.1}),
            "\"beta\" must be an object",
        ),
        (
            json!({"model": "strain_rate", "stretch": 1e-7, "beta": {"stretch": 0.1}}),
            "either per-mode k_d keys or \"beta\", not both",
        ),
        (json!({"model": "strain_rate", "alpha": 1}), "not \"alpha\""),
        (json!({"model": "none", "alpha": 1}), "takes no other keys"),
    ];
    for (d, expect) in cases {
        let e = load_err(&with(example(), |v| {
            v["materials"]["cotton"]["damping"] = d
        }));
        check(&e, "materials.cotton.damping", expect);
    }
}

#[test]
fn handle_targets() {
    let e = load_err(&with(example(), |v| v["objects"][4]["object"] = json!(7)));
    check(
        &e,
        "objects[4].object",
        "handle refers to object 7 but the scene has 5 objects",
    );
    let e = load_err(&with(example(), |v| v["objects"][4]["object"] = json!(2)));
    check(
        &e,
        "objects[4].object",
        "handle refers to object 2, a sphere; expected a yarn, woven_patch or triangle_cloth object",
    );
    let e = load_err(&with(example(), |v| v["objects"][4]["nodes"] = json!([])));
    check(
        &e,
        "objects[4].nodes",
        "expected at least one node selector",
    );
    let e = load_err(&with(example(), |v| {
        v["objects"][4]["keyframes"] = json!([])
    }));
    check(&e, "objects[4].keyframes", "expected at least one keyframe");
    let e = load_err(&with(example(), |v| {
        v["objects"][4]["keyframes"] = json!([[0.5, [0, 0, 0]], [0.5, [0, 1, 0]]])
    }));
    check(
        &e,
        "objects[4].keyframes[1]",
        "keyframe times must increase strictly: 0.5 follows 0.5",
    );
    // A handle listed before its (empty) target yarn: the handle's selector
    // is checked against 0 nodes without panicking.
    let e = load_err(&with(small(), |v| {
        v["objects"][1]["nodes"] = json!([]);
        v["objects"].as_array_mut().unwrap().insert(
            0,
            json!({"type": "handle", "object": 2, "nodes": [0], "keyframes": [[0, [0, 0, 0]]]}),
        );
    }));
    check(
        &e,
        "objects[0].nodes[0]",
        "'0': node index out of range: the yarn has 0 nodes",
    );
    // Two handles on the same node (corner:0 is on edge:warp_start).
    let v = with(small(), |v| {
        let objs = v["objects"].as_array_mut().unwrap();
        objs.push(json!({"type": "handle", "object": 2, "nodes": ["corner:0"],
            "keyframes": [[0, [0, 0, 0]]]}));
        objs.push(
            json!({"type": "handle", "object": 2, "nodes": ["corner:1", "edge:warp_start"],
            "keyframes": [[0, [0, 0, 0]]]}),
        );
    });
    let e = build_err(&v);
    check(
        &e,
        "objects[4].nodes[1]",
        "'edge:warp_start' selects node 0 of object 2, already moved by the handle objects[3]",
    );
}

#[test]
fn time_step_relations() {
    let e = load_err(&with(example(), |v| {
        v["time_step"] = json!({"dt": 1e-4, "dt_min": 1e-3})
    }));
    assert_eq!(
        e.to_string(),
        "scene.json: time_step: dt_min (1e-3) > dt (1e-4): expected dt_min ≤ dt ≤ dt_max"
    );
    let e = load_err(&with(example(), |v| {
        v["time_step"] = json!({"dt": 0.1, "dt_max": 0.01})
    }));
    check(&e, "time_step", "dt (0.1) > dt_max (0.01)");
}

#[test]
fn values_out_of_range() {
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(Edit, &str, &str)> = vec![
        (
            Box::new(|v| v["duration"] = json!(0)),
            "duration",
            "expected a positive finite number (s), got 0",
        ),
        (
            Box::new(|v| v["duration"] = json!(-1.5)),
            "duration",
            "expected a positive finite number (s), got -1.5",
        ),
        (
            Box::new(|v| v["output"]["interval"] = json!(0.0)),
            "output.interval",
            "expected a positive finite number (s)",
        ),
        (
            Box::new(|v| v["time_step"]["dt"] = json!(-1e-3)),
            "time_step.dt",
            "expected a positive finite number (s)",
        ),
        (
            Box::new(|v| v["integrator"]["cg_tolerance"] = json!(2)),
            "integrator.cg_tolerance",
            "expected a relative tolerance in (0, 1), got 2",
        ),
        (
            Box::new(|v| v["integrator"]["cg_max_iterations"] = json!(0)),
            "integrator.cg_max_iterations",
            "expected an integer ≥ 1",
        ),
        (
            Box::new(|v| v["materials"]["cotton"]["radius"] = json!(-0.001)),
            "materials.cotton.radius",
            "expected positive and finite (m), got -1e-3",
        ),
        (
            Box::new(|v| v["materials"]["cotton"]["friction"]["mu"] = json!(-0.3)),
            "materials.cotton.friction.mu",
            "expected non-negative and finite",
        ),
        (
            Box::new(|v| v["materials"]["cotton"]["damping"]["stretch"] = json!(-1)),
            "materials.cotton.damping.stretch",
            "expected non-negative and finite",
        ),
        (
            Box::new(|v| v["objects"][2]["radius"] = json!(0)),
            "objects[2].radius",
            "expected a positive finite number (m), got 0",
        ),
        (
            Box::new(|v| v["objects"][2]["friction"] = json!(-0.1)),
            "objects[2].friction",
            "expected a non-negative finite number",
        ),
        (
            Box::new(|v| v["objects"][3]["stiffness"] = json!(0)),
            "objects[3].stiffness",
            "expected a positive finite number (N/m)",
        ),
        (
            Box::new(|v| v["objects"][3]["normal"] = json!([0, 0, 0])),
            "objects[3].normal",
            "expected a non-zero direction",
        ),
        (
            Box::new(|v| v["objects"][1]["size"][1] = json!(-0.1)),
            "objects[1].size[1]",
            "expected a positive finite number (m)",
        ),
        (
            Box::new(|v| v["objects"][1]["yarn_counts"] = json!([200, 1])),
            "objects[1].yarn_counts[1]",
            "expected at least 2 yarns (weft), got 1",
        ),
        (
            Box::new(|v| v["objects"][0]["nodes"] = json!([[0, 0, 0]])),
            "objects[0].nodes",
            "a yarn needs at least two nodes, got 1",
        ),
        (
            Box::new(|v| v["objects"][0]["rest_lengths"] = json!([0.001])),
            "objects[0].rest_lengths",
            "expected 2 values (one per segment of the 3 nodes), got 1",
        ),
        (
            Box::new(|v| v["objects"][0]["rest_lengths"] = json!([0.001, 0])),
            "objects[0].rest_lengths[1]",
            "expected a positive finite number (m)",
        ),
        (
            Box::new(|v| v["objects"][0]["point_masses"]["2"] = json!(-1)),
            "objects[0].point_masses.2",
            "expected a non-negative finite number (kg)",
        ),
        (
            Box::new(|v| v["objects"][1]["point_masses"] = json!({"edge:weft_end": -1e-6})),
            "objects[1].point_masses.edge:weft_end",
            "expected a non-negative finite number (kg)",
        ),
    ];
    for (f, path, expect) in cases {
        let e = load_err(&with(example(), f));
        check(&e, path, expect);
    }
    // Numbers JSON cannot hold as f64 are rejected by the parser with a position.
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/design_example.json"),
    )
    .unwrap()
    .replace("\"duration\": 10.0", "\"duration\": 1e400");
    let e = Scene::from_str(&text, "scene.json").unwrap_err();
    assert!(matches!(e, SceneError::Syntax { line: 2, .. }), "{e}");
    assert!(
        e.to_string().starts_with("scene.json: line 2, column"),
        "{e}"
    );
    assert!(e.to_string().contains("number out of range"), "{e}");
}

#[test]
fn node_selectors() {
    let e = load_err(&with(example(), |v| {
        v["objects"][1]["pinned"][1] = json!("corner:9")
    }));
    assert_eq!(
        e.to_string(),
        "scene.json: objects[1].pinned[1]: 'corner:9': expected a node index, corner:0..3 or edge:warp_start|warp_end|weft_start|weft_end"
    );
    let e = load_err(&with(example(), |v| {
        v["objects"][4]["nodes"][0] = json!("edge:top")
    }));
    check(
        &e,
        "objects[4].nodes[0]",
        "'edge:top': expected a node index",
    );
    let e = load_err(&with(example(), |v| {
        v["objects"][0]["pinned"] = json!([0, 3])
    }));
    check(
        &e,
        "objects[0].pinned[1]",
        "'3': node index out of range: the yarn has 3 nodes",
    );
    let e = load_err(&with(example(), |v| {
        v["objects"][0]["pinned"] = json!(["corner:0"])
    }));
    check(
        &e,
        "objects[0].pinned[0]",
        "'corner:0': corner and edge selectors apply to woven patches",
    );
    let e = load_err(&with(example(), |v| {
        v["objects"][1]["pinned"] = json!([40000])
    }));
    check(
        &e,
        "objects[1].pinned[0]",
        "the woven_patch has 40000 nodes",
    );
    let e = load_err(&with(example(), |v| {
        v["objects"][0]["initial_velocities"] = json!({"5": [0, 0, 0]})
    }));
    check(&e, "objects[0].initial_velocities.5", "out of range");
    let e = load_err(&with(example(), |v| {
        v["objects"][0]["point_masses"] = json!({"two": 1.0})
    }));
    check(
        &e,
        "objects[0].point_masses.two",
        "'two': expected a node index",
    );
    let e = load_err(&with(example(), |v| {
        v["objects"][0]["pinned"] = json!([-1])
    }));
    check(&e, "objects[0].pinned[0]", "invalid value: integer `-1`");
    let e = load_err(&with(example(), |v| {
        v["objects"][4]["object"] = json!(0);
        v["objects"][4]["nodes"] = json!([1, "edge:warp_end"]);
    }));
    check(
        &e,
        "objects[4].nodes[1]",
        "'edge:warp_end': corner and edge selectors",
    );
}

#[test]
fn core_model_errors_carry_scene_numbering() {
    // Coincident nodes in the yarn, which is scene object 1 but fabric object 0.
    let e = build_err(&with(small(), |v| {
        v["objects"][1]["nodes"][2] = json!([0.001, 0, 0])
    }));
    check(
        &e,
        "objects[1].nodes[2]",
        "object 1, warp yarn 0: nodes 1 and 2 coincide",
    );
    assert!(matches!(e, SceneError::Model { .. }));
    // Warp direction parallel to the normal in the patch (scene 2, fabric 1).
    let e = build_err(&with(small(), |v| {
        v["objects"][2]["warp_direction"] = json!([0, 2, 0])
    }));
    check(
        &e,
        "objects[2].warp_direction",
        "object 2 (woven_patch): warp_direction must be non-zero and not parallel to the normal",
    );
    // Zero density and no point mass: a free node without mass.
    let e = build_err(&with(small(), |v| {
        v["materials"]["cotton"]["density"] = json!(0.0);
        v["objects"].as_array_mut().unwrap().pop();
    }));
    check(
        &e,
        "objects[1]",
        "object 1, warp yarn 0, node 0: has free degrees of freedom but zero mass",
    );
    // The same yarn becomes a valid spring-mass system when pinned at 0 with point masses.
    let v = with(small(), |v| {
        v["materials"]["cotton"]["density"] = json!(0.0);
        v["objects"].as_array_mut().unwrap().pop();
        v["objects"][1]["pinned"] = json!([0]);
        v["objects"][1]["point_masses"] = json!({"1": 1.0, "2": 1.0});
    });
    let built = Scene::from_str(&v.to_string(), "scene.json")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(built.fabric.point_mass, vec![0.0, 1.0, 1.0]);
}

#[test]
fn file_errors_name_the_file() {
    let e = Scene::from_path("/nonexistent/dir/scene.json").unwrap_err();
    assert!(matches!(e, SceneError::Io { .. }));
    assert!(
        e.to_string()
            .starts_with("/nonexistent/dir/scene.json: cannot read the scene file"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    std::fs::write(
        &path,
        "{\n  \"duration\": 1,\n  \"time_step\": {\"dt\": }\n}",
    )
    .unwrap();
    let e = Scene::from_path(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}: line 3, column 23: expected value", path.display())
    );
    let path = dir.path().join("silk.json");
    let v = with(example(), |v| v["objects"][1]["material"] = json!("silk"));
    std::fs::write(&path, v.to_string()).unwrap();
    let e = Scene::from_path(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: objects[1].material: unknown material 'silk' (defined: cotton)",
            path.display()
        )
    );
}

#[test]
fn fabric_presets_as_materials() {
    // A preset homogenised at the patch's spacing: k_s = E_w s, k_b = B_w s.
    let v = with(small(), |v| {
        v["fabrics"] = json!({"shirt": {"preset": "cotton", "spacing": 0.005}});
        v["objects"][2]["material"] = json!("shirt");
        v["objects"][2]["sliding"] = json!(false);
    });
    let scene = Scene::from_str(&v.to_string(), "scene.json").unwrap();
    let built = scene.build().unwrap();
    let m = built
        .fabric
        .materials
        .iter()
        .find(|m| m.name == "shirt")
        .unwrap();
    let p = weft_core::FabricPreset::Cotton.properties();
    approx::assert_relative_eq!(m.stretch_stiffness, p.tensile * 0.005, max_relative = 1e-12);
    approx::assert_relative_eq!(m.bending_stiffness, p.bending * 0.005, max_relative = 1e-12);
    assert!(matches!(m.damping, weft_core::Damping::StrainRate(_)));
    // A damping override replaces the preset's.
    let v2 = with(v.clone(), |v| {
        v["fabrics"]["shirt"]["damping"] = json!({"model": "rayleigh", "alpha": 0, "beta": 0.01});
    });
    let built = Scene::from_str(&v2.to_string(), "scene.json")
        .unwrap()
        .build()
        .unwrap();
    assert!(built.fabric.materials.iter().any(|m| matches!(
        m.damping,
        weft_core::Damping::Rayleigh { beta, .. } if beta == 0.01
    )));
    // Errors name the key.
    let e = load_err(&with(v.clone(), |v| {
        v["fabrics"]["shirt"]["preset"] = json!("linen");
    }));
    check(&e, "fabrics.shirt.preset", "unknown variant `linen`");
    let e = load_err(&with(v.clone(), |v| {
        v["fabrics"]["shirt"]["spacing"] = json!(0.0);
    }));
    check(&e, "fabrics.shirt.spacing", "positive");
    let e = load_err(&with(v.clone(), |v| {
        v["fabrics"]["cotton"] = json!({"preset": "silk", "spacing": 0.001});
    }));
    check(&e, "fabrics.cotton", "not also used in materials");
    // The patch must be woven at the preset's spacing, and slide only
    // with the fabric's friction and contact.
    let e = load_err(&with(v.clone(), |v| {
        v["objects"][2]["yarn_counts"] = json!([3, 5]);
    }));
    check(
        &e,
        "objects[2].yarn_counts[1]",
        "weft yarn spacing of fabrics.shirt.spacing = 5 mm",
    );
    let e = load_err(&with(v.clone(), |v| {
        v["objects"][2]["sliding"] = json!(true);
    }));
    check(
        &e,
        "objects[2].sliding",
        "yarns run through the crossings freely",
    );
    let e = load_err(&with(v, |v| {
        v["objects"][2]["material"] = json!("jeans");
    }));
    check(&e, "objects[2].material", "(defined: cotton, shirt)");
}
