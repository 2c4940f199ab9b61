// SPDX-License-Identifier: BSD-3-Clause
//! Links libmdcom statically: the static library of a CMake build
//! (libmdcom.a, target mdcom_static) in $MDCOM_LIB_DIR, by default the
//! source tree's build/default.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=MDCOM_LIB_DIR");
    let dir = match std::env::var_os("MDCOM_LIB_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../build/default"),
    };
    let lib = dir.join("libmdcom.a");
    if !lib.is_file() {
        panic!(
            "{} not found: build the CMake target mdcom_static first, or set MDCOM_LIB_DIR",
            lib.display()
        );
    }
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static=mdcom");
    println!("cargo:rustc-link-lib=dylib=pthread");
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
