//! TriMesh reading and writing: round trip and the errors a bad body file
//! gives.

use weft_io::{MeshError, TriMesh, YarnCurves, write_bcc};

#[test]
fn obj_round_trip_keeps_counts_and_coordinates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tet.obj");
    let tet = TriMesh {
        vertices: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
        ],
        triangles: vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
    };
    assert!(tet.is_closed());
    assert!((tet.signed_volume() - 1.0 / 6.0).abs() < 1e-15);
    tet.write_obj(&path, "a tetrahedron\nsecond line", 6)
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# a tetrahedron\n# second line\nv 0.000000 0.000000 0.000000\n"));
    let back = TriMesh::from_obj(&path).unwrap();
    // The reader numbers vertices by first use; the triangles (in order)
    // have the same corners.
    assert_eq!(back.vertices.len(), 4);
    assert_eq!(back.triangles.len(), 4);
    for (a, b) in back.triangles.iter().zip(&tet.triangles) {
        assert_eq!(
            a.map(|i| back.vertices[i as usize]),
            b.map(|i| tet.vertices[i as usize])
        );
    }
    assert!(back.is_closed());
}

#[test]
fn missing_and_faceless_files_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nobody.obj");
    let e = TriMesh::from_obj(&missing).unwrap_err();
    assert!(matches!(e, MeshError::Obj { .. }));
    assert!(e.to_string().contains("nobody.obj"), "{e}");
    let points = dir.path().join("points.obj");
    std::fs::write(&points, "v 0 0 0\nv 1 0 0\nv 0 1 0\n").unwrap();
    let e = TriMesh::from_obj(&points).unwrap_err();
    assert!(matches!(e, MeshError::Empty { .. }));
    assert!(
        e.to_string().contains("points.obj")
            && e.to_string().contains("expected at least one face"),
        "{e}"
    );
    let bad = dir.path().join("bad.obj");
    std::fs::write(&bad, "v 0 0 zero\nf 1 2 3\n").unwrap();
    let e = TriMesh::from_obj(&bad).unwrap_err().to_string();
    assert!(e.contains("bad.obj"), "{e}");
}

#[test]
fn writing_into_a_missing_directory_names_the_file_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no_such_dir").join("y.bcc");
    let e = write_bcc(&path, &YarnCurves::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("y.bcc"), "{e}");
    assert!(!path.exists());
}
