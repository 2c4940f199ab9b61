// SPDX-License-Identifier: BSD-3-Clause
//! Hands the C header directory that mdcom-sys found (its `links` metadata,
//! DEP_MDCOM_INCLUDE) to this crate's tests as MDCOM_INCLUDE_DIR: the layout
//! test compiles a C program against the very headers the FFI transcribes.

fn main() {
    let inc = std::env::var("DEP_MDCOM_INCLUDE").expect("mdcom-sys sets DEP_MDCOM_INCLUDE");
    println!("cargo:rustc-env=MDCOM_INCLUDE_DIR={inc}");
}
