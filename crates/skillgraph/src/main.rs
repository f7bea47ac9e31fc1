//! temp
fn main() {}
