use weft_garment::transfer::carry_state;
use weft_pattern::{Pattern, WeaveOptions, weave_garment};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let p = Pattern::from_file(std::path::Path::new(&a[1])).unwrap();
    let fs = weft_io::read_final_state(&a[2]).unwrap();
    let w = |s: f64| {
        let mut o = WeaveOptions::new(s);
        o.narrow_panel_halvings = 6;
        weave_garment(&p, &o).unwrap()
    };
    let c = w(0.06);
    let f = w(0.03);
    let q: Vec<f64> = (0..fs.x.len())
        .flat_map(|i| [fs.x[i][0], fs.x[i][1], fs.x[i][2], fs.u[i], fs.v[i]])
        .collect();
    let v = vec![0.0; q.len()];
    let ties_c = weft_garment::seam_ties(&c);
    let xc = weft_garment::transfer::positions(&q);
    let n0 = weft_garment::layer_crossings(&c.fabric, &ties_c, &xc, 0.12).len();
    let n1 = weft_garment::layer_crossings(&c.fabric, &ties_c, &xc, 0.06).len();
    println!("coarse at 60 mm radius: {n1}");
    let (qn, _) = carry_state(&c, &q, &v, &f);
    let xf = weft_garment::transfer::positions(&qn);
    let ties = weft_garment::seam_ties(&f);
    let l = weft_garment::layer_crossings(&f.fabric, &ties, &xf, 0.06);
    println!("coarse {} carried {}", n0, l.len());
    for c in l.iter().take(5) {
        println!("{:?}", c);
    }
}
