#!/usr/bin/python3
"""Plots of the benchmark figures: classify throughput against threads, input size and filter size, and
accuracy next to speed, from the scaling.tsv that bench_scaling.sh writes.

Usage: plot_benchmarks.py SCALING_TSV OUT_DIR [CAPTION]
Writes OUT_DIR/threads.png, input.png, filter.png and accuracy.png (matplotlib, Debian python3-matplotlib).
"""
import csv
import sys

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def rate(r):
    return float(r["reads"]) / float(r["wall_s"])


def series(rows, figure):
    out = {}
    for r in rows:
        if r["figure"] == figure:
            out.setdefault(r["series"], []).append(r)
    for v in out.values():
        v.sort(key=lambda r: float(r["x"]))
    return out


def finish(ax, fig, path, caption, title):
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    if caption:
        fig.text(0.01, 0.01, caption, fontsize=6, alpha=0.7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_lines(rows, figure, xlabel, path, caption, title, logx=False, fmt_x=None):
    fig, ax = plt.subplots(figsize=(6, 4))
    if not logx:
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    for name, rs in series(rows, figure).items():
        xs = [float(r["x"]) for r in rs]
        ax.plot(xs, [rate(r) / 1e6 for r in rs], marker="o", label=name)
        if fmt_x:
            for x, r in zip(xs, rs):
                ax.annotate(fmt_x(x), (x, rate(r) / 1e6), fontsize=7, xytext=(3, 3), textcoords="offset points")
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("million reads per second")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    finish(ax, fig, path, caption, title)


def plot_accuracy(rows, path, caption):
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, rs in series(rows, "accuracy").items():
        r = rs[0]
        x, y = rate(r) / 1e6, float(r["host_known_pct"])
        ax.scatter([x], [y], s=40)
        mb = float(r["x"]) / 1e6
        ax.annotate("%s\n%.0f MB, foreign known %s%%" % (name, mb, r["foreign_known_pct"]), (x, y), fontsize=7,
                    xytext=(5, -12), textcoords="offset points")
    ax.set_xlabel("million reads per second (classify)")
    ax.set_ylabel("host reads called known (%)")
    ax.margins(x=0.35, y=0.25)
    ax.set_xlim(left=0)
    ax.ticklabel_format(axis="y", useOffset=False)
    finish(ax, fig, path, caption, "Host depletion: sensitivity next to speed")


def human_bytes(b):
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= div:
            return "%.3g %s" % (b / div, unit)
    return "%d B" % b


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: plot_benchmarks.py SCALING_TSV OUT_DIR [CAPTION]")
    rows = load(sys.argv[1])
    out = sys.argv[2]
    caption = sys.argv[3] if len(sys.argv) > 3 else ""
    plot_lines(rows, "threads", "threads", out + "/threads.png", caption, "classify, 1 Gbp host: throughput against threads")
    plot_lines(rows, "input", "reads in the input", out + "/input.png", caption,
               "classify, 1 Gbp host: throughput against input size", logx=True)
    plot_lines(rows, "filter", "filter file size (bytes)", out + "/filter.png", caption,
               "classify of 2 M reads: throughput against filter size", logx=True, fmt_x=human_bytes)
    plot_accuracy(rows, out + "/accuracy.png", caption)


if __name__ == "__main__":
    main()
