//! SVG plots: well-formed, with the curves and legend labels, written
//! atomically (no temporary files left, even on failure).

mod common;

use std::path::Path;

use common::Oscillator;
use weft_analysis::{AnalysisError, PlotOptions, plot_energy, plot_kinetic_comparison};

/// Minimal XML well-formedness check: tags nest and close, one root `<svg>`,
/// no text outside it. Returns the tag names opened, in order.
fn check_xml(text: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut opened = Vec::new();
    let mut rest = text.trim();
    let mut roots = 0;
    while let Some(start) = rest.find('<') {
        if stack.is_empty() {
            assert!(
                rest[..start].trim().is_empty(),
                "text outside the root: {:?}",
                &rest[..start]
            );
        }
        rest = &rest[start..];
        if rest.starts_with("<?") {
            let end = rest.find("?>").expect("unterminated <?");
            rest = &rest[end + 2..];
            continue;
        }
        if rest.starts_with("<!--") {
            let end = rest.find("-->").expect("unterminated comment");
            rest = &rest[end + 3..];
            continue;
        }
        let end = rest.find('>').expect("unterminated tag");
        let tag = &rest[1..end];
        assert!(!tag.contains('<'), "'<' inside a tag: {tag}");
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack
                .pop()
                .unwrap_or_else(|| panic!("closing </{name}> without opening"));
            assert_eq!(open, name.trim(), "mismatched closing tag");
        } else {
            let name: String = tag
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '/')
                .collect();
            assert!(!name.is_empty(), "empty tag name");
            assert_eq!(
                tag.matches('"').count() % 2,
                0,
                "unbalanced quotes in <{tag}>"
            );
            if stack.is_empty() {
                roots += 1;
                assert_eq!(name, "svg", "root element");
            }
            opened.push(name.clone());
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
        rest = &rest[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed tags: {stack:?}");
    assert!(rest.trim().is_empty(), "trailing text: {rest:?}");
    assert_eq!(roots, 1);
    opened
}

/// Texts of the `<text>` elements.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .map(|s| {
            let body = &s[s.find('>').unwrap() + 1..];
            body[..body.find("</text>").unwrap()].trim().to_string()
        })
        .collect()
}

fn only_file(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn run(zeta: f64) -> weft_analysis::EnergyColumns {
    Oscillator::new(zeta).columns(1.0 / 64.0, 300, |_| 0.0)
}

#[test]
fn energy_plot_is_well_formed_svg_with_legend() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("energy.svg");
    plot_energy(&run(0.05), &path, &PlotOptions::default()).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    let tags = check_xml(&svg);
    let t = texts(&svg);
    for label in [
        "kinetic",
        "elastic",
        "gravity - gravity(t0)",
        "dissipated",
        "total",
        "t [s]",
        "energy [J]",
    ] {
        assert!(
            t.iter().any(|s| s == label),
            "missing text '{label}' in {t:?}"
        );
    }
    // Five curves and five legend swatches.
    let lines = tags
        .iter()
        .filter(|n| *n == "polyline" || *n == "path")
        .count();
    assert!(lines >= 10, "{lines} line elements");
    // The kinetic curve has one vertex per frame.
    let longest = svg
        .split("<polyline")
        .skip(1)
        .map(|s| s[..s.find("/>").unwrap()].matches(',').count())
        .max()
        .unwrap();
    assert!(longest >= 250, "longest polyline has {longest} points");
    assert_eq!(only_file(dir.path()), vec!["energy.svg"]);
}

#[test]
fn log_kinetic_adds_a_log_panel() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.svg");
    let opts = PlotOptions {
        log_kinetic: true,
        title: Some("ζ = 0.2 & friends".into()),
        ..PlotOptions::default()
    };
    plot_energy(&run(0.2), &path, &opts).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    check_xml(&svg);
    let t = texts(&svg);
    assert!(t.iter().any(|s| s == "kinetic energy (log scale)"), "{t:?}");
    assert!(t.iter().any(|s| s == "kinetic energy [J]"));
    // The title is XML-escaped.
    assert!(t.iter().any(|s| s == "ζ = 0.2 &amp; friends"), "{t:?}");
    // Log axis labels span decades: several distinct exponents.
    let exps: std::collections::BTreeSet<&str> = t
        .iter()
        .filter_map(|s| s.split_once('e').map(|(_, e)| e))
        .collect();
    assert!(exps.len() >= 3, "{exps:?}");
    assert_eq!(only_file(dir.path()), vec!["e.svg"]);
}

#[test]
fn comparison_overlays_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (run(0.0), run(0.05), run(0.2));
    let runs = [("no damping", &a), ("strain-rate", &b), ("Rayleigh", &c)];
    for log in [false, true] {
        let path = dir.path().join(format!("cmp{log}.svg"));
        let opts = PlotOptions {
            log_kinetic: log,
            ..PlotOptions::default()
        };
        plot_kinetic_comparison(&runs, &path, &opts).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        let tags = check_xml(&svg);
        let t = texts(&svg);
        for (label, _) in &runs {
            assert!(t.iter().any(|s| s == label), "missing '{label}' in {t:?}");
        }
        assert!(tags.iter().filter(|n| *n == "polyline").count() >= 6);
    }
    assert_eq!(only_file(dir.path()), vec!["cmpfalse.svg", "cmptrue.svg"]);
    assert!(matches!(
        plot_kinetic_comparison(&[], dir.path().join("x.svg"), &PlotOptions::default()),
        Err(AnalysisError::Columns(_))
    ));
}

#[test]
fn overwrites_atomically_and_cleans_up_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("energy.svg");
    std::fs::write(&path, "old").unwrap();
    plot_energy(&run(0.05), &path, &PlotOptions::default()).unwrap();
    assert!(std::fs::read_to_string(&path).unwrap().contains("<svg"));
    // Target is a directory: the rename fails, the temporary file is removed.
    let target = dir.path().join("sub");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), "x").unwrap();
    let e = plot_energy(&run(0.05), &target, &PlotOptions::default()).unwrap_err();
    assert!(matches!(e, AnalysisError::Io { .. }), "{e:?}");
    assert!(e.to_string().contains("sub"), "{e}");
    assert_eq!(only_file(dir.path()), vec!["energy.svg", "sub"]);
    // Missing directory.
    let e = plot_energy(
        &run(0.05),
        dir.path().join("no/such/dir/e.svg"),
        &PlotOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, AnalysisError::Io { .. }));
}

#[test]
fn rejects_empty_columns_and_tiny_images() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.svg");
    let empty = weft_analysis::EnergyColumns::default();
    assert!(matches!(
        plot_energy(&empty, &path, &PlotOptions::default()),
        Err(AnalysisError::Columns(_))
    ));
    let opts = PlotOptions {
        width: 0,
        ..PlotOptions::default()
    };
    assert!(matches!(
        plot_energy(&run(0.05), &path, &opts),
        Err(AnalysisError::InvalidOption { name: "width", .. })
    ));
    // A single frame still plots (degenerate ranges are padded).
    let one = Oscillator::new(0.05).columns(0.01, 1, |_| 0.0);
    plot_energy(
        &one,
        &path,
        &PlotOptions {
            log_kinetic: true,
            ..PlotOptions::default()
        },
    )
    .unwrap();
    check_xml(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(only_file(dir.path()), vec!["e.svg"]);
}
