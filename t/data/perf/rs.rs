use std::collections::HashMap;
mod shapes {
    pub trait Area { fn area(&self) -> f64; }
    pub struct Sq(pub f64);
    impl Area for Sq { #[inline(never)] fn area(&self) -> f64 { let mut a = 0.0; for i in 0..200 { a += self.0 * (i as f64).sqrt(); } a } }
}
#[inline(never)]
fn count_words(n: usize) -> usize {
    let mut m: HashMap<String, usize> = HashMap::new();
    for i in 0..n { *m.entry(format!("w{}", i % 5000)).or_insert(0) += 1; }
    m.len()
}
#[inline(never)]
fn areas<T: shapes::Area>(v: &[T]) -> f64 { v.iter().map(|s| s.area()).sum() }
fn main() {
    let v: Vec<shapes::Sq> = (0..20000).map(|i| shapes::Sq(i as f64)).collect();
    let mut t = 0.0;
    for _ in 0..30 { t += areas(&v); }
    let c = std::thread::spawn(|| count_words(1500000)).join().unwrap();
    println!("{} {}", t, c);
}
