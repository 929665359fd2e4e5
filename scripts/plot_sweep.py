#!/usr/bin/env python3
"""Plots of a merged sweep (SWEEP_DIR/sweep.csv, written by `scalecast sweep`):
SWEEP_DIR/scaling.png, throughput and scaling efficiency against GPUs, one line per axis
combination; SWEEP_DIR/breakdown.png, the iteration split into compute, exposed communication,
I/O stall, copies and idle per node count, one panel per combination; with time-to-train
columns (a scenario with `time_to_train`), SWEEP_DIR/time_to_train.png: hours to the table's
quality target against node count, the fastest point of each combination marked (where more
nodes stop helping), extrapolated points hollow.

An LLM sweep (a scenario with `parallel:`; sweep.csv has tokens_per_s_per_gpu and mfu) gives
SWEEP_DIR/scaling.png, tokens/s per GPU and MFU per point (axis combination and node count), and
SWEEP_DIR/breakdown.png, the bottleneck stage's iteration split into compute, optimizer, bubble
and exposed TP, CP, PP and DP communication per point.

Usage: plot_sweep.py SWEEP_DIR   (`scalecast sweep` runs it after merging when python3 and
matplotlib are there)."""
import csv
import os
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FIXED = ["nodes", "gpus", "iteration_time_s", "throughput_samples_per_s", "efficiency_vs_1_gpu",
         "efficiency_vs_1_node", "compute_s", "exposed_comm_s", "io_stall_s", "copy_s", "idle_s",
         "fidelity"]
PARTS = [("compute_s", "compute"), ("exposed_comm_s", "exposed communication"),
         ("io_stall_s", "I/O stall"), ("copy_s", "copies"), ("idle_s", "idle")]
# No timestamps or versions in the files: the same sweep gives the same bytes.
PNG_METADATA = {"Software": None}
HAS_TTT = False
LLM_FIXED = ["nodes", "gpus", "iteration_time_s", "throughput_tokens_per_s",
             "tokens_per_s_per_gpu", "mfu", "hfu", "bottleneck_stage", "fidelity"]
LLM_PARTS = [("compute_s", "compute"), ("optimizer_s", "optimizer"), ("bubble_s", "bubble"),
             ("exposed_tp_s", "exposed TP"), ("exposed_cp_s", "exposed CP"),
             ("exposed_pp_s", "exposed PP"), ("exposed_dp_s", "exposed DP")]


def read_sweep(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_sweep: {path} has no points")
    header = list(rows[0].keys())
    llm = "tokens_per_s_per_gpu" in header
    fixed = LLM_FIXED + [c for c, _ in LLM_PARTS] if llm else FIXED
    missing = [c for c in fixed if c not in header]
    if missing:
        sys.exit(f"plot_sweep: {path} lacks the columns {', '.join(missing)}")
    axes = header[:header.index("nodes")]
    global HAS_TTT
    HAS_TTT = "time_to_train_s" in header
    combos = OrderedDict()
    for r in rows:
        key = ", ".join(f"{a}={r[a]}" for a in axes) or "scenario"
        combos.setdefault(key, []).append(r)
    return combos, llm


def llm_points(combos):
    """(label, row) per point of an LLM sweep, in the file's order."""
    out = []
    for key, rows in combos.items():
        for r in rows:
            label = key if len(rows) == 1 else f"{key}, {r['nodes']} nodes"
            out.append((label, r))
    return out


def plot_llm_scaling(combos, path):
    points = llm_points(combos)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 3.0 + 0.35 * len(points)), sharex=True)
    x = range(len(points))
    top.bar(x, [number(r["tokens_per_s_per_gpu"]) for _, r in points], color="C0")
    top.set_ylabel("tokens/s per GPU")
    bottom.bar(x, [100 * number(r["mfu"]) for _, r in points], color="C1", label="MFU")
    bottom.plot(x, [100 * number(r["hfu"]) for _, r in points], "k_", markersize=14, label="HFU")
    bottom.set_ylabel("% of peak")
    bottom.legend(fontsize=7)
    bottom.set_xticks(list(x), [label for label, _ in points], rotation=30, ha="right",
                      fontsize=7)
    for ax in (top, bottom):
        ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata=PNG_METADATA)
    plt.close(fig)


def plot_llm_breakdown(combos, path):
    points = llm_points(combos)
    fig, ax = plt.subplots(figsize=(8.0, 3.0 + 0.35 * len(points)))
    x = range(len(points))
    bottom = [0.0] * len(points)
    for j, (col, label) in enumerate(LLM_PARTS):
        s = [number(r[col]) for _, r in points]
        ax.bar(x, s, bottom=bottom, color=f"C{j}", label=label)
        bottom = [b + v for b, v in zip(bottom, s)]
    ax.set_xticks(list(x), [label for label, _ in points], rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("s per iteration (bottleneck stage)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata=PNG_METADATA)
    plt.close(fig)


def number(text):
    return float(text) if text != "" else float("nan")


def plot_scaling(combos, path):
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 7.2), sharex=True)
    for i, (key, rows) in enumerate(combos.items()):
        rows = sorted(rows, key=lambda r: int(r["gpus"]))
        gpus = [int(r["gpus"]) for r in rows]
        color = f"C{i % 10}"
        top.plot(gpus, [number(r["throughput_samples_per_s"]) for r in rows], "o-", color=color,
                 label=key)
        bottom.plot(gpus, [100 * number(r["efficiency_vs_1_gpu"]) for r in rows], "o-",
                    color=color, label=key)
    top.set_xscale("log", base=2)
    top.set_yscale("log")
    top.set_ylabel("throughput (samples/s)")
    top.grid(True, which="both", alpha=0.3)
    top.legend(fontsize=7)
    bottom.set_xlabel("GPUs")
    bottom.set_ylabel("scaling efficiency vs 1 GPU (%)")
    bottom.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata=PNG_METADATA)
    plt.close(fig)


def plot_breakdown(combos, path):
    n = len(combos)
    fig, panels = plt.subplots(n, 1, figsize=(6.4, 2.0 + 2.6 * n), squeeze=False)
    for (key, rows), ax in zip(combos.items(), panels[:, 0]):
        rows = sorted(rows, key=lambda r: int(r["nodes"]))
        x = range(len(rows))
        bottom = [0.0] * len(rows)
        for j, (col, label) in enumerate(PARTS):
            ms = [1e3 * number(r[col]) for r in rows]
            ax.bar(x, ms, bottom=bottom, color=f"C{j}", label=label)
            bottom = [b + m for b, m in zip(bottom, ms)]
        ax.set_xticks(list(x), [r["nodes"] for r in rows])
        ax.set_xlabel("nodes")
        ax.set_ylabel("ms per iteration")
        ax.set_title(key, fontsize=9)
    panels[0, 0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata=PNG_METADATA)
    plt.close(fig)


def plot_time_to_train(combos, path):
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for i, (key, rows) in enumerate(combos.items()):
        rows = [r for r in rows if r["time_to_train_s"] != ""]
        if not rows:
            continue
        rows = sorted(rows, key=lambda r: int(r["nodes"]))
        nodes = [int(r["nodes"]) for r in rows]
        hours = [number(r["time_to_train_s"]) / 3600.0 for r in rows]
        color = f"C{i % 10}"
        ax.plot(nodes, hours, "-", color=color, label=key)
        for n, h, r in zip(nodes, hours, rows):
            hollow = r["time_to_train_extrapolated"] == "1"
            ax.plot([n], [h], "o", color=color, markerfacecolor="none" if hollow else color)
        best = min(range(len(hours)), key=lambda k: hours[k])
        ax.plot([nodes[best]], [hours[best]], "*", color=color, markersize=14)
        ax.annotate(f"fastest: {nodes[best]} nodes, {hours[best]:.3g} h", (nodes[best], hours[best]),
                    textcoords="offset points", xytext=(-6, 10), ha="right", fontsize=7,
                    color=color)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("nodes")
    ax.set_ylabel("time to train (hours)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata=PNG_METADATA)
    plt.close(fig)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    combos, llm = read_sweep(os.path.join(folder, "sweep.csv"))
    if llm:
        plot_llm_scaling(combos, os.path.join(folder, "scaling.png"))
        plot_llm_breakdown(combos, os.path.join(folder, "breakdown.png"))
        print(f"plot_sweep: {folder}/scaling.png, {folder}/breakdown.png")
        return
    plot_scaling(combos, os.path.join(folder, "scaling.png"))
    plot_breakdown(combos, os.path.join(folder, "breakdown.png"))
    extra = ""
    if HAS_TTT:
        plot_time_to_train(combos, os.path.join(folder, "time_to_train.png"))
        extra = f", {folder}/time_to_train.png"
    print(f"plot_sweep: {folder}/scaling.png, {folder}/breakdown.png{extra}")


if __name__ == "__main__":
    main()
