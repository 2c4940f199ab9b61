// SPDX-License-Identifier: BSD-3-Clause
//! The region's TOML, read by `mdcom-cfg dump --json`: the one configuration
//! parser of the project checks it (the same error messages as `mdcom-cfg
//! check`), this side only maps the normalised JSON.

#![allow(dead_code)]

use crate::binding::{ChannelSpec, SystemSpec};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

pub struct BridgeCfg {
    pub channel: String,
    pub out: bool, // "out": channel -> Zenoh; else "in"
    pub key: String,
    pub domain: String,
    pub reliable: bool,
    pub block: bool,
    pub priority: u8,
    pub rate_limit: u64,
    pub express: bool,
}

pub struct Cfg {
    pub sys: SystemSpec,
    pub bridges: Vec<BridgeCfg>,
}

pub enum CfgError {
    /// Configuration errors: one line each, exit status 2.
    Invalid(Vec<String>),
    /// mdcom-cfg could not be run.
    Tool(String),
}

/// mdcom-cfg: $MDCOM_CFG, beside this program (installed), the source tree's
/// (built from a checkout), else from PATH.
fn cfg_tool() -> PathBuf {
    if let Some(p) = std::env::var_os("MDCOM_CFG") {
        return PathBuf::from(p);
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            let p = dir.join("mdcom-cfg");
            if p.is_file() {
                return p;
            }
        }
    }
    if let Some(src) = option_env!("MDCOM_SOURCE_DIR") {
        let p = PathBuf::from(src).join("tools").join("mdcom-cfg");
        if p.is_file() {
            return p;
        }
    }
    PathBuf::from("mdcom-cfg")
}

fn s(v: &Value, k: &str) -> String {
    v[k].as_str().unwrap_or_default().to_string()
}
fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or(0)
}

pub fn load(path: &str) -> Result<Cfg, CfgError> {
    let tool = cfg_tool();
    let out = Command::new(&tool)
        .args(["dump", "--json", path])
        .output()
        .map_err(|e| CfgError::Tool(format!("cannot run {}: {e} (set MDCOM_CFG)", tool.display())))?;
    if !out.status.success() {
        let lines: Vec<String> = String::from_utf8_lossy(&out.stderr).lines().map(str::to_string).collect();
        return Err(if out.status.code() == Some(2) {
            CfgError::Invalid(lines)
        } else {
            CfgError::Tool(format!("{} failed: {}", tool.display(), lines.join("; ")))
        });
    }
    let v: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| CfgError::Tool(format!("{}: bad JSON: {e}", tool.display())))?;
    let doms: Vec<(String, u32, bool)> = v["domains"]
        .as_array()
        .map(|a| a.iter().map(|d| (s(d, "name"), u(d, "id") as u32, s(d, "role") == "master")).collect())
        .unwrap_or_default();
    let channels = v["channels"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| ChannelSpec {
                    name: s(c, "name"),
                    fifo: s(c, "type") == "fifo",
                    block_size: u(c, "block_size") as u32,
                    block_count: u(c, "block_count") as u32,
                    queue_depth: u(c, "queue_depth") as u32,
                    senders: u(c, "senders_mask") as u32,
                    receivers: u(c, "receivers_mask") as u32,
                    size: u(c, "size") as u32,
                    users: u(c, "users_mask") as u32,
                })
                .collect()
        })
        .unwrap_or_default();
    let bridges = v["bridges"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|b| BridgeCfg {
                    channel: s(b, "channel"),
                    out: s(b, "direction") == "out",
                    key: s(b, "key"),
                    domain: s(b, "domain"),
                    reliable: s(b, "reliability") != "best_effort",
                    block: s(b, "congestion") != "drop",
                    priority: u(b, "priority").clamp(1, 7) as u8,
                    rate_limit: u(b, "rate_limit"),
                    express: b["express"].as_bool().unwrap_or(false),
                })
                .collect()
        })
        .unwrap_or_default();
    let r = &v["region"];
    let sys = SystemSpec {
        region: s(r, "name"),
        size: u(r, "size") as u32,
        mode: u(r, "mode") as u32,
        group: r["group"].as_i64().unwrap_or(-1) as i32,
        domains: doms,
        channels,
    };
    Ok(Cfg { sys, bridges })
}
