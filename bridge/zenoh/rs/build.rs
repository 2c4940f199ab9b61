// SPDX-License-Identifier: BSD-3-Clause
//! libmdcom is linked by the mdcom-sys crate (bindings/rust/mdcom-sys,
//! build.rs: libmdcom.a from $MDCOM_LIB_DIR, by default the source tree's
//! build/default). This script only records where the source tree is.

use std::path::PathBuf;

fn main() {
    // the source tree, where the program finds tools/mdcom-cfg when it runs
    // from a build: CMake passes it (MDCOM_SOURCE_DIR) and cargo reruns this
    // script when it changes, since the target directory is a cache shared by
    // checkouts (a path kept from another checkout names a tree that may be gone)
    println!("cargo:rerun-if-env-changed=MDCOM_SOURCE_DIR");
    let src = match std::env::var_os("MDCOM_SOURCE_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.."),
    };
    let src = src.canonicalize().unwrap_or(src).display().to_string();
    println!("cargo:rustc-env=MDCOM_SOURCE_DIR={src}");
}
