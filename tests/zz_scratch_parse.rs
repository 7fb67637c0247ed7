#[test]
fn scratch() {
    let mut total = 0;
    let start = std::time::Instant::now();
    let mut bytes = 0;
    for dir in ["/tmp/cc/candle-nn-0.11.1/src", "/tmp/cc/candle-core-0.11.1/src", "/tmp/cc/candle-core-0.11.1/src/cpu_backend", "/tmp/cc/candle-core-0.11.1/src/quantized"] {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().map_or(true, |x| x != "rs") { continue; }
            let s = std::fs::read_to_string(&p).unwrap();
            bytes += s.len();
            let o = stridelint::frontend::rust::parse_rust(&s);
            total += 1;
            if !o.errors.is_empty() { println!("{}: {:?}", p.display(), o.errors); }
            let n: usize = o.module.functions.len() + o.module.classes.iter().map(|c| c.methods.len()).sum::<usize>();
            if n == 0 { println!("{}: no functions", p.display()); }
        }
    }
    println!("{total} files, {bytes} bytes in {:?}", start.elapsed());
}
