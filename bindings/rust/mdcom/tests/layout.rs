// SPDX-License-Identifier: BSD-3-Clause
//! The #[repr(C)] structs of mdcom-sys against the C header: a C program
//! compiled here against include/ (MDCOM_INCLUDE_DIR, from mdcom-sys' build
//! script) prints sizeof, alignof and every field's offsetof; each line must
//! equal what Rust computes. The compiler is $MDCOM_CC, else $CC, else cc.

use mdcom::sys::*;
use std::collections::BTreeMap;
use std::mem::{align_of, offset_of, size_of};
use std::process::Command;

/// (struct, [fields]): the names as in C; Rust renames `type`/`fn` to `type_`/`fn_`.
const STRUCTS: &[(&str, &[&str])] = &[
    ("mdcom_domain_cfg", &["name", "id", "role"]),
    ("mdcom_channel_cfg", &["name", "type", "block_size", "block_count", "queue_depth",
                            "senders", "receivers", "size", "users"]),
    ("mdcom_config", &["region_name", "region_size", "mode", "group", "domains", "n_domains",
                       "channels", "n_channels"]),
    ("mdcom_init_opts", &["attach_timeout_ns", "platform", "errbuf", "errbuf_len", "spin_ns",
                          "keep_region", "heartbeat_ms", "reserved0", "layout", "reserved"]),
    ("mdcom_fifo_state", &["block_size", "block_count", "queue_depth", "free_blocks", "queued",
                           "filtered", "errors", "lost", "reclaimed", "discarded", "reserved"]),
    ("mdcom_filter", &["type", "n", "fn", "arg"]),
];

/// What the C compiler says: "struct size N", "struct align N", "struct.field N".
fn c_layout() -> BTreeMap<String, usize> {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("mdcom_layout.c");
    let exe = dir.join("mdcom_layout");
    let mut c = String::from("#include <stdio.h>\n#include <stddef.h>\n#include \"mdcom/mdcom.h\"\nint main(void) {\n");
    for (s, fields) in STRUCTS {
        c += &format!("printf(\"{s} size %zu\\n\", sizeof({s}));\n");
        c += &format!("printf(\"{s} align %zu\\n\", _Alignof({s}));\n");
        for f in *fields {
            c += &format!("printf(\"{s}.{f} %zu\\n\", offsetof({s}, {f}));\n");
        }
    }
    c += "return 0;\n}\n";
    std::fs::write(&src, c).unwrap();
    let cc = std::env::var("MDCOM_CC").or_else(|_| std::env::var("CC")).unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Werror", "-I", env!("MDCOM_INCLUDE_DIR"), "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("{cc}: {e} (set MDCOM_CC to a C compiler)"));
    assert!(out.status.success(), "{cc}: {}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

macro_rules! rust_layout {
    ($m:ident, $s:ident { $($f:ident => $c:literal),* }) => {{
        $m.insert(concat!(stringify!($s), " size").to_string(), size_of::<$s>());
        $m.insert(concat!(stringify!($s), " align").to_string(), align_of::<$s>());
        $( $m.insert(concat!(stringify!($s), ".", $c).to_string(), offset_of!($s, $f)); )*
    }};
}

fn rust_layout() -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    rust_layout!(m, mdcom_domain_cfg { name => "name", id => "id", role => "role" });
    rust_layout!(m, mdcom_channel_cfg { name => "name", type_ => "type", block_size => "block_size",
        block_count => "block_count", queue_depth => "queue_depth", senders => "senders",
        receivers => "receivers", size => "size", users => "users" });
    rust_layout!(m, mdcom_config { region_name => "region_name", region_size => "region_size",
        mode => "mode", group => "group", domains => "domains", n_domains => "n_domains",
        channels => "channels", n_channels => "n_channels" });
    rust_layout!(m, mdcom_init_opts { attach_timeout_ns => "attach_timeout_ns", platform => "platform",
        errbuf => "errbuf", errbuf_len => "errbuf_len", spin_ns => "spin_ns",
        keep_region => "keep_region", heartbeat_ms => "heartbeat_ms", reserved0 => "reserved0",
        layout => "layout", reserved => "reserved" });
    rust_layout!(m, mdcom_fifo_state { block_size => "block_size", block_count => "block_count",
        queue_depth => "queue_depth", free_blocks => "free_blocks", queued => "queued",
        filtered => "filtered", errors => "errors", lost => "lost", reclaimed => "reclaimed",
        discarded => "discarded", reserved => "reserved" });
    rust_layout!(m, mdcom_filter { type_ => "type", n => "n", fn_ => "fn", arg => "arg" });
    m
}

#[test]
fn structs_match_the_c_header() {
    let c = c_layout();
    let r = rust_layout();
    // every struct and field of the list was measured on both sides
    assert_eq!(c.keys().collect::<Vec<_>>(), r.keys().collect::<Vec<_>>());
    let diff: Vec<String> = c
        .iter()
        .filter(|(k, v)| r[*k] != **v)
        .map(|(k, v)| format!("{k}: C {v}, Rust {}", r[k]))
        .collect();
    assert!(diff.is_empty(), "layout differs from include/mdcom/mdcom.h:\n{}", diff.join("\n"));
    assert!(c.len() > 50, "{c:?}");
}
