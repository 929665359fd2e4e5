#!/usr/bin/env python3
"""The Summit study's report from the runs of scripts/summit_study.sh.

usage: summit_study_report.py --work WORK --out OUT --mode full|quick

WORK holds one `scalecast run --out` folder per run (names as summit_study.sh gives them); OUT
gets report.md and the PNG plots. The output depends only on the runs' files, on
validation/REPORT.md (which predictions have validation support) and on platforms/*.yaml (the
GPU of each validated system): no date, path, host or version, and PNGs without the matplotlib
version, so the same runs give the same bytes.
"""
import argparse
import csv
import json
import math
import pathlib
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import yaml  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
PNG_METADATA = {"Software": None}  # no matplotlib version in the file
DPI = 100
MODELS = [("resnet50", "ResNet-50 v1.5", "scaling-resnet50"), ("vgg16", "VGG-16", "scaling-vgg16")]


def load_summary(work, name):
    path = work / name / "summary.json"
    if not path.is_file():
        sys.exit(f"summit_study_report: {path.name} missing in run '{name}'")
    with open(path) as f:
        s = json.load(f)
    if "points" not in s:  # a run of one node count writes that point's fields at the top
        s = dict(s, points=[s])
    return s


def point_dir(work, name, nodes):
    d = work / name / f"nodes-{nodes}"
    return d if d.is_dir() else work / name


def measured_iterations(work, name, nodes):
    with open(point_dir(work, name, nodes) / "iterations.csv") as f:
        return list(csv.DictReader(f))


def h2d_copy_s(work, name, nodes):
    """Mean host-to-device input copy time of node 0 GPU 0 per measured iteration."""
    its = {int(r["iteration"]) for r in measured_iterations(work, name, nodes)}
    total = {i: 0.0 for i in its}
    with open(point_dir(work, name, nodes) / "ops.csv") as f:
        for r in csv.DictReader(f):
            if r["node"] == "0" and r["gpu"] == "0" and r["op"] == "h2d_input":
                i = int(r["iteration"])
                if i in total:
                    total[i] += float(r["duration_s"])
    return sum(total.values()) / len(total)


def pct(x):
    return f"{100.0 * x:.1f}%"


def ms(x):
    return f"{1e3 * x:.2f}"


def gb(x):
    return f"{x / 1e9:.3f}"


def eff(p, key):
    v = p["scaling_efficiency"][key]
    return "-" if v is None else pct(v)


def savefig(fig, out, name):
    fig.tight_layout()
    fig.savefig(out / name, dpi=DPI, metadata=PNG_METADATA)
    plt.close(fig)


# ---------------------------------------------------------------- validation support


def gpu_of_system(system):
    path = ROOT / "platforms" / f"{system}.yaml"
    with open(path) as f:
        p = yaml.safe_load(f)
    types = set()
    nts = p.get("node_types", {})
    for nt in nts.values() if isinstance(nts, dict) else nts:
        g = nt.get("gpus", {})
        if isinstance(g, dict) and "type" in g:
            types.add(g["type"])
    return sorted(types)


def validated_points():
    """Rows of the 'All predict points' table of validation/REPORT.md."""
    text = (ROOT / "validation" / "REPORT.md").read_text()
    m = re.search(r"^## All predict points\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        sys.exit("summit_study_report: validation/REPORT.md has no 'All predict points' table")
    rows = []
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 9 or cells[0] in ("id",) or set(cells[0]) <= {"-", ":"}:
            continue
        rows.append({"id": cells[0], "system": cells[1], "model": cells[2], "gpus": int(cells[3]),
                     "nodes": int(cells[4]), "error": cells[8]})
    if not rows:
        sys.exit("summit_study_report: no rows in validation/REPORT.md 'All predict points'")
    return rows


def support_for(model, rows):
    """(V100 points of this model, points of this model on other GPUs)."""
    v100, other = [], []
    for r in rows:
        if r["model"] != model:
            continue
        gpus = gpu_of_system(r["system"])
        (v100 if any(g.startswith("v100") for g in gpus) else other).append(dict(r, gpu=",".join(gpus)))
    key = lambda r: (-r["gpus"], r["id"])  # noqa: E731
    return sorted(v100, key=key), sorted(other, key=key)


def describe_points(points, limit=4):
    if not points:
        return "none"
    shown = [f"`{r['id']}` ({r['system']}, {r['gpus']:,} GPUs, {r['error']}%)" for r in points[:limit]]
    more = f" and {len(points) - limit} more" if len(points) > limit else ""
    return ", ".join(shown) + more


# ---------------------------------------------------------------- sections


def scaling_section(work, out, lines, rows):
    lines += ["## 1. Scaling efficiency, 1 to the largest node count", ""]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    support = []
    for model, label, run in MODELS:
        s = load_summary(work, run)
        pts = s["points"]
        lines += [f"**{label}** (`{s['model']}`, {s['precision']}, {pts[0]['batch_per_gpu']} per GPU, "
                  f"scenarios/summit-study/{run}.yaml):", ""]
        lines += ["| nodes | GPUs | samples/s | eff. vs 1 GPU | eff. vs 1 node | iteration ms | "
                  "exposed comm ms | GPU util. |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for p in pts:
            b = p["breakdown"]
            lines.append(f"| {p['nodes']:,} | {p['gpus']:,} | {p['throughput_samples_per_s']:,.0f} | "
                         f"{eff(p, 'vs_1_gpu')} | {eff(p, 'vs_1_node')} | {ms(p['iteration_time_s'])} | "
                         f"{ms(b['exposed_comm_s'])} | {pct(p['gpu_utilization'])} |")
        lines.append("")
        g = [p["gpus"] for p in pts]
        ax1.plot(g, [p["throughput_samples_per_s"] for p in pts], "o-", label=label)
        ax2.plot(g, [100.0 * p["scaling_efficiency"]["vs_1_gpu"] for p in pts], "o-", label=label)
        v100, other = support_for(model, rows)
        top = v100[0]["gpus"] if v100 else 0
        errs = sorted(float(r["error"]) for r in v100)
        for p in pts:
            if top and p["gpus"] <= top:
                verdict = (f"within validated V100 scale (largest: {top:,} GPUs; errors of the {len(v100)} "
                           f"V100 points {errs[0]:+.2f}% to {errs[-1]:+.2f}%), on other machines, not Summit")
            elif top:
                verdict = f"**extrapolation**: {p['gpus'] / top:,.1f}x the largest validated V100 point ({top:,} GPUs)"
            else:
                verdict = "**extrapolation**: no V100 validation point for this model"
            support.append((label, p["nodes"], p["gpus"], verdict))
        last = pts[-1]
        lines += [f"At {last['nodes']:,} nodes {label} keeps {eff(last, 'vs_1_gpu')} of linear scaling from one "
                  f"GPU; exposed communication is {ms(last['breakdown']['exposed_comm_s'])} ms of a "
                  f"{ms(last['iteration_time_s'])} ms iteration.", ""]
        lines += [f"Validation points for {label}: on V100 {describe_points(v100)}; on other GPUs "
                  f"{describe_points(other)}.", ""]
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("GPUs (6 per node)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    ax1.set_yscale("log")
    ax1.set_ylabel("samples/s")
    ax1.set_title("Throughput on Summit")
    ax2.set_ylabel("scaling efficiency vs 1 GPU (%)")
    ax2.set_title("Scaling efficiency")
    savefig(fig, out, "scaling.png")
    lines += ["![scaling](scaling.png)", ""]
    return support


def variability_section(work, out, lines, seeds):
    lines += ["## 2. Variability: run-to-run spread under compute noise and stragglers", "",
              "ResNet-50 on 16 nodes (96 GPUs), scenarios/summit-study/variability.yaml: each rank's "
              "compute stretched each iteration by a lognormal factor (mean 1, CV 3%), and in the second "
              "case each rank a straggler (1.3x slower for the whole run) with probability 1%, drawn by "
              "the seed. Both magnitudes are assumptions, not Summit measurements. One run per seed; "
              "the spread across seeds is the run-to-run variability the model predicts.", ""]
    fig, ax = plt.subplots(figsize=(7, 4))
    for case, label in (("noise", "compute noise only"), ("stragglers", "compute noise + stragglers")):
        tputs = []
        lines += [f"**{label}**:", "", "| seed | samples/s | mean iteration ms | fastest ms | slowest ms | "
                  "exposed comm ms | GPU util. |", "|---:|---:|---:|---:|---:|---:|---:|"]
        for sd in seeds:
            name = f"variability-{case}-seed{sd}"
            p = load_summary(work, name)["points"][0]
            its = [float(r["time_s"]) for r in measured_iterations(work, name, p["nodes"])]
            tputs.append(p["throughput_samples_per_s"])
            lines.append(f"| {sd} | {p['throughput_samples_per_s']:,.0f} | {ms(p['iteration_time_s'])} | "
                         f"{ms(min(its))} | {ms(max(its))} | {ms(p['breakdown']['exposed_comm_s'])} | "
                         f"{pct(p['gpu_utilization'])} |")
        mean = sum(tputs) / len(tputs)
        sdev = math.sqrt(sum((t - mean) ** 2 for t in tputs) / (len(tputs) - 1)) if len(tputs) > 1 else 0.0
        lines += ["", f"Across {len(tputs)} seeds: mean {mean:,.0f} samples/s, standard deviation "
                  f"{sdev:,.0f} ({pct(sdev / mean)}), range {min(tputs):,.0f} to {max(tputs):,.0f} "
                  f"({pct((max(tputs) - min(tputs)) / mean)} of the mean).", ""]
        ax.plot(seeds, tputs, "o-", label=label)
    ax.set_xlabel("seed")
    ax.set_xticks(seeds)
    ax.set_ylabel("samples/s (96 GPUs)")
    ax.set_title("ResNet-50, 16 Summit nodes: throughput per seed")
    ax.grid(True, alpha=0.3)
    ax.legend()
    savefig(fig, out, "variability.png")
    lines += ["![variability](variability.png)", ""]


def storage_section(work, out, lines):
    lines += ["## 3. Input from GPFS vs node-local NVMe", "",
              "ResNet-50 reading 110 KB ImageNet JPEGs per sample (scenarios/summit-study/storage.yaml), "
              "prefetch depth 2, no CPU decode stage; GPFS Alpine (shared by all nodes) vs each node's "
              "NVMe burst buffer (`--set input.source=nvme`).", "",
              "| source | nodes | GPUs | samples/s | eff. vs 1 node | I/O stall ms | storage read per "
              "iteration GB | storage read rate TB/s |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for src, label in (("pfs", "GPFS"), ("nvme", "NVMe")):
        pts = load_summary(work, f"storage-{src}")["points"]
        for p in pts:
            rd = p["bytes_per_iteration"].get("storage", 0.0)
            lines.append(f"| {label} | {p['nodes']:,} | {p['gpus']:,} | {p['throughput_samples_per_s']:,.0f} | "
                         f"{eff(p, 'vs_1_node')} | {ms(p['breakdown']['io_stall_s'])} | {gb(rd)} | "
                         f"{rd / p['iteration_time_s'] / 1e12:.3f} |")
        n = [p["nodes"] for p in pts]
        ax1.plot(n, [p["throughput_samples_per_s"] / p["nodes"] for p in pts], "o-", label=label)
        ax2.plot(n, [1e3 * p["breakdown"]["io_stall_s"] for p in pts], "o-", label=label)
    lines.append("")
    for src, label in (("pfs", "GPFS"), ("nvme", "NVMe")):
        stalled = [p["nodes"] for p in load_summary(work, f"storage-{src}")["points"]
                   if p["breakdown"]["io_stall_s"] > 0.0]
        lines.append(f"- {label}: " + (f"compute waits for input from {stalled[0]:,} nodes on (of the node "
                                        "counts run)." if stalled else "no I/O stall at any node count run."))
    lines += ["", "The storage read rate is the bytes read per iteration over the iteration time: what the "
              "source delivered, which caps the rate of a stalled run.", ""]
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("nodes")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    ax1.set_ylabel("samples/s per node")
    ax1.set_title("Throughput per node")
    ax2.set_ylabel("I/O stall per iteration (ms)")
    ax2.set_title("Compute waiting for input")
    savefig(fig, out, "storage.png")
    lines += ["![storage](storage.png)", ""]


def transfers_section(work, out, lines):
    lines += ["## 4. GPU-GPU vs GPU-CPU transfers", "",
              "Per iteration, from the scaling runs. GPU-GPU: the all-reduce's bytes inside nodes "
              "(NVLink) and through the NICs (InfiniBand), summed over all GPUs, and the time rank 0's "
              "communication stream is busy (all of it, hidden or not) and exposed. GPU-CPU: the "
              "host-to-device copy of each input batch (summed over all GPUs) and rank 0's copy time. "
              "The model has no device-to-host traffic in a training step (no checkpoints, summaries "
              "or host-side optimizer), so GPU-CPU here is one-way.", "",
              "| model | nodes | intra-node GB | inter-node GB | host-to-device GB | GPU-GPU per GPU MB | "
              "GPU-CPU per GPU MB | all-reduce busy ms | exposed comm ms | H2D copy ms | exposed copy ms |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for _model, label, run in MODELS:
        pts = load_summary(work, run)["points"]
        gg, gc, tg, tc = [], [], [], []
        for p in pts:
            by = p["bytes_per_iteration"]
            intra, inter, h2d = by.get("intra_node", 0.0), by.get("inter_node", 0.0), by.get("host_device", 0.0)
            copy = h2d_copy_s(work, run, p["nodes"])
            gg.append((intra + inter) / p["gpus"] / 1e6)
            gc.append(h2d / p["gpus"] / 1e6)
            tg.append(1e3 * p["comm_total_s"])
            tc.append(1e3 * copy)
            lines.append(f"| {label} | {p['nodes']:,} | {gb(intra)} | {gb(inter)} | {gb(h2d)} | {gg[-1]:,.1f} | "
                         f"{gc[-1]:,.1f} | {ms(p['comm_total_s'])} | {ms(p['breakdown']['exposed_comm_s'])} | "
                         f"{ms(copy)} | {ms(p['breakdown']['copy_s'])} |")
        n = [p["nodes"] for p in pts]
        ax1.plot(n, gg, "o-", label=f"{label} GPU-GPU")
        ax1.plot(n, gc, "s--", label=f"{label} GPU-CPU")
        ax2.plot(n, tg, "o-", label=f"{label} all-reduce")
        ax2.plot(n, tc, "s--", label=f"{label} H2D copy")
    lines.append("")
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("nodes")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    ax1.set_yscale("log")
    ax2.set_yscale("log")
    ax1.set_ylabel("MB per GPU per iteration")
    ax1.set_title("Transfer volume")
    ax2.set_ylabel("ms per iteration (rank 0, busy)")
    ax2.set_title("Transfer time")
    savefig(fig, out, "transfers.png")
    lines += ["![transfers](transfers.png)", ""]


def utilisation_section(work, out, lines, seeds):
    lines += ["## 5. GPU utilisation", "",
              "Utilisation = rank 0's compute-stream busy time / iteration time (kernels of the "
              "training step only). It is not nvidia-smi's `utilization.gpu`, which counts any "
              "kernel running, NCCL's included, and so reads higher whenever communication is exposed.", "",
              "Idle is time with neither compute nor a transfer on rank 0's streams, e.g. waiting for Horovod's "
              "5 ms cycle tick before a bucket is launched.", "",
              "| run | nodes | GPU util. | compute ms | exposed comm ms | I/O stall ms | idle ms |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    fig, ax = plt.subplots(figsize=(7, 4))
    runs = [(label, run) for _m, label, run in MODELS] + [("ResNet-50, GPFS", "storage-pfs"),
                                                           ("ResNet-50, NVMe", "storage-nvme")]
    for label, run in runs:
        pts = load_summary(work, run)["points"]
        for p in pts:
            b = p["breakdown"]
            lines.append(f"| {label} | {p['nodes']:,} | {pct(p['gpu_utilization'])} | {ms(b['compute_s'])} | "
                         f"{ms(b['exposed_comm_s'])} | {ms(b['io_stall_s'])} | {ms(b['idle_s'])} |")
        ax.plot([p["nodes"] for p in pts], [100.0 * p["gpu_utilization"] for p in pts], "o-", label=label)
    u = [load_summary(work, f"variability-stragglers-seed{s}")["points"][0]["gpu_utilization"] for s in seeds]
    lines += ["", f"With noise and stragglers (16 nodes, section 2) utilisation ranges from {pct(min(u))} to "
              f"{pct(max(u))} over the seeds.", ""]
    ax.set_xscale("log")
    ax.set_xlabel("nodes")
    ax.set_ylabel("GPU utilisation (%)")
    ax.set_title("Compute busy / iteration, rank 0")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    savefig(fig, out, "utilisation.png")
    lines += ["![utilisation](utilisation.png)", ""]


def support_section(lines, support, rows):
    lines += ["## 6. Validation support of each prediction", "",
              "No measurement taken on Summit is in the public validation set (validation/REPORT.md), so "
              "no figure above is validated on this machine. Throughput predictions lean on V100 points "
              "measured on other machines (DGX-1, DGX-2, DGX-2H, AWS p3); everything else is a model "
              "prediction without any validation point. Support is read from the 'All predict points' "
              "table of validation/REPORT.md (the GPU of each system from its platforms/ file).", "",
              "| prediction | support |", "|---|---|"]
    for label, nodes, gpus, verdict in support:
        lines.append(f"| {label} throughput and scaling efficiency, {nodes:,} node{'s' if nodes > 1 else ''} "
                     f"({gpus:,} GPUs) | {verdict} |")
    lines += ["| run-to-run spread under noise and stragglers (section 2) | **extrapolation**: no validation "
              "point measures variability; noise magnitudes are assumptions |",
              "| GPFS vs NVMe input, I/O stall (section 3) | **extrapolation**: validation runs keep input in "
              "memory (`validate` uses `source: memory`); no storage-bound run is validated |",
              "| transfer volumes (section 4) | no validation point; the bytes are arithmetic of the model's "
              "gradient size, the all-reduce pattern and the input batch shape, not a measurement |",
              "| transfer times and GPU utilisation (sections 4, 5) | **extrapolation**: validation compares "
              "throughput only; compute and exposed-communication splits are not validated |", ""]
    largest = max((r for r in rows if any(g.startswith("v100") for g in gpu_of_system(r["system"]))),
                  key=lambda r: (r["gpus"], r["id"]))
    lines += [f"The largest validated V100 point of any model is `{largest['id']}` ({largest['model']}, "
              f"{largest['system']}, {largest['gpus']:,} GPUs, {largest['error']}%).", ""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", choices=["full", "quick"], required=True)
    a = ap.parse_args()
    work, out = pathlib.Path(a.work), pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = sorted(int(m.group(1)) for d in work.iterdir()
                   if (m := re.fullmatch(r"variability-noise-seed(\d+)", d.name)))
    if not seeds:
        sys.exit("summit_study_report: no variability runs in the work folder")
    plt.rcParams.update({"font.size": 9})
    rows = validated_points()
    r50 = load_summary(work, "scaling-resnet50")
    lines = ["# The Summit study reproduced", "",
             "Generated by `scripts/summit_study.sh"
             + (" --quick" if a.mode == "quick" else "") + " OUT_DIR` (scenarios in `scenarios/summit-study/`); "
             "do not edit by hand. "
             + ("This is the reduced `--quick` set the `cli.summit_study_quick` test regenerates; the full "
                "report is `scenarios/summit-study/report/report.md`."
                if a.mode == "quick" else "The reduced set the test regenerates is in `quick/`."), "",
             "What the study measured (Han et al., \"A Quantitative Study of Deep Learning Training on "
             "Heterogeneous Supercomputers\", IEEE CLUSTER 2019: TensorFlow on OLCF Summit) and what "
             "scalecast predicts for it here: scaling efficiency, variability, GPFS vs NVMe input, "
             "GPU-GPU vs GPU-CPU transfers and GPU utilisation. These are simulations, not the paper's "
             "measurements; section 6 says which have validation support and which are extrapolation.", "",
             f"Set-up common to every run: platform `{r50['platform']}` (6 V100 16 GB per node, dual-rail "
             "EDR InfiniBand fat tree; platforms/summit.yaml), TensorFlow + Horovod (`framework: "
             "tensorflow`: 64 MiB fusion, 5 ms cycle; hierarchical NCCL all-reduce), mixed precision, wave "
             "fidelity, calibrated network, kernel times from DeepBench's V100 measurements with framework "
             "efficiency 1.0 (no Summit anchor exists to fit it).", ""]
    support = scaling_section(work, out, lines, rows)
    variability_section(work, out, lines, seeds)
    storage_section(work, out, lines)
    transfers_section(work, out, lines)
    utilisation_section(work, out, lines, seeds)
    support_section(lines, support, rows)
    lines += ["## 7. What the tool does not predict today", "",
              "- **Accuracy** (the study's accuracy axis): scalecast predicts time per step, not "
              "convergence. Time-to-train from published convergence tables exists (`time_to_train`, "
              "MLPerf reference convergence points; scenarios/README.md) but is not run here: those "
              "tables describe MLPerf's LARS recipes, not the study's TensorFlow runs.",
              "- **Parameter-server training**: simulated since 3 Dec (`strategy: parameter_server`), "
              "but not validated (the public PS points are predicted up to 3.7x too fast; "
              "validation/REPORT.md), so every run here uses Horovod-style all-reduce.",
              "- **CPU-side input work**: JPEG decode and augmentation on the POWER9 cores is off "
              "(no `decode_rate`), and the GPU time of nvJPEG/DALI decode is not modelled.",
              "- **Other jobs on the machine**: `jobs:` scenarios put several jobs and I/O neighbours "
              "on one machine (scenarios/summit-shared-jobs.yaml); these runs have this job alone.",
              "- **Inception-v3** is not in these runs (its concatenations were mispriced as host "
              "copies until 3 Dec; the study's axes were set before the fix).",
              ""]
    (out / "report.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
