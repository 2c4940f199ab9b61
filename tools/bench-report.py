#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench-report.py - turn one `mdcom-bench suite` directory into a report.

usage: tools/bench-report.py DIR

Reads DIR/{suite,latency,blocks,throughput,api,thread-metric}.json and .csv
(whatever is there) and writes
  DIR/results.json   every scenario's JSON under its name, plus the suite's
  DIR/results.csv    the scenarios' CSV rows in one file (one header)
  DIR/report.md      machine, method, summary, targets, tables, plots
  DIR/plots/*.png, *.svg   (matplotlib; skipped with a note when missing)
Exit status 0 when the report was written (even without plots), 2 on bad use.
"""
import csv
import json
import math
import os
import sys

SCENARIOS = ["latency", "blocks", "throughput", "api", "thread-metric", "reap", "python"]
# report order: baselines, mdcom, then the peers
PREF = ["raw-spin", "raw-futex", "mdcom-zc-poll", "mdcom-copy-poll", "mdcom-smem-poll",
        "mdcom-zc-block", "mdcom-copy-block"]


def load(dirpath, name):
    path = os.path.join(dirpath, name + ".json")
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"bench-report: {path}: {e}", file=sys.stderr)
        return None


def fmt_ns(ns):
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return "-"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e4:
        return f"{ns / 1e3:.2f} us"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} us"
    if ns < 1e9:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def fmt_size(b):
    if b >= 1 << 20 and b % (1 << 20) == 0:
        return f"{b >> 20} MiB"
    if b >= 1024 and b % 1024 == 0:
        return f"{b >> 10} KiB"
    return f"{b} B"


def fmt_rate(bps):
    if bps is None:
        return "-"
    if bps >= 1e9:
        return f"{bps / 1e9:.2f} GB/s"
    if bps >= 1e6:
        return f"{bps / 1e6:.1f} MB/s"
    if bps >= 1e3:
        return f"{bps / 1e3:.1f} kB/s"
    return f"{bps:.0f} B/s"


def fmt_x(v):
    return "-" if v is None else f"{v:.2f}x"


def table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out) + "\n"


def order(names, preferred):
    return [n for n in preferred if n in names] + sorted(n for n in names if n not in preferred)


# ---------------------------------------------------------------- plots

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
# (its yellow, too light on white, replaced by Tol's wine)
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#882255", "#000000"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h"]
DASHES = ["-", "--", ":", "-."]
FAMILIES = [("baselines", lambda t: t.startswith("raw-")),
            ("mdcom FIFO / SMEM", lambda t: t.startswith("mdcom-")),
            ("kernel IPC", lambda t: t in ("pipe", "unix-stream", "unix-seqpacket", "mq")),
            ("RPMsg and OpenAMP", lambda t: "rpmsg" in t or t in ("openamp", "oa-host-md", "md-host-oa")),
            ("iceoryx", lambda t: t.startswith("iceoryx"))]
# drawn thin and grey in every family panel, for scale
REFS = ["raw-spin", "mdcom-copy-poll"]


def family(t):
    return next((name for name, f in FAMILIES if f(t)), "other")


def style_map(names):
    """One (colour, marker, line style) per transport, the same in every plot:
    colour and marker cycle with different periods (8, 11), line style with 8."""
    m = {}
    for i, t in enumerate(order(set(names), PREF)):
        m[t] = dict(color=PALETTE[i % 8], marker=MARKERS[i % len(MARKERS)],
                    linestyle=DASHES[(i // 8) % len(DASHES)], ms=5, lw=1.6)
    return m


def size_ticks(ax, sizes, axis="x"):
    from matplotlib.ticker import FixedLocator, NullLocator
    sizes = sorted(set(sizes))
    if len(sizes) > 8:  # keep the powers of 4 (1 B, 4 B, ..., 1 MiB, 16 MiB) readable
        sizes = [x for x in sizes if (x.bit_length() - 1) % 2 == 0] or sizes
    loc = FixedLocator(sizes)
    labels = [fmt_size(x) for x in sizes]
    if axis == "x":
        ax.xaxis.set_major_locator(loc)
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
    else:
        ax.yaxis.set_major_locator(loc)
        ax.set_yticklabels(labels, fontsize=8)


def caption(host, quick):
    la = host.get("loadavg_1m")
    la = "?" if la is None or la < 0 else f"{la:.2f}"
    return (f"{host.get('cpu_model', '?')}, {host.get('cpus_online', '?')} vCPUs "
            f"({host.get('cpus_allowed', '?')} allowed), {host.get('kernel', '?')}; "
            f"load average {la} at start; {'--quick' if quick else 'full run'}; "
            f"{host.get('date', '?')}")


def log_ticks(ax, axis):
    """Labels at 1, 2, 5 x 10^n when the data spans less than two decades
    (else at the powers of ten only): never a log axis with one label."""
    from matplotlib.ticker import LogLocator
    lo, hi = ax.get_ylim() if axis == "y" else ax.get_xlim()
    subs = (1.0, 2.0, 5.0) if lo > 0 and hi / lo < 100 else (1.0,)
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_locator(LogLocator(base=10, subs=subs))


def fmt_us_axis(ax, axis="y"):
    from matplotlib.ticker import FuncFormatter
    def short(v, _):
        if v < 1:
            return f"{v * 1e3:.0f} ns"
        return f"{v:g} us" if v < 1e3 else f"{v / 1e3:g} ms" if v < 1e6 else f"{v / 1e6:g} s"
    log_ticks(ax, axis)
    a = ax.yaxis if axis == "y" else ax.xaxis
    a.set_major_formatter(FuncFormatter(short))
    a.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def fmt_rate_axis(ax, unit=""):
    from matplotlib.ticker import FuncFormatter

    def short(v, _):
        for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if v >= div:
                return f"{v / div:g}{suf}{unit}"
        return f"{v:g}{unit}"
    log_ticks(ax, "y")
    ax.yaxis.set_major_formatter(FuncFormatter(short))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def cell(r, text, error=lambda r: "ERROR"):
    """A table cell for result r: n/a (missing or not applicable), error(r) when
    the cell failed, else text(r)."""
    if not r or r["na"]:
        return "n/a"
    return text(r) if r.get("ok") else error(r)


def size_panel(ax, sizes, title, ylabel, fmt_y, legend_fs=7.5, **legend):
    """One transport family's panel: log-log, sizes on x, y formatted by fmt_y."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    size_ticks(ax, sizes)
    fmt_y(ax)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    # more than five series: two columns, half as tall, so that a legend in a
    # corner covers fewer points
    if len(ax.get_legend_handles_labels()[0]) > 5:
        legend.setdefault("ncol", 2)
    ax.legend(fontsize=legend_fs, framealpha=0.85, **legend)


def make_plots(d, res, notes, host, quick):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        notes.append("Plots skipped: matplotlib is not installed (Debian: python3-matplotlib).")
        return []
    pdir = os.path.join(d, "plots")
    os.makedirs(pdir, exist_ok=True)
    made = []
    cap = caption(host, quick)
    names = set()
    for key in ("latency", "throughput", "blocks"):
        names |= {r["transport"] for r in (res.get(key) or {}).get("results", [])}
    sty = style_map(names)

    def save(fig, name, title):
        fig.text(0.01, 0.002, cap, fontsize=7.5, color="#444444", ha="left", va="bottom")
        fig.subplots_adjust(bottom=max(fig.subplotpars.bottom, 0.12))
        for ext in ("png", "svg"):
            fig.savefig(os.path.join(pdir, f"{name}.{ext}"), dpi=110, bbox_inches="tight")
        plt.close(fig)
        made.append((name, title))

    def panels(groups, ncols=3, w=5.2, h=3.9, share=False):
        n = len(groups)
        cols = min(ncols, n)
        rows = (n + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(w * cols, h * rows + 0.6), squeeze=False,
                                 sharex=share, sharey=share)
        for k in range(n, rows * cols):
            axes[k // cols][k % cols].set_visible(False)
        return fig, [axes[k // cols][k % cols] for k in range(n)]

    def by_family(trs):
        groups = {}
        for t in order(set(trs), PREF):
            groups.setdefault(family(t), []).append(t)
        return [(f, groups[f]) for f, _ in FAMILIES + [("other", None)] if f in groups]

    lat = res.get("latency")
    if lat:
        for kind, title in (("rtt", "round trip"), ("oneway", "one way")):
            rows = [r for r in lat["results"] if r["kind"] == kind and not r["na"] and r.get("ok")]
            if not rows:
                continue
            groups = by_family(r["transport"] for r in rows)
            fig, axes = panels(groups)
            for ax, (fam, trs) in zip(axes, groups):
                for ref in REFS:
                    if ref not in trs:
                        pts = sorted((r["size"], r["stats"]["p50_ns"]) for r in rows if r["transport"] == ref)
                        if pts:
                            ax.plot([p[0] for p in pts], [p[1] / 1e3 for p in pts], color="#bbbbbb", lw=1,
                                    ls="-" if ref == REFS[0] else "--", label=f"{ref} (ref.)")
                for t in trs:
                    pts = sorted((r["size"], r["stats"]["p50_ns"]) for r in rows if r["transport"] == t)
                    ax.plot([p[0] for p in pts], [p[1] / 1e3 for p in pts], label=t, **sty[t])
                size_panel(ax, [r["size"] for r in rows], fam, f"{title} p50", fmt_us_axis,
                           loc="upper left")
            fig.suptitle(f"{title} latency (p50) vs payload size, per transport family")
            fig.tight_layout(rect=(0, 0.03, 1, 1))
            save(fig, f"latency_{kind}_vs_size", f"{title} p50 vs payload size")
        # the 64 B distribution: CDF through the measured percentiles
        rows = [r for r in lat["results"] if r["kind"] == "rtt" and r["size"] == 64 and not r["na"]
                and r.get("ok") and (r.get("hist") or {}).get("cdf_ns")]
        if rows:
            groups = by_family(r["transport"] for r in rows)
            fig, axes = panels(groups, share=True)  # one x scale: panels compare
            for ax, (fam, trs) in zip(axes, groups):
                for r in rows:
                    if r["transport"] not in trs:
                        continue
                    h = r["hist"]
                    xs = [v / 1e3 for v in h["cdf_ns"]]
                    ys = [p / 100 for p in h["cdf_pct"]]
                    st = dict(sty[r["transport"]])
                    st["ms"] = 3
                    ax.step(xs, ys, where="post", label=r["transport"], **st)
                ax.set_xscale("log")
                fmt_us_axis(ax, "x")
                ax.set_ylim(0, 1.01)
                ax.tick_params(labelbottom=True, labelleft=True)
                ax.set_title(fam, fontsize=10)
                ax.set_xlabel("64 B round trip")
                ax.set_ylabel("fraction of samples <= x")
                ax.grid(True, which="both", alpha=0.3)
                ax.legend(fontsize=7.5, loc="lower right", framealpha=0.85)
            fig.suptitle("64 B round trip: distribution (CDF through the percentiles 0.1 .. 100)")
            fig.tight_layout(rect=(0, 0.03, 1, 1))
            save(fig, "latency_cdf_64B", "64 B round-trip distribution (CDF)")
    tp = res.get("throughput")
    if tp:
        rows = [r for r in tp["results"] if not r["na"] and r.get("ok")]
        for m in sorted({r["mode"] for r in rows}):
            for c in sorted({r["channels"] for r in rows if r["mode"] == m}):
                sub = [r for r in rows if r["mode"] == m and r["channels"] == c]
                groups = by_family(r["transport"] for r in sub)
                fig, axes = panels(groups)
                for ax, (fam, trs) in zip(axes, groups):
                    for t in trs:
                        pts = sorted((r["size"], r["msgs_per_s"]) for r in sub if r["transport"] == t)
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=t, **sty[t])
                    size_panel(ax, [r["size"] for r in sub], fam, "messages / s", fmt_rate_axis)
                fig.suptitle(f"throughput, {m}, {c} channel{'s' if c > 1 else ''}: messages/s "
                             "(every payload checked)")
                fig.tight_layout(rect=(0, 0.03, 1, 1))
                save(fig, f"throughput_{m}_{c}ch", f"throughput: {m}, {c} channel{'s' if c > 1 else ''}")
    api = res.get("api")
    if api:
        rows = api["api"]
        fig, ax1 = plt.subplots(figsize=(9, 4.8))
        names_ = [r["api"] for r in rows]
        ax1.bar(range(len(rows)), [r["mode_ns"] for r in rows], color=PALETTE[0], label="mode ns")
        ax1.set_xticks(range(len(rows)))
        ax1.set_xticklabels(names_, rotation=30, ha="right", fontsize=8)
        ax1.set_ylabel("ns per call (mode)")
        ax1.set_title("API call cost (single process, cache hot)")
        if any(r.get("instructions") is not None for r in rows):
            ax2 = ax1.twinx()
            ax2.plot(range(len(rows)), [r.get("instructions") or float("nan") for r in rows], "D",
                     color=PALETTE[3], label="instructions")
            ax2.set_ylabel("instructions per call (callgrind)")
        fig.tight_layout(rect=(0, 0.03, 1, 1))
        save(fig, "api_costs", "API costs")
    blk = res.get("blocks")
    if blk:
        rows = [r for r in blk["results"] if not r["na"] and r.get("ok") and r["count"] == 1]
        if rows:
            groups = by_family(r["transport"] for r in rows)
            fig, axes = panels(groups)
            pub = [p for p in blk.get("published", []) if p["count"] == 1]
            for ax, (fam, trs) in zip(axes, groups):
                for t in trs:
                    pts = sorted((r["length"], r["kib_per_s"]) for r in rows if r["transport"] == t)
                    ax.plot([p[0] for p in pts], [p[1] / 1024 for p in pts], label=t, **sty[t])
                for k, src in enumerate(sorted({p["source"] for p in pub})):
                    pts = sorted((p["block"], p["block"] / 1024 / (p["ms"] / 1e3)) for p in pub if p["source"] == src)
                    ax.plot([p[0] for p in pts], [p[1] / 1024 for p in pts], color="#777777",
                            ls=":-."[k % 2] if k % 2 == 0 else "-.", marker="x+"[k % 2],
                            label=f"published: {src}")
                size_panel(ax, [r["length"] for r in rows], fam, "MiB/s (p50)", fmt_rate_axis,
                           legend_fs=7)
            fig.suptitle("blocks: transaction rate vs transaction size (one block)")
            fig.tight_layout(rect=(0, 0.03, 1, 1))
            save(fig, "blocks_rate", "blocks: transaction rate vs size")
    return made


# ---------------------------------------------------------------- report

def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(sys.argv) != 2 else sys.stdout)
        return 0 if len(sys.argv) == 2 else 2
    d = sys.argv[1]
    if not os.path.isdir(d):
        print(f"bench-report: {d}: not a directory", file=sys.stderr)
        return 2
    suite = load(d, "suite")
    res = {n: load(d, n) for n in SCENARIOS}
    res = {k: v for k, v in res.items() if v is not None}
    merged = {"suite": suite, **res}
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump(merged, f, indent=1)
    with open(os.path.join(d, "results.csv"), "w", newline="") as out:
        w = None
        for n in SCENARIOS:
            p = os.path.join(d, n + ".csv")
            if not os.path.exists(p):
                continue
            with open(p, newline="") as f:
                rd = csv.reader(f)
                hdr = next(rd, None)
                if hdr is None:
                    continue
                if w is None:
                    w = csv.writer(out)
                    w.writerow(hdr)
                for row in rd:
                    w.writerow(row)
    notes = []
    host = (suite or {}).get("host") or next((v.get("host") for v in res.values() if v.get("host")), {})
    quick = (suite or {}).get("quick", any((v.get("config") or {}).get("quick") for v in res.values()))
    plots = make_plots(d, res, notes, host, quick)

    L = []
    L.append(f"# mdcom-bench report {(suite or {}).get('timestamp', '')}\n")
    L.append("## Machine\n")
    L.append(table(["", ""], [
        ["CPU", host.get("cpu_model", "?")],
        ["kernel", host.get("kernel", "?")],
        ["CPUs online / allowed", f"{host.get('cpus_online', '?')} / {host.get('cpus_allowed', '?')}"],
        ["pinned", f"{'yes' if host.get('pinned') else 'NO'} (side A cpu {host.get('cpu_a')}, side B cpu {host.get('cpu_b')})"],
        ["clock", f"CLOCK_MONOTONIC, {host.get('timer_overhead_ns', 0):.0f} ns per read"],
        ["load average at start", f"{host.get('loadavg_1m', -1):.2f}" if host.get('loadavg_1m', -1) >= 0 else "?"],
        ["date", host.get("date", "?")],
        ["run", "--quick" if quick else "full"],
        ["libmdcom", f"{host.get('mdcom_version_major', '?')}.{host.get('mdcom_version_minor', '?')}"],
    ]))
    L.append("\n## Method\n")
    L.append("Two real processes per measurement (side A measures, side B answers), each pinned to its own CPU; "
             "fresh shared state per cell; warm-up before timing; every message carries a sequence number "
             "(and, in `throughput`/`blocks`, a CRC32C and template-checked bytes) checked on both sides. "
             "Percentiles are nearest-rank (always a measured value). Throughput aggregate = total bytes / wall "
             "time, never a sum of per-channel rates. Ratios are computed from this run only. "
             "Full description: docs/benchmarks.md.\n")
    if suite:
        L.append("\n" + table(["scenario", "command", "exit", "seconds"],
                              [[s["scenario"], f"`{s['command'].replace(d + '/', '')}`", s["exit"], f"{s['seconds']:.1f}"]
                               for s in suite.get("steps", [])]))
        L.append(f"\nTotal {suite.get('seconds', 0):.1f} s. Exit 1 = an integrity or API error in that scenario.\n")

    lat = res.get("latency")
    if lat:
        rtt = [r for r in lat["results"] if r["kind"] == "rtt"]
        sizes = sorted({r["size"] for r in rtt})
        pick = [s for s in (1, 64, 4096, 65536, 1 << 20, 16 << 20) if s in sizes] or sizes[:4]
        trs = order({r["transport"] for r in rtt}, PREF)
        by = {(r["transport"], r["size"]): r for r in rtt}
        L.append("\n## Summary: round trip p50\n")
        rows = []
        for t in trs:
            row = [t]
            for s in pick:
                row.append(cell(by.get((t, s)), lambda r: fmt_ns(r["stats"]["p50_ns"]) + (
                    f" ({x:.2f}x base)" if (x := r.get("p50_ratio_to_baseline")) else "")))
            rows.append(row)
        L.append(table(["transport"] + [fmt_size(s) for s in pick], rows))
        L.append("\n`x base`: p50 / p50 of the transport's raw baseline (raw-spin for polling, raw-futex for "
                 "blocking) at the same size.\n")
    targets = []
    for n in ("latency", "throughput"):
        for t in (res.get(n) or {}).get("targets", []):
            v, lim = t.get("value"), t.get("limit")
            val = "" if v is None else (f"{v / 1e6:.2f} M" if lim and lim >= 1e6 else f"{v:.3f}")
            lims = "" if lim is None else (f"{lim / 1e6:.0f} M" if lim >= 1e6 else f"{lim:g}")
            targets.append([n, t["state"], t["name"], val, lims, t.get("detail", "")])
    for t in (res.get("python") or {}).get("targets", []):
        targets.append(["python", t["state"], t["name"], f"{t['value']:.3f}", f"{t['limit']:g}", ""])
    if res.get("api"):
        for r in res["api"]["api"]:
            if "target_ns" in r:
                targets.append(["api", "MET" if r["met"] else "MISSED", f"{r['api']} mean ns per call",
                                f"{r['mean_ns']:.1f}", f"{r['target_ns']:.0f}", ""])
    if targets:
        L.append("\n## Targets (computed from this run)\n")
        L.append(table(["scenario", "state", "target", "value", "limit", "detail"], targets))
    if lat:
        L.append("\n## Latency\n")
        for kind, title in (("rtt", "Round trip"), ("oneway", "One way")):
            rows_k = [r for r in lat["results"] if r["kind"] == kind]
            if not rows_k:
                continue
            for s in sorted({r["size"] for r in rows_k}):
                L.append(f"\n### {title}, {fmt_size(s)}\n")
                rows = []
                for r in rows_k:
                    if r["size"] != s:
                        continue
                    if r["na"]:
                        rows.append([r["transport"], "n/a"] + [""] * 7)
                        continue
                    if not r.get("ok"):
                        rows.append([r["transport"], "ERROR"] + [""] * 7)
                        continue
                    st = r["stats"]
                    rows.append([r["transport"], st["n"], fmt_ns(st["min_ns"]), fmt_ns(st["p50_ns"]),
                                 fmt_ns(st["p90_ns"]), fmt_ns(st["p99_ns"]), fmt_ns(st["p999_ns"]),
                                 fmt_ns(st["max_ns"]),
                                 f"{fmt_x(r.get('p50_ratio_to_baseline'))} / {fmt_x(r.get('p50_ratio_to_mdcom'))}"])
                L.append(table(["transport", "n", "min", "p50", "p90", "p99", "p99.9", "max",
                                "p50 vs baseline / vs mdcom-copy"], rows))
    blk = res.get("blocks")
    if blk:
        L.append("\n## Blocks (seeds 000/001): time per transaction, KiB/s at p50\n")
        combos = sorted({(r["block"], r["count"]) for r in blk["results"]})
        trs = order({r["transport"] for r in blk["results"]}, PREF)
        by = {(r["transport"], r["block"], r["count"]): r for r in blk["results"]}
        rows = []
        for b, n in combos:
            row = [f"{fmt_size(b)} x {n}"]
            for t in trs:
                row.append(cell(by.get((t, b, n)),
                                lambda r: f"{fmt_ns(r['time']['p50_ns'])} / {r['kib_per_s']:.0f}"))
            pub = [p for p in blk.get("published", []) if p["block"] == b and p["count"] == n]
            row.append("; ".join(f"{p['source']}: {p['ms']:.2f} ms / {b * n / 1024 / (p['ms'] / 1e3):.0f}" for p in pub) or "")
            rows.append(row)
        L.append(table(["block x n"] + trs + ["published (STM32MP1)"], rows))
    tp = res.get("throughput")
    if tp:
        L.append("\n## Throughput (seed 002): aggregate = total bytes / wall time\n")
        rows_all = tp["results"]
        for m in sorted({r["mode"] for r in rows_all}):
            for c in sorted({r["channels"] for r in rows_all}):
                sub = [r for r in rows_all if r["mode"] == m and r["channels"] == c]
                if not sub:
                    continue
                L.append(f"\n### {m}, {c} channel{'s' if c > 1 else ''}\n")
                sizes = sorted({r["size"] for r in sub})
                trs = order({r["transport"] for r in sub}, PREF)
                by = {(r["transport"], r["size"]): r for r in sub}
                rows = []
                for t in trs:
                    row = [t]
                    for s in sizes:
                        row.append(cell(
                            by.get((t, s)),
                            lambda r: f"{fmt_rate(r['aggregate_bytes_per_s'])}, "
                                      f"{r['msgs_per_s'] / 1e6:.2f} M/s" + ("*" if r.get("capped") else ""),
                            lambda r: f"ERROR (loss {r['loss']}, corrupt {r['corrupt']})"))
                    rows.append(row)
                L.append(table(["transport"] + [fmt_size(s) for s in sizes], rows))
        L.append("\n`*`: stopped by the cell's time budget; rates use the bytes moved. Loss and corruption were "
                 "0 in every cell marked with a rate (a cell with either is an ERROR).\n")
        pub = tp.get("published", [])
        if pub:
            L.append("\nPublished (seed 002, ADI SC598 RPMsg, 1 channel, ping-pong): "
                     + ", ".join(f"{fmt_size(p['size'])}: {fmt_rate(p['bytes_per_s'])}" for p in pub) + ".\n")
    api = res.get("api")
    if api:
        L.append("\n## API call cost (ns per call; paper: i.MX7 Cortex-M4 RTOS side)\n")
        rows = []
        for r in api["api"]:
            paper = "-" if r.get("paper_mode_ns") is None else \
                f"{r['paper_mode_ns']:.0f} / {r['paper_mean_ns']:.0f} / {r['paper_stddev_ns']:.0f}"
            ins = "-" if r.get("instructions") is None else f"{r['instructions']:.0f}"
            rows.append([r["api"], f"{r['mode_ns']:.1f}", f"{r['mean_ns']:.1f}", f"{r['stddev_ns']:.2f}", ins, paper])
        L.append(table(["api", "mode", "mean", "stddev", "instructions", "paper mode / mean / sd"], rows))
    tm = res.get("thread-metric")
    if tm:
        L.append(f"\n## Thread-Metric style (seed 004), period {tm['config']['period_s']} s\n")
        rows = []
        for r in tm["results"]:
            if not r.get("ok"):
                rows.append([r["test"], r["transport"], "ERROR", "", "", ""])
                continue
            rows.append([r["test"], r["transport"], ", ".join(str(s) for s in r["scores"]),
                         f"{r['per_second']:.0f}", f"{r['per_30s']:.0f}",
                         f"{r['per_30s'] / r['published_per_30s']:.1f}x"])
        L.append(table(["test", "transport", "score per period", "per second", "per 30 s", "vs FreeRTOS (STM32L432)"], rows))
    rp = res.get("reap")
    if rp:
        L.append(f"\n## Reaping a dead sender (mdcom_sense_process; {rp['config']['calls']} calls alive / after)\n")
        rows = [[r["queued"], len(r["reap_ns"]), fmt_ns(r["reap"]["p50_ns"]), fmt_ns(r["alive"]["p50_ns"]),
                 fmt_ns(r["after"]["p50_ns"]), f"{fmt_x(r.get('ratio'))} / {fmt_x(r.get('ratio_after'))}",
                 f"{r['received']} of {r['expected']}" + ("" if r["ok"] else " ERROR")] for r in rp["results"]]
        L.append(table(["queued", "kills", "reap call", "alive p50", "after p50", "ratio alive / after", "received"], rows))
        L.append("\nA sender fills the channel (queued = blocks), is killed (SIGKILL); the survivor's next call "
                 "reaps it. Ratios = that call / the same call with the sender alive (which probes its pid) and after "
                 "it was reaped (same run, same full queue).\n")
    py = res.get("python")
    if py:
        L.append(f"\n## Python package (bench/py_bench.py, Python {py.get('python', '?')}, "
                 f"{py.get('iters')} round trips, {py.get('blocks')} blocks)\n")
        rows = [[r["name"], f"p50 {r['p50_us']:.2f} us, p99 {r['p99_us']:.2f} us" if r["kind"] == "rtt"
                 else f"{r['gb_per_s']:.1f} GB/s"] for r in py.get("rows", [])]
        L.append(table(["measurement", "result"], rows))
        if not py.get("iceoryx2"):
            L.append("\n_PyPI's iceoryx2 is not importable here: no Python peer rows "
                     "(the Rust iceoryx2 peer is in the latency and throughput tables)._\n")
    if plots:
        L.append("\n## Plots\n")
        for name, title in plots:
            L.append(f"\n### {title}\n\n![{title}](plots/{name}.png) ([SVG](plots/{name}.svg))\n")
    for n in notes:
        L.append(f"\n_{n}_\n")
    with open(os.path.join(d, "report.md"), "w") as f:
        f.write("\n".join(L))
    for n in notes:
        print(f"bench-report: {n}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
