//! Element evaluation throughput (filled in with the element set).
fn main() {}
