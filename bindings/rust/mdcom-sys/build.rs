// SPDX-License-Identifier: BSD-3-Clause
//! Finds and links libmdcom. Where it looks, in order:
//!   MDCOM_LIB_DIR   a directory holding libmdcom.a (or libmdcom.so with
//!                   MDCOM_LINK=dylib): CMake passes its build directory;
//!   otherwise       the source tree's build/default (`cmake --preset default`
//!                   then `cmake --build build/default --target mdcom_static`).
//! MDCOM_LINK=static (default) links libmdcom.a: no run-time search path is
//! needed and the crate's binaries run from anywhere; dylib links
//! libmdcom.so (then the binaries need LD_LIBRARY_PATH or an installed lib).
//! It also tells dependents (cargo's `links` metadata, DEP_MDCOM_INCLUDE) the
//! header directory, which the mdcom crate's layout test compiles against.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=MDCOM_LIB_DIR");
    println!("cargo:rerun-if-env-changed=MDCOM_LINK");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let dir = match std::env::var_os("MDCOM_LIB_DIR") {
        Some(d) => PathBuf::from(d),
        None => root.join("build/default"),
    };
    let kind = std::env::var("MDCOM_LINK").unwrap_or_else(|_| "static".into());
    let file = match kind.as_str() {
        "static" => "libmdcom.a",
        "dylib" => "libmdcom.so",
        k => panic!("MDCOM_LINK={k}: say static or dylib"),
    };
    let lib = dir.join(file);
    if !lib.is_file() {
        panic!(
            "{} not found: build libmdcom first (cmake --preset default; cmake --build \
             build/default --target mdcom_static) or set MDCOM_LIB_DIR to the directory holding it",
            lib.display()
        );
    }
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib={kind}=mdcom");
    // the Linux port uses POSIX threads (robust mutexes, futex waits)
    println!("cargo:rustc-link-lib=dylib=pthread");
    let inc = root.join("include");
    let inc = inc.canonicalize().unwrap_or(inc);
    println!("cargo:include={}", inc.display());
}
