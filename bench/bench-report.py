#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench-report.py - turn one `mdcom-bench suite` directory into a report.

usage: bench/bench-report.py DIR

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
import re
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
    """A ratio: two decimals from 1 up, else two significant digits (0.0042x,
    never a 0.00x that reads as nothing)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.2f}x" if v >= 0.995 else f"{v:.2g}x"


# ---------------------------------------------------------------- sources and statuses

# The published numbers come from the source documents of the project (the
# seeds); a reader knows them by what was measured, not by the seed id.
SEEDS = {
    "000": "STM32MP1 /dev/ttyRPMSG (OpenAMP TTY), published",
    "001": "STM32MP1 netlink kernel module, published",
    "002": "ADI SC598 RPMsg, published",
    "003": "MDCOM paper, i.MX7 Cortex-M4, published",
    "004": "FreeRTOS 10.3.1 on STM32L432, published",
}


def source_name(src):
    """The reader's name of a published source ("seed 000 /dev/ttyRPMSG0" ->
    "STM32MP1 /dev/ttyRPMSG (OpenAMP TTY), published"); unknown text as is."""
    m = re.search(r"seed (\d{3})", src or "")
    return SEEDS.get(m.group(1), src) if m else src


STATUSES = ("ok", "n/a", "TIMEOUT", "INTEGRITY", "ERROR")


def status(r):
    """A result row's status: n/a; INTEGRITY (a message lost, damaged or
    repeated: a bug); ERROR (a call failed); TIMEOUT (a wait ran past the
    timeout, also when retried: a busy machine); else ok. The row's own
    "status" when it has a known one (rows of older runs do not)."""
    if not r or r.get("na"):
        return "n/a"
    st = r.get("status")
    if st in STATUSES:
        return st
    if r.get("ok"):
        return "ok"
    if r.get("integrity_errors") or r.get("loss") or r.get("corrupt"):
        return "INTEGRITY"
    return "TIMEOUT" if r.get("timeouts") else "ERROR"


def fmt_load(v):
    return "?" if v is None or v < 0 else f"{v:.2f}"


def bad_cell(r):
    """What a table shows for a cell that is not ok."""
    st = status(r)
    if st == "TIMEOUT":
        return f"TIMEOUT (load {fmt_load(r.get('loadavg_1m'))})"
    if st == "INTEGRITY":
        extra = f": loss {r['loss']}, corrupt {r['corrupt']}" if "loss" in r else ""
        return f"**INTEGRITY ERROR**{extra}"
    return "ERROR (a call failed)"


def verdict(suite, res):
    """(failed, lines): the run's result as the suite's exit status gives it,
    in words, and every cell that is not ok (scenario, cell, status, why)."""
    cells = timeouts = integrity = 0
    bad = []
    for name, d in res.items():
        rows = d.get("results") or []
        for r in rows:
            st = status(r)
            if st == "n/a":
                continue
            if st in ("TIMEOUT", "INTEGRITY", "ERROR") or r.get("attempts", 1) > 1:
                why = r.get("why") or ""
                if st == "INTEGRITY" and not why:
                    why = (f"{r['loss']} lost, {r['corrupt']} damaged" if "loss" in r
                           else f"{r.get('integrity_errors', '?')} integrity errors")
                bad.append((name, cell_name(name, r), st, why, r.get("loadavg_1m")))
        cells += d.get("cells", 0)
        timeouts += d.get("timeouts", 0)
        integrity += d.get("integrity_errors", 0)
    failures = sum(d.get("failures", 0) for d in res.values())
    pct = 100.0 * timeouts / cells if cells else 0.0
    limit = (suite or {}).get("timeout_limit_pct", 5)
    if integrity:
        head = (f"**FAIL: {integrity} INTEGRITY ERROR{'S' if integrity > 1 else ''}** "
                "(a message lost, damaged or repeated: a bug, whatever the load)")
    elif failures:
        head = f"**FAIL: {failures} API error{'s' if failures > 1 else ''}** (a call failed; see the scenario's output)"
    elif pct > limit:
        head = (f"**FAIL: {timeouts} of {cells} cells ({pct:.1f} %) timed out**, more than {limit} %: "
                "the machine was too busy to measure (no integrity error)")
    else:
        head = "**PASS**: no integrity or API error"
        if timeouts:
            head += (f"; {timeouts} of {cells} cells ({pct:.1f} %) timed out on a busy machine "
                     f"(TIMEOUT, within the {limit} % allowed)")
    return bool(integrity or failures or pct > limit), head, bad


def cell_name(scenario, r):
    """A cell as a reader names it: transport, size, and the scenario's keys."""
    t = r.get("transport", "?")
    if scenario == "throughput":
        c = r.get("channels", 1)
        return f"{t} {r.get('mode')} {c} channel{'s' if c != 1 else ''} {fmt_size(r.get('size', 0))}"
    if scenario == "blocks":
        return f"{t} {fmt_size(r.get('block', 0))} x {r.get('count')}"
    if scenario == "latency":
        return f"{t} {'round trip' if r.get('kind') == 'rtt' else 'one way'} {fmt_size(r.get('size', 0))}"
    return f"{t} {r.get('test', '')}".strip()


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
# drawn grey in every family panel, for scale: both raw baselines (polling,
# blocking) and mdcom's copy API; their line styles
REFS = ["raw-spin", "raw-futex", "mdcom-copy-poll"]
REF_LS = {"raw-spin": "-", "raw-futex": ":", "mdcom-copy-poll": "--"}


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


def caption(host, quick, load=None):
    """The conditions under every plot; load: the load average while its
    scenario ran ("5.44 .. 11.51"), else the host's at the start."""
    if load is None:
        load = f"{fmt_load(host.get('loadavg_1m'))} at start"
    return (f"{host.get('cpu_model', '?')}, {host.get('cpus_online', '?')} vCPUs "
            f"({host.get('cpus_allowed', '?')} allowed), {host.get('kernel', '?')}, build {host.get('build', '?')}; "
            f"load average {load}; {'--quick' if quick else 'full run'}; "
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


def cell(r, text):
    """A table cell for result r: n/a (missing or not applicable), its status
    when it is not ok (bad_cell), else text(r); "(retried)" when it was."""
    st = status(r)
    if st == "n/a":
        return "n/a"
    if st != "ok":
        return bad_cell(r)
    return text(r) + (" (retried)" if r.get("attempts", 1) > 1 else "")


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


def series(ax, rows, t, xkey, yval, sty, label=None):
    """Transport t's points of rows (x = r[xkey], y = yval(r)): a line through
    the cells that are ok; a cut-short cell (stopped by its time budget) drawn
    hollow; a cell without a value (TIMEOUT, ERROR, INTEGRITY) an X on the
    bottom edge in the transport's colour. Returns the kinds of marks drawn."""
    from matplotlib.transforms import blended_transform_factory
    mine = sorted((r for r in rows if r["transport"] == t and status(r) != "n/a"), key=lambda r: r[xkey])
    good = [r for r in mine if status(r) == "ok"]
    ax.plot([r[xkey] for r in good], [yval(r) for r in good], label=label or t, **sty[t])
    marks = set()
    cut = [r for r in good if r.get("capped")]
    if cut:
        st = dict(sty[t], linestyle="none", markerfacecolor="white", markeredgewidth=1.4)
        st.pop("label", None)
        ax.plot([r[xkey] for r in cut], [yval(r) for r in cut], **st)
        marks.add("cut")
    failed = [r for r in mine if status(r) != "ok"]
    if failed:
        tr = blended_transform_factory(ax.transData, ax.transAxes)
        ax.plot([r[xkey] for r in failed], [0.03] * len(failed), transform=tr, linestyle="none",
                marker="X", ms=9, color=sty[t]["color"], markeredgecolor="#CC0000", clip_on=False)
        marks |= {status(r) for r in failed}
    return marks


def mark_legend(ax, marks, legend_fs):
    """Legend entries that explain the marks series() drew."""
    from matplotlib.lines import Line2D
    h, lab = ax.get_legend_handles_labels()
    if "cut" in marks:
        h.append(Line2D([], [], color="#555555", marker="o", markerfacecolor="white", linestyle="none"))
        lab.append("hollow: cut short by its time budget")
    bad = sorted(m for m in marks if m != "cut")
    if bad:
        h.append(Line2D([], [], color="#555555", marker="X", markeredgecolor="#CC0000", ms=8, linestyle="none"))
        lab.append("X at the bottom: " + " / ".join(bad) + " (no value)")
    return h, lab


def panel_legend(ax, marks, fs):
    """The panel's legend under it (never over its points): the series, the
    references and what the marks of series() mean."""
    h, lab = mark_legend(ax, marks, fs)
    ax.legend(h, lab, fontsize=fs, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2,
              frameon=False)


def ref_lines(ax, rows, trs, xkey, yval):
    """The references every panel shows, grey: the raw baselines and mdcom's
    copy API, unless the panel has them among its own series."""
    for ref in REFS:
        if ref in trs:
            continue
        pts = sorted((r[xkey], yval(r)) for r in rows if r["transport"] == ref and status(r) == "ok")
        if pts:
            what = "baseline" if ref.startswith("raw-") else "mdcom"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color="#aaaaaa", lw=1.2,
                    ls=REF_LS[ref], label=f"{ref} ({what}, ref.)")


def make_plots(d, res, notes, host, quick, suite=None):
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
    # each plot's caption: the load while its scenario ran
    loads = {}
    for st in (suite or {}).get("steps", []):
        a, b = st.get("loadavg_start_1m"), st.get("loadavg_end_1m")
        if a is not None:
            loads[st["scenario"]] = fmt_load(a) + ("" if b is None or b < 0 else f" .. {fmt_load(b)}") + \
                f" during {st['scenario']}"
    names = set()
    for key in ("latency", "throughput", "blocks"):
        names |= {r["transport"] for r in (res.get(key) or {}).get("results", [])}
    sty = style_map(names)

    def save(fig, name, title):
        cap = caption(host, quick, loads.get(name.split("_")[0]))
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
        if share:  # every panel labelled: a shared axis still reads on its own
            for a in axes.flat:
                a.tick_params(labelbottom=True, labelleft=True)
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
            rows = [r for r in lat["results"] if r["kind"] == kind and status(r) != "n/a"]
            if not any(status(r) == "ok" for r in rows):
                continue
            groups = by_family(r["transport"] for r in rows)
            fig, axes = panels(groups, h=5.6, share=True)  # one y scale: panels compare; legends below

            def p50_us(r):
                return r["stats"]["p50_ns"] / 1e3
            for ax, (fam, trs) in zip(axes, groups):
                ref_lines(ax, rows, trs, "size", p50_us)
                marks = set()
                for t in trs:
                    marks |= series(ax, rows, t, "size", p50_us, sty)
                size_panel(ax, [r["size"] for r in rows], fam, f"{title} time, p50", fmt_us_axis,
                           loc="upper left")
                panel_legend(ax, marks, 7.5)
            fig.suptitle(f"{title} latency (p50, lower is better) vs payload size, per transport family; "
                         "one y scale")
            fig.tight_layout(rect=(0, 0.03, 1, 1))
            save(fig, f"latency_{kind}_vs_size", f"{title} p50 vs payload size")
        # the 64 B distribution: CDF through the measured percentiles
        rows = [r for r in lat["results"] if r["kind"] == "rtt" and r["size"] == 64 and not r["na"]
                and r.get("ok") and (r.get("hist") or {}).get("cdf_ns")]
        if rows:
            groups = by_family(r["transport"] for r in rows)
            fig, axes = panels(groups, share=True)  # one x scale: panels compare
            for ax, (fam, trs) in zip(axes, groups):
                for r in rows:  # the references, grey, where the panel lacks them
                    if r["transport"] in REFS and r["transport"] not in trs:
                        ref = r["transport"]
                        what = "baseline" if ref.startswith("raw-") else "mdcom"
                        ax.step([v / 1e3 for v in r["hist"]["cdf_ns"]], [p / 100 for p in r["hist"]["cdf_pct"]],
                                where="post", color="#aaaaaa", lw=1.2, ls=REF_LS[ref], label=f"{ref} ({what}, ref.)")
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
                ax.set_xlabel("64 B round-trip time")
                ax.set_ylabel("fraction of samples <= x")
                ax.grid(True, which="both", alpha=0.3)
                ax.legend(fontsize=7.5, loc="lower right", framealpha=0.85)
            fig.suptitle("64 B round trip: distribution (CDF through the percentiles 0.1 .. 100)")
            fig.tight_layout(rect=(0, 0.03, 1, 1))
            save(fig, "latency_cdf_64B", "64 B round-trip distribution (CDF)")
    tp = res.get("throughput")
    if tp:
        rows = [r for r in tp["results"] if status(r) != "n/a"]
        for m in sorted({r["mode"] for r in rows}):
            for c in sorted({r["channels"] for r in rows if r["mode"] == m}):
                sub = [r for r in rows if r["mode"] == m and r["channels"] == c]
                if not any(status(r) == "ok" for r in sub):
                    continue
                groups = by_family(r["transport"] for r in sub)
                fig, axes = panels(groups, h=5.6, share=True)  # one y scale: panels compare; legends below

                def rate(r):
                    return r["msgs_per_s"]
                for ax, (fam, trs) in zip(axes, groups):
                    ref_lines(ax, sub, trs, "size", rate)
                    marks = set()
                    for t in trs:
                        marks |= series(ax, sub, t, "size", rate, sty)
                    size_panel(ax, [r["size"] for r in sub], fam, "messages / s (aggregate)", fmt_rate_axis)
                    panel_legend(ax, marks, 7.5)
                fig.suptitle(f"throughput, {m}, {c} channel{'s' if c > 1 else ''}: messages/s, higher is "
                             "better (every payload checked; one y scale)")
                fig.tight_layout(rect=(0, 0.03, 1, 1))
                save(fig, f"throughput_{m}_{c}ch", f"throughput: {m}, {c} channel{'s' if c > 1 else ''}")
    api = res.get("api")
    if api:
        rows = api["api"]
        has_ins = any(r.get("instructions") is not None for r in rows)
        # one y axis per panel: time in one, instructions (when measured) in the other
        fig, axs = plt.subplots(1, 2 if has_ins else 1, figsize=(13 if has_ins else 9, 4.8), squeeze=False)
        ax1 = axs[0][0]
        xs = range(len(rows))
        names_ = [r["api"] for r in rows]
        ax1.bar(xs, [r["mode_ns"] for r in rows], color=PALETTE[0], label="mdcom on this host (mode)")
        paper = [(i, r["paper_mode_ns"]) for i, r in enumerate(rows) if r.get("paper_mode_ns") is not None]
        if paper:
            ax1.plot([p[0] for p in paper], [p[1] for p in paper], "D", color=PALETTE[3], linestyle="none",
                     label=f"{SEEDS['003']} (mode)")
        targets = [(i, r["target_ns"]) for i, r in enumerate(rows) if r.get("target_ns") is not None]
        if targets:
            ax1.plot([p[0] for p in targets], [p[1] for p in targets], "_", ms=18, mew=2, color="#444444",
                     linestyle="none", label="target (mean at most)")
        ax1.set_yscale("log")
        ax1.set_xticks(list(xs))
        ax1.set_xticklabels(names_, rotation=30, ha="right", fontsize=8)
        ax1.set_ylabel("ns per call (log scale)")
        ax1.set_title("API call cost: time per call (single process, cache hot)", fontsize=10)
        ax1.grid(True, axis="y", which="both", alpha=0.3)
        ax1.legend(fontsize=7.5, framealpha=0.85, loc="upper right")  # over the fast calls, clear of the paper
        if has_ins:
            ax2 = axs[0][1]
            ax2.bar(xs, [r.get("instructions") or 0 for r in rows], color=PALETTE[2],
                    label="instructions per call (callgrind)")
            ax2.set_xticks(list(xs))
            ax2.set_xticklabels(names_, rotation=30, ha="right", fontsize=8)
            ax2.set_ylabel("instructions per call")
            ax2.set_title("API call cost: instructions per call (callgrind)", fontsize=10)
            ax2.grid(True, axis="y", alpha=0.3)
            ax2.legend(fontsize=7.5, framealpha=0.85)
        fig.tight_layout(rect=(0, 0.03, 1, 1))
        save(fig, "api_costs", "API costs")
    blk = res.get("blocks")
    if blk:
        rows = [r for r in blk["results"] if status(r) != "n/a" and r["count"] == 1]
        if any(status(r) == "ok" for r in rows):
            groups = by_family(r["transport"] for r in rows)
            fig, axes = panels(groups, h=5.6, share=True)  # one y scale: panels compare; legends below
            pub = [p for p in blk.get("published", []) if p["count"] == 1]

            def mib_s(r):
                return r["kib_per_s"] / 1024
            for ax, (fam, trs) in zip(axes, groups):
                ref_lines(ax, rows, trs, "length", mib_s)
                marks = set()
                for t in trs:
                    marks |= series(ax, rows, t, "length", mib_s, sty)
                for k, src in enumerate(sorted({p["source"] for p in pub})):
                    pts = sorted((p["block"], p["block"] / 1024 / (p["ms"] / 1e3)) for p in pub if p["source"] == src)
                    ax.plot([p[0] for p in pts], [p[1] / 1024 for p in pts], color="#555555",
                            ls=":" if k % 2 == 0 else "-.", marker="x+"[k % 2],
                            label=source_name(src))
                size_panel(ax, [r["length"] for r in rows], fam, "MiB/s (block / p50 time)", fmt_rate_axis,
                           legend_fs=7)
                panel_legend(ax, marks, 7)
            fig.suptitle("blocks: throughput (MiB/s = transaction size / p50 time per transaction, higher is "
                         "better) vs transaction size, one block; one y scale")
            fig.tight_layout(rect=(0, 0.03, 1, 1))
            save(fig, "blocks_rate", "blocks: MiB/s vs transaction size")
    return made


# ---------------------------------------------------------------- report

def loads_line(suite, res):
    """The load average of every scenario (start .. end), as suite.json or
    the scenarios' JSON give it."""
    parts = []
    for st in (suite or {}).get("steps", []):
        a, b = st.get("loadavg_start_1m"), st.get("loadavg_end_1m")
        if a is not None:
            parts.append(f"{st['scenario']} {fmt_load(a)}" + ("" if b is None or b < 0 else f" .. {fmt_load(b)}"))
    if not parts:
        for n, v in res.items():
            la = (v.get("host") or {}).get("loadavg_1m")
            if la is not None:
                parts.append(f"{n} {fmt_load(la)}" + (f" .. {fmt_load(v['loadavg_end_1m'])}" if "loadavg_end_1m" in v else ""))
    return "; ".join(parts) or "?"


def fmt_target_value(v, unit, ref):
    if v is None:
        return "-"
    if not unit:
        return fmt_x(v)
    if ref is not None and ref >= 1e6:
        div, pre = (1e9, "G") if ref >= 1e9 else (1e6, "M")
        return f"{v / div:.2f} {pre}{'' if unit.startswith('B') else ' '}{unit}"  # GB/s, M msgs/s
    return f"{v:.3g} {unit}"


def target_rows(res):
    """The targets of every scenario: state, name, measured, needed (with its
    direction: >= or <=), detail."""
    out = []
    for n in ("latency", "throughput"):
        for t in (res.get(n) or {}).get("targets", []):
            lim, unit = t.get("limit"), t.get("unit") or ""
            need = t.get("need") or (">=" if ">=" in t["name"] else "<=" if ("<" in t["name"]) else "?")
            out.append([n, t["state"], t["name"], fmt_target_value(t.get("value"), unit, lim),
                        "-" if lim is None else f"{need} {fmt_target_value(lim, unit, lim)}", t.get("detail", "")])
    for t in (res.get("python") or {}).get("targets", []):
        out.append(["python", t["state"], t["name"], f"{t['value']:.3f}", f"{t.get('need', '?')} {t['limit']:g}", ""])
    if res.get("api"):
        for r in res["api"]["api"]:
            if "target_ns" in r:
                out.append(["api", "MET" if r["met"] else "MISSED", f"{r['api']} mean ns per call",
                            f"{r['mean_ns']:.1f} ns", f"<= {r['target_ns']:.0f} ns", ""])
    return out


def faster(x):
    """A ratio "how many times mdcom is faster" in words."""
    if x is None or not x > 0:
        return "-"
    if 0.98 <= x <= 1.0 / 0.98:  # closer than a run's noise on a shared machine
        return f"about equal ({x:.2f}x)"
    return f"mdcom {x:.2f}x faster" if x >= 1 else f"mdcom {1 / x:.2f}x slower"


def conclusion(res, host):
    """One line per peer and baseline: its 64 B round trip p50 and its 1-channel
    4 KiB stream against mdcom's copy API of the same wait class, the ratio
    in words, and the conditions those cells ran at."""
    lat = (res.get("latency") or {}).get("results", [])
    tp = (res.get("throughput") or {}).get("results", [])
    rtt = {r["transport"]: r for r in lat if r.get("kind") == "rtt" and r.get("size") == 64}
    stream = {}
    for want in (4096, 64):  # 4 KiB where the run has it, else 64 B
        for r in tp:
            if r.get("mode") == "stream" and r.get("channels") == 1 and r.get("size") == want:
                stream.setdefault(r["transport"], r)
    names = order(set(rtt) | set(stream), PREF)
    rows, unmeasured = [], []
    cores = f"{host.get('cpus_allowed', '?')} vCPUs, {'pinned' if host.get('pinned') else 'NOT pinned'}"
    build = host.get("build", "?")
    for t in names:
        if t.startswith("mdcom-"):
            continue
        a = rtt.get(t)
        # the latency row names its mdcom reference (bench_mdcom_ref); a peer
        # program seen only in throughput blocks (it waits in the kernel)
        ref = (a or {}).get("mdcom_ref") or (stream.get(t) or {}).get("mdcom_ref") or "mdcom-copy-block"
        m = rtt.get(ref)
        lat_txt, lat_x, loads = "-", None, []
        if a and m and status(a) == "ok" and status(m) == "ok":
            lat_x = a["stats"]["p50_ns"] / m["stats"]["p50_ns"]
            lat_txt = f"{fmt_ns(m['stats']['p50_ns'])} vs {fmt_ns(a['stats']['p50_ns'])}"
            loads.append(f"{fmt_load(a.get('loadavg_1m'))} (rtt)")
        elif a:
            lat_txt = f"{t}: {status(a)}" if status(a) != "ok" else f"{ref}: {status(m)}"
        b, mb = stream.get(t), stream.get(ref)
        tp_txt, tp_x = "-", None
        if b and mb and status(b) == "ok" and status(mb) == "ok" and b.get("aggregate_bytes_per_s"):
            tp_x = mb["aggregate_bytes_per_s"] / b["aggregate_bytes_per_s"]
            tp_txt = f"{fmt_size(b['size'])}: {fmt_rate(mb['aggregate_bytes_per_s'])} vs {fmt_rate(b['aggregate_bytes_per_s'])}"
            loads.append(f"{fmt_load(b.get('loadavg_1m'))} (stream)")
        elif b:
            tp_txt = f"{t}: {status(b)}" if status(b) != "ok" else f"{ref}: {status(mb) if mb else 'n/a'}"
        kind = "baseline" if t.startswith("raw-") else "peer"
        if all(status(r) == "n/a" for r in (a, b) if r is not None):
            unmeasured.append(t)
            continue
        rows.append([f"{t} ({kind})", ref, lat_txt, faster(lat_x), tp_txt, faster(tp_x),
                     f"load {', '.join(loads) or '?'}; {cores}; {build}"])
    if not rows:
        return ""
    return ("Each line: mdcom's copy API of the same wait class (polling or blocking) against the transport; "
            "round trip = p50 of 64 B ping-pong (lower is better), stream = aggregate rate of one channel "
            "(higher is better); \"mdcom 2.00x faster\" = half the time or twice the rate. Load = the 1-minute "
            "load average when those cells ran.\n\n"
            + table(["against", "mdcom side", "64 B round trip, mdcom vs it", "ratio", "stream 1 ch, mdcom vs it",
                     "ratio", "conditions"], rows)
            + (f"\nNot measured here (n/a: not built, or sizes it does not carry): {', '.join(unmeasured)}.\n"
               if unmeasured else ""))


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
    plots = make_plots(d, res, notes, host, quick, suite)

    L = []
    L.append(f"# mdcom-bench report {(suite or {}).get('timestamp', '')}\n")
    failed, head, bad = verdict(suite, res)
    L.append(f"{head}.\n")
    concl = conclusion(res, host)
    if concl:
        L.append("\n## Conclusion: mdcom against each peer and baseline\n")
        L.append(concl)
    if bad:
        L.append("\n## Cells that did not run clean\n")
        L.append("TIMEOUT: a wait ran past the scenario's `--timeout` twice (the cell is retried once with twice "
                 "the timeout): the machine was too busy, no message was wrong. INTEGRITY: a message was lost, "
                 "damaged or repeated. \"ok, retried\": the first attempt timed out, the second ran clean.\n\n")
        L.append(table(["scenario", "cell", "status", "why", "load"],
                       [[sc, c, "ok, retried" if st == "ok" else f"**{st}**" if st == "INTEGRITY" else st,
                         why or "-", fmt_load(ld)] for sc, c, st, why, ld in bad]))
    L.append("\n## Machine\n")
    L.append(table(["", ""], [
        ["CPU", host.get("cpu_model", "?")],
        ["kernel", host.get("kernel", "?")],
        ["CPUs online / allowed", f"{host.get('cpus_online', '?')} / {host.get('cpus_allowed', '?')}"],
        ["pinned", f"{'yes' if host.get('pinned') else 'NO'} (side A cpu {host.get('cpu_a')}, side B cpu {host.get('cpu_b')})"],
        ["clock", f"CLOCK_MONOTONIC, {host.get('timer_overhead_ns', 0):.0f} ns per read"],
        ["load average (1 min)", loads_line(suite, res)],
        ["build", host.get("build", "?")],
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
        def load_span(s):
            a, b = s.get("loadavg_start_1m"), s.get("loadavg_end_1m")
            return "-" if a is None else fmt_load(a) + ("" if b is None or b < 0 else f" .. {fmt_load(b)}")
        L.append("\n" + table(["scenario", "command", "exit", "seconds", "load start .. end", "cells", "TIMEOUT"],
                              [[s["scenario"], f"`{s['command'].replace(d + '/', '')}`", s["exit"], f"{s['seconds']:.1f}",
                                load_span(s), s.get("cells", "-"), s.get("timeouts", "-")]
                               for s in suite.get("steps", [])]))
        L.append(f"\nTotal {suite.get('seconds', 0):.1f} s. Exit 1 = an integrity or API error in that scenario; "
                 "4 = more than 5 % of its cells timed out; -1 = skipped.\n")

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
                    f" ({fmt_x(x)} base)" if (x := r.get("p50_ratio_to_baseline")) else "")))
            rows.append(row)
        L.append(table(["transport"] + [fmt_size(s) for s in pick], rows))
        L.append("\n`x base`: p50 / p50 of the transport's raw baseline (raw-spin for polling, raw-futex for "
                 "blocking) at the same size.\n")
    targets = target_rows(res)
    if targets:
        L.append("\n## Targets (computed from this run)\n")
        L.append("`needed`: what the target asks, `>=` at least (rates, ratios where higher is better) or `<=` "
                 "at most (times, ratios where lower is better).\n\n")
        L.append(table(["scenario", "state", "target", "measured", "needed", "detail"], targets))
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
                    if status(r) != "ok":
                        rows.append([r["transport"], bad_cell(r)] + [""] * 7)
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
        L.append(f"\n## Blocks (as in {SEEDS['000'].split(',')[0]} and the netlink module): time per transaction, "
                 "KiB/s at p50\n")
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
            row.append("; ".join(f"{source_name(p['source'])}: {p['ms']:.2f} ms / {b * n / 1024 / (p['ms'] / 1e3):.0f}" for p in pub) or "")
            rows.append(row)
        L.append(table(["block x n"] + trs + ["published (STM32MP1)"], rows))
    tp = res.get("throughput")
    if tp:
        L.append(f"\n## Throughput (as in {SEEDS['002'].split(',')[0]}): aggregate = total bytes / wall time\n")
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
                                      f"{r['msgs_per_s'] / 1e6:.2f} M/s" + ("*" if r.get("capped") else "")))
                    rows.append(row)
                L.append(table(["transport"] + [fmt_size(s) for s in sizes], rows))
        L.append("\n`*`: stopped by the cell's time budget (cut short); rates use the bytes moved. Loss and "
                 "corruption were 0 in every cell marked with a rate (a cell with either is an INTEGRITY ERROR). "
                 "TIMEOUT: a wait ran past the timeout, also when retried, at the load shown (the cell list at "
                 "the top says which side and how long).\n")
        pub = tp.get("published", [])
        if pub:
            L.append(f"\nPublished ({SEEDS['002']}, 1 channel, ping-pong): "
                     + ", ".join(f"{fmt_size(p['size'])}: {fmt_rate(p['bytes_per_s'])}" for p in pub) + ".\n")
    api = res.get("api")
    if api:
        L.append(f"\n## API call cost (ns per call; paper: {SEEDS['003'].split(',', 1)[1].split(',')[0].strip()} RTOS side)\n")
        rows = []
        for r in api["api"]:
            paper = "-" if r.get("paper_mode_ns") is None else \
                f"{r['paper_mode_ns']:.0f} / {r['paper_mean_ns']:.0f} / {r['paper_stddev_ns']:.0f}"
            ins = "-" if r.get("instructions") is None else f"{r['instructions']:.0f}"
            rows.append([r["api"], f"{r['mode_ns']:.1f}", f"{r['mean_ns']:.1f}", f"{r['stddev_ns']:.2f}", ins, paper])
        L.append(table(["api", "mode", "mean", "stddev", "instructions", "paper mode / mean / sd"], rows))
    tm = res.get("thread-metric")
    if tm:
        L.append(f"\n## Thread-Metric style (as measured for {SEEDS['004'].split(',')[0]}), period {tm['config']['period_s']} s\n")
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
        L.append(f"\n## Python package (bindings/python/bench/py_bench.py, Python {py.get('python', '?')}, "
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
    print(f"bench-report: {head.replace('**', '')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
