#!/usr/bin/env python3
"""Rows of calibration/data/convergence/convergence.yaml from an MLPerf reference convergence point file
(mlcommons/logging, mlperf_logging/rcp_checker/training_<version>/rcps_<benchmark>.json).

Each row is the RCP checker's own statistic, reproduced without numpy: the olympic mean of a
batch size's runs (sorted, the fastest and the slowest dropped: rcp_checker.py
`compute_rcp_stats`, samples_rejected = 1), after its pruning (`_prune_rcps`: points with a
smaller batch than the fastest-converging one are dropped, then any point slower than the linear
interpolation of its neighbours). Between rows the checker interpolates linearly in the batch
(`_create_interp_rcp`, np.interp), as scalecast does.

Usage: mlperf_rcp_rows.py RCPS_JSON VERSION_LABEL   (prints YAML rows)"""
import json
import sys


def olympic_mean(runs):
    runs = sorted(runs)[1:-1]
    return sum(runs) / len(runs)


def pruned(points):
    points = sorted(points, key=lambda p: p["bs"])
    fastest = min(points, key=lambda p: p["mean"])
    points = [p for p in points if p["bs"] >= fastest["bs"]]
    i = 1
    while i < len(points) - 1:
        lo, hi, p = points[i - 1], points[i + 1], points[i]
        interp = lo["mean"] + (hi["mean"] - lo["mean"]) * (p["bs"] - lo["bs"]) / (hi["bs"] - lo["bs"])
        if p["mean"] > interp:
            del points[i]
            i -= 1
        i += 1
    return points


def main():
    path, label = sys.argv[1], sys.argv[2]
    with open(path) as f:
        data = json.load(f)
    points = []
    for name, rec in data.items():
        runs = rec.get("Epochs to converge") or rec.get("samples to converge")
        points.append({"name": name, "bs": rec["BS"], "mean": olympic_mean(runs), "n": len(runs)})
    for p in pruned(points):
        print(f"      - {{global_batch: {p['bs']}, value: {p['mean']:.10g}, "
              f"source: \"{label} {p['name']}, olympic mean of {p['n']} runs\"}}")


if __name__ == "__main__":
    main()
