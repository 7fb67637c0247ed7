fn main() {
    println!("stridelint {}", env!("CARGO_PKG_VERSION"));
}
