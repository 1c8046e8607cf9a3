#!/usr/bin/env python3
"""The figures of docs/benchmarks.md, from the step reports that bench_all.sh's steps leave in WORK_DIR.

Usage: python3 plot_benchmarks.py WORK_DIR OUT_DIR CAPTION STEP...
Reads, for each STEP given (the steps whose reports are of the page's commit): STEP.meta, STEP.rows.tsv and
the step's own tables (scaling.tsv, host.accuracy.tsv, fpr.tsv, normalize.genomes.tsv). Writes to OUT_DIR
the figures it has data for, and prints their names:
  peers_speed.png, peers_memory.png  ksieve against its peers, one panel per task (rows with a panel)
  accuracy_speed.png                 host and foreign reads called known against classify speed, per sampling
  fpr_bits.png                       measured false-positive rate and bits per k-mer against --fpr, per type
  dedup_coverage.png                 coverage kept by dedup against the genomes' coverage in the input
  threads.png, input.png, filter.png classify throughput against threads, input size and filter size
Repeated runs are drawn as the median with error bars from the fastest to the slowest run.
Needs matplotlib (bench/environment.yml: matplotlib-base; Debian: python3-matplotlib).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

TOOL_COLORS = {
    "ksieve": "#1f77b4",
    "bbduk": "#ff7f0e",
    "bbnorm": "#9467bd",
    "khmer": "#d62728",
    "kmc": "#2ca02c",
    "kmc_tools": "#2ca02c",
    "pigz": "#8c8c8c",
    "igzip": "#b5b5b5",
}
PANELS = [
    ("host", "Host depletion"),
    ("dedup", "Deduplication / normalization"),
    ("setops", "Set operations"),
    ("build", "Counting / build"),
]


def load_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def load_meta(path):
    meta = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, _, value = line.rstrip("\n").partition("=")
                meta[key] = value
    return meta


def count_text(n):
    """1000000000 -> '1 G', 40000 -> '40 k' (append 'bp' or a noun)."""
    n = float(n)
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= div:
            return "%.3g %s" % (n / div, unit)
    return "%g" % n


def finish(fig, path, caption, top=1.0, bottom=0.0):
    if caption:
        fig.text(0.01, 0.005, caption, fontsize=6, alpha=0.7, va="bottom")
    fig.tight_layout(rect=(0, max(bottom, 0.12 / fig.get_figheight()), 1, top))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(os.path.basename(path))


def group_title(step, meta):
    if step == "host":
        return "synthetic host of %sbp, %s reads" % (count_text(meta.get("host_bases", 0)),
                                                     count_text(meta.get("reads", 0)))
    if step == "pipeline":
        return "Klebsiella sample, %s reads" % count_text(meta.get("reads", 0))
    if step == "algebra":
        return "k-mers of two Klebsiella read sets"
    if step == "normalize":
        return "synthetic metagenome, %s reads" % count_text(meta.get("meta_reads", 0))
    return step


def plot_peers(work, steps, out, caption, what):
    """what: 'wall' (seconds) or 'rss' (peak MB)."""
    panels = []
    for key, title in PANELS:
        groups = []
        for step in steps:
            rows = [r for r in load_tsv(os.path.join(work, step + ".rows.tsv")) if r["panel"] == key]
            if rows:
                groups.append((group_title(step, load_meta(os.path.join(work, step + ".meta"))), rows))
        if groups:
            panels.append((title, groups))
    if not panels:
        return
    heights = [sum(len(rows) + 1 for _, rows in groups) for _, groups in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 1.2 + 0.32 * sum(heights) + 0.5 * len(panels)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    col = "wall" if what == "wall" else "rss"
    unit = "s" if what == "wall" else "MB"
    tools_seen = {}
    for ax, (title, groups) in zip(axes[:, 0], panels):
        labels, bold, ys, med = [], [], [], []
        y = 0
        for gtitle, rows in groups:
            labels.append(gtitle)
            bold.append(True)
            ys.append(y)
            y += 1
            for r in rows:
                m = float(r[col + "_med_mb" if col == "rss" else "wall_med"])
                a = float(r[col + "_min_mb" if col == "rss" else "wall_min"])
                b = float(r[col + "_max_mb" if col == "rss" else "wall_max"])
                labels.append(r["label"])
                bold.append(False)
                ys.append(y)
                med.append((y, m, m - a, b - m, TOOL_COLORS.get(r["tool"], "#444444")))
                tools_seen[r["tool"].replace("kmc_tools", "kmc")] = TOOL_COLORS.get(r["tool"], "#444444")
                y += 1
        for yy, m, el, eh, c in med:
            ax.barh(yy, m, color=c, height=0.7)
            ax.errorbar(m, yy, xerr=[[el], [eh]], fmt="none", ecolor="black", capsize=3, lw=1)
        top = max(m + eh for _, m, _, eh, _ in med)
        for yy, m, el, eh, c in med:
            ax.text(m + eh + top * 0.01, yy, ("%.0f " if m >= 100 else "%.3g ") % m + unit, va="center", fontsize=7)
        ax.set_yticks(ys)
        ax.set_yticklabels(labels, fontsize=7)
        for t, b in zip(ax.get_yticklabels(), bold):
            if b:
                t.set_fontweight("bold")
                t.set_fontstyle("italic")
        ax.invert_yaxis()
        ax.set_xlim(0, top * 1.15)
        ax.set_title(title, fontsize=10, loc="left")
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_xlabel("wall seconds (shorter is faster)" if what == "wall" else "peak resident memory, MB")
    handles = [matplotlib.patches.Patch(color=c, label="kmc, kmc_tools" if t == "kmc" else t)
               for t, c in tools_seen.items()]
    h = fig.get_figheight()
    fig.suptitle("ksieve and its peers: %s (median; error bars from the fastest to the slowest run)" %
                 ("time" if what == "wall" else "peak memory"), fontsize=10, y=1 - 0.12 / h, va="top")
    fig.legend(handles=handles, fontsize=8, loc="upper center", ncol=len(handles), bbox_to_anchor=(0.5, 1 - 0.4 / h),
               frameon=False)
    top = 1 - 0.62 / h
    finish(fig, os.path.join(out, "peers_speed.png" if what == "wall" else "peers_memory.png"), caption, top)


def rate_err(reads, wmin, wmed, wmax):
    r = reads / wmed / 1e6
    return r, r - reads / wmax / 1e6, reads / wmin / 1e6 - r


def plot_accuracy(work, out, caption):
    acc = load_tsv(os.path.join(work, "host.accuracy.tsv"))
    rows = {r["id"]: r for r in load_tsv(os.path.join(work, "host.rows.tsv"))}
    meta = load_meta(os.path.join(work, "host.meta"))
    if not acc or not rows:
        return
    reads = float(meta.get("reads", 0)) or 1
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6))
    for i, a in enumerate(acc):
        r = rows[a["id"]]
        x, el, eh = rate_err(reads, float(r["wall_min"]), float(r["wall_med"]), float(r["wall_max"]))
        label = "%s: %.1f bits per k-mer, %.0f MB" % (a["sampling"], float(a["bits_per_kmer"]),
                                                     float(a["filter_bytes"]) / 1e6)
        for ax, key in zip(axes, ("host_known_pct", "foreign_known_pct")):
            ax.errorbar([x], [float(a[key])], xerr=[[el], [eh]], fmt="o", ms=7, color="C%d" % i, capsize=4,
                        label=label if ax is axes[0] else None)
    axes[0].set_ylabel("host reads called known, %\n(higher is better)")
    axes[1].set_ylabel("foreign reads called known, %\n(lower is better)")
    for ax in axes:
        ax.set_xlim(left=0)
        ax.margins(x=0.25, y=0.3)
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.grid(True, alpha=0.3)
    axes[1].set_ylim(bottom=0)
    for ax in axes:
        ax.set_xlabel("classify, million reads per second")
    fig.legend(fontsize=8, loc="lower center", ncol=2, bbox_to_anchor=(0.5, 0.04), frameon=False)
    fig.suptitle("Host depletion: accuracy next to speed for each sampling (%sbp host, %s reads, %s threads)\n"
                 "median speed; error bars from the slowest to the fastest run" %
                 (count_text(meta.get("host_bases", 0)), count_text(reads), meta.get("threads", "?")), fontsize=10)
    finish(fig, os.path.join(out, "accuracy_speed.png"), caption, bottom=0.17)


def plot_fpr(work, out, caption):
    rows = load_tsv(os.path.join(work, "fpr.tsv"))
    if not rows:
        return
    types = []
    for r in rows:
        if r["type"] not in types:
            types.append(r["type"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    targets = sorted({float(r["target_fpr"]) for r in rows})
    for t in types:
        rs = sorted((r for r in rows if r["type"] == t), key=lambda r: float(r["target_fpr"]))
        xs = [float(r["target_fpr"]) for r in rs]
        measured = [max(float(r["measured_fpr"]), 1e-9) for r in rs]
        axes[0].plot(xs, measured, marker="o", label=t)
        axes[1].plot(xs, [float(r["bits_per_kmer"]) for r in rs], marker="o", label=t)
    axes[0].plot(targets, targets, "k--", lw=1, label="measured = --fpr")
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_ylabel("measured false-positive rate per absent k-mer")
    axes[1].set_xscale("log")
    axes[1].set_ylabel("bits per stored k-mer")
    axes[1].set_ylim(bottom=0)
    for ax in axes:
        ax.set_xlabel("--fpr (target false-positive rate)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[1].invert_xaxis()
    axes[0].invert_xaxis()
    meta = load_meta(os.path.join(work, "fpr.meta"))
    fig.suptitle("Filter types: measured false-positive rate and size against --fpr (%s k-mers stored, %s looked up)"
                 % (count_text(meta.get("fpr_kmers", 0)), count_text(rows[0]["queries"])), fontsize=10)
    finish(fig, os.path.join(out, "fpr_bits.png"), caption)


def plot_dedup(work, out, caption):
    rows = load_tsv(os.path.join(work, "normalize.genomes.tsv"))
    if not rows:
        return
    series = {}
    for r in rows:
        if float(r["input_reads"]) > 0:
            series.setdefault((r["input"], r["tool"]), []).append(r)
    inputs = []
    for r in rows:
        if r["input"] not in inputs:
            inputs.append(r["input"])
    styles = ["-", "--", ":"]
    markers = {"ksieve dedup": "o", "ksieve dedup --sampling minimizer:9": "^", "bbnorm passes=1": "D"}
    tool_color = {}
    fig, ax = plt.subplots(figsize=(7.5, 5))
    lo, hi = 1e9, 0
    for (inp, tool), rs in series.items():
        rs.sort(key=lambda r: float(r["input_reads"]) / float(r["length"]))
        rs = [r for r in rs if float(r["kept"]) > 0]  # (none kept: not on a log scale)
        if not rs:
            continue
        xs = [float(r["input_reads"]) * 150 / float(r["length"]) for r in rs]
        ys = [float(r["kept"]) * 150 / float(r["length"]) for r in rs]
        lo, hi = min(lo, min(xs)), max(hi, max(xs))
        if tool not in tool_color:
            tool_color[tool] = "C%d" % len(tool_color)
        ax.plot(xs, ys, linestyle=styles[inputs.index(inp) % 3], marker=markers.get(tool, "s"), ms=4,
                color=tool_color[tool], label="%s, %s" % (tool, inp))
    ax.plot([lo, hi], [lo, hi], color="black", lw=0.8, alpha=0.5, label="every read kept")
    meta = load_meta(os.path.join(work, "normalize.meta"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("genome's read coverage in the input (x); genomes with no read kept are left out")
    ax.set_ylabel("read coverage kept (x)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("Deduplication (C = 20, k = 31): coverage kept per genome of the metagenome (%s threads)"
                 % meta.get("threads", "?"), fontsize=9)
    finish(fig, os.path.join(out, "dedup_coverage.png"), caption)


def plot_scaling(work, out, caption):
    rows = load_tsv(os.path.join(work, "scaling.tsv"))
    if not rows:
        return
    meta = load_meta(os.path.join(work, "scaling.meta"))
    host = count_text(meta.get("host_bases", 0))
    specs = [
        ("threads", "threads", "classify, %sbp host: throughput against threads" % host, False),
        ("input", "reads in the input", "classify, %sbp host: throughput against input size" % host, True),
        ("filter", "filter file size (bytes)", "classify of %s reads: throughput against filter size"
         % count_text(meta.get("reads", 0)), True),
    ]
    for figure, xlabel, title, logx in specs:
        series = {}
        for r in rows:
            if r["figure"] == figure:
                series.setdefault(r["series"], []).append(r)
        if not series:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        for name, rs in series.items():
            rs.sort(key=lambda r: float(r["x"]))
            xs = [float(r["x"]) for r in rs]
            pts = [rate_err(float(r["reads"]), float(r["wall_min"]), float(r["wall_med"]), float(r["wall_max"]))
                   for r in rs]
            ax.errorbar(xs, [p[0] for p in pts], yerr=[[p[1] for p in pts], [p[2] for p in pts]], marker="o",
                        capsize=3, label=name)
            if figure == "filter":
                for x, p in zip(xs, pts):
                    ax.annotate(count_text(x) + "B", (x, p[0]), fontsize=7, xytext=(3, 3), textcoords="offset points")
        if logx:
            ax.set_xscale("log")
        else:
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.set_xlabel(xlabel)
        ax.set_ylabel("million reads per second")
        ax.set_ylim(bottom=0)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        ax.set_title(title, fontsize=9)
        finish(fig, os.path.join(out, figure + ".png"), caption)


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: plot_benchmarks.py WORK_DIR OUT_DIR CAPTION STEP...")
    work, out, caption, steps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    os.makedirs(out, exist_ok=True)
    plot_peers(work, steps, out, caption, "wall")
    plot_peers(work, steps, out, caption, "rss")
    if "host" in steps:
        plot_accuracy(work, out, caption)
    if "fpr" in steps:
        plot_fpr(work, out, caption)
    if "normalize" in steps:
        plot_dedup(work, out, caption)
    if "scaling" in steps:
        plot_scaling(work, out, caption)


if __name__ == "__main__":
    main()
