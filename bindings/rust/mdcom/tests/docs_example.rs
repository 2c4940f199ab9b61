// SPDX-License-Identifier: BSD-3-Clause
//! The Rust block of docs/rust.md is not compiled by the docs snippet test
//! (tests/docs: no Rust check; the block is marked skip): it is this crate's
//! first doctest (src/lib.rs, compiled by `cargo test`). This test keeps the
//! two the same: the doctest's lines without its hidden (`# `) ones equal the
//! block's lines.

fn doc_block() -> Vec<String> {
    let md = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../docs/rust.md")).unwrap();
    let start = md.find("```rust\n").expect("a rust block in docs/rust.md") + "```rust\n".len();
    let end = start + md[start..].find("```").unwrap();
    md[start..end].lines().map(|l| l.trim_end().to_string()).collect()
}

fn doctest() -> Vec<String> {
    let src = include_str!("../src/lib.rs");
    let lines: Vec<&str> = src.lines().filter_map(|l| l.strip_prefix("//!")).collect();
    let start = lines.iter().position(|l| l.trim() == "```no_run").expect("the no_run doctest") + 1;
    lines[start..]
        .iter()
        .take_while(|l| l.trim() != "```")
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .filter(|l| !l.starts_with("# "))
        .map(|l| l.trim_end().to_string())
        .collect()
}

#[test]
fn docs_rust_md_block_is_the_doctest() {
    let (d, t) = (doc_block(), doctest());
    assert!(d.len() > 5, "{d:?}");
    assert_eq!(d, t, "docs/rust.md's rust block and the doctest of src/lib.rs differ");
}
