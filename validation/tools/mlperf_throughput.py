#!/usr/bin/env python3
"""Steady-state training throughput from MLPerf Training result logs (validation/FORMAT.md §7).

    mlperf_throughput.py [--eval-interval-samples N] LOG [LOG ...]
    mlperf_throughput.py --extract LOG > FIXTURE

Each LOG is one run's result file (`result_N.txt`, `:::MLLOG {json}` lines). The benchmark is
read from the log's `submission_benchmark` key:

- resnet: throughput = 1,281,167 images per epoch / the median interval between consecutive
  `epoch_stop` events (consecutive epoch numbers only). Check: the same images over the
  intervals between consecutive `eval_accuracy` events (an evaluation waits for the training
  before it, and each interval holds one evaluation). Where epoch_stop gives more than
  ASYNC_TOLERANCE above that, epoch_stop was logged before the GPUs finished the epoch (the
  host runs ahead; NVIDIA's largest MXNet jobs of v1.1 and v2.0), and the evaluation
  intervals are used instead: images between consecutive evaluations / the time between
  them, median over the intervals (a lower bound by the evaluations' share of the time).
- bert: throughput = samples trained between consecutive `eval_accuracy` events / the time
  between them, median over the intervals. The samples trained at each evaluation are the
  event's `metadata.epoch_num` (NVIDIA's logs from v2.0 on count samples there). Older logs
  (v1.1) log epoch_num 1 at every evaluation; for them give the recipe's evaluation interval
  (`EVAL_ITER_SAMPLES` of the config; the first evaluation is at the same count): the k-th
  evaluation then follows step ceil(k * interval / global_batch_size), as in the recipe.

The job's throughput is the median over the runs given (the mean of the two middle runs for
an even count). `--extract` writes only the lines the derivation reads, a fixture that gives
the same result as the whole log. Bad input: `FILE:LINE: error: ...` on stderr, exit 1.
Python 3 standard library only.
"""

import argparse
import json
import math
import statistics
import sys

IMAGENET_TRAIN_IMAGES = 1281167
# Synchronous logs (every NVIDIA MXNet ResNet job of v1.1 to v4.0 but two) agree with the
# evaluation intervals within 0.9%; the two asynchronous ones are 12-18% and 5x above them.
ASYNC_TOLERANCE = 0.02
PREFIX = ":::MLLOG "
KEPT_KEYS = {
    "submission_benchmark", "submission_platform", "submission_division", "global_batch_size",
    "gradient_accumulation_steps", "run_start", "run_stop", "epoch_stop", "eval_accuracy",
    "train_samples",
}


class LogError(Exception):
    """An error in one log, already formatted as `FILE:LINE: error: message`."""


def read_events(path, text):
    """(line number, raw line, event dict) for every `:::MLLOG` line of the text."""
    events = []
    for number, line in enumerate(text.splitlines(), start=1):
        at = line.find(PREFIX)
        if at < 0:
            continue
        try:
            event = json.loads(line[at + len(PREFIX):])
        except json.JSONDecodeError as e:
            raise LogError(f"{path}:{number}: error: invalid MLLOG JSON: {e.msg} at column "
                           f"{at + len(PREFIX) + e.colno}") from None
        if not isinstance(event, dict) or "key" not in event or "time_ms" not in event:
            raise LogError(f"{path}:{number}: error: MLLOG record without key or time_ms")
        if not isinstance(event["time_ms"], (int, float)) or isinstance(event["time_ms"], bool):
            raise LogError(f"{path}:{number}: error: {event['key']}: time_ms is not a number")
        events.append((number, line, event))
    if not events:
        raise LogError(f"{path}:1: error: no ':::MLLOG' lines; is this an MLPerf result log?")
    return events


def single_value(path, events, key):
    """The value of a key logged once (repeats must agree); None when absent."""
    found = [(n, e["value"]) for n, _, e in events if e["key"] == key]
    if not found:
        return None
    for n, value in found[1:]:
        if value != found[0][1]:
            raise LogError(f"{path}:{n}: error: {key}: logged again with {value!r}, first "
                           f"{found[0][1]!r} at line {found[0][0]}")
    return found[0][1]


def positive_int(path, events, key):
    value = single_value(path, events, key)
    if value is None:
        raise LogError(f"{path}:1: error: {key}: not in the log")
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        line = next(n for n, _, e in events if e["key"] == key)
        raise LogError(f"{path}:{line}: error: {key}: expected a positive integer, got {value!r}")
    return value


def resnet_intervals(path, events):
    """Seconds between consecutive epoch_stop events, and the images per interval."""
    stops = {}
    for n, _, e in events:
        if e["key"] != "epoch_stop":
            continue
        epoch = (e.get("metadata") or {}).get("epoch_num")
        if not isinstance(epoch, int) or isinstance(epoch, bool):
            raise LogError(f"{path}:{n}: error: epoch_stop: metadata.epoch_num is not an integer")
        stops.setdefault(epoch, (n, e["time_ms"]))  # every rank may log it: keep the first
    epochs = sorted(stops)
    intervals = []
    for a, b in zip(epochs, epochs[1:]):
        if b != a + 1:
            continue
        dt = (stops[b][1] - stops[a][1]) / 1000.0
        if dt <= 0:
            raise LogError(f"{path}:{stops[b][0]}: error: epoch_stop {b}: not after epoch {a}")
        intervals.append(dt)
    if not intervals:
        raise LogError(f"{path}:1: error: epoch_stop: fewer than two consecutive epochs logged")
    return intervals


def resnet_eval_rates(path, events):
    """Images per second between consecutive eval_accuracy events (each includes one eval)."""
    evals = {}
    for n, _, e in events:
        if e["key"] != "eval_accuracy":
            continue
        epoch = (e.get("metadata") or {}).get("epoch_num")
        if not isinstance(epoch, int) or isinstance(epoch, bool):
            raise LogError(f"{path}:{n}: error: eval_accuracy: metadata.epoch_num is not an "
                           f"integer")
        evals.setdefault(epoch, (n, e["time_ms"]))
    epochs = sorted(evals)
    rates = []
    for a, b in zip(epochs, epochs[1:]):
        dt = (evals[b][1] - evals[a][1]) / 1000.0
        if dt <= 0:
            raise LogError(f"{path}:{evals[b][0]}: error: eval_accuracy at epoch {b}: not after "
                           f"the one at epoch {a}")
        rates.append((b - a) * IMAGENET_TRAIN_IMAGES / dt)
    return rates


def bert_samples(path, events, evals, batch, interval):
    """Samples trained at each evaluation (line, time_ms, samples)."""
    logged = [(e.get("metadata") or {}).get("epoch_num") for _, _, e in evals]
    counts_samples = all(isinstance(s, int) and not isinstance(s, bool) for s in logged) and \
        all(b > a for a, b in zip(logged, logged[1:])) and logged[0] > 1
    if interval is not None:
        if counts_samples:
            raise LogError(f"{path}:{evals[0][0]}: error: eval_accuracy: the log counts samples "
                           f"in metadata.epoch_num; do not give --eval-interval-samples")
        points = [(n, e["time_ms"], math.ceil(k * interval / batch) * batch)
                  for k, (n, _, e) in enumerate(evals, start=1)]
        trained = [(n, e["value"]) for n, _, e in events if e["key"] == "train_samples"]
        if trained and trained[-1][1] != points[-1][2]:
            raise LogError(f"{path}:{trained[-1][0]}: error: train_samples: {trained[-1][1]} "
                           f"trained, but {len(points)} evaluations every {interval} samples "
                           f"end at {points[-1][2]}: wrong --eval-interval-samples?")
        return points
    if not counts_samples:
        raise LogError(f"{path}:{evals[0][0]}: error: eval_accuracy: metadata.epoch_num does not "
                       f"count samples (got {logged[:3]!r}...); give the recipe's evaluation "
                       f"interval with --eval-interval-samples")
    return [(n, e["time_ms"], s) for (n, _, e), s in zip(evals, logged)]


def bert_intervals(path, events, batch, interval):
    evals = [(n, line, e) for n, line, e in events if e["key"] == "eval_accuracy"]
    if len(evals) < 2:
        raise LogError(f"{path}:1: error: eval_accuracy: fewer than two evaluations logged")
    points = bert_samples(path, events, evals, batch, interval)
    rates = []
    for (_, t0, s0), (n1, t1, s1) in zip(points, points[1:]):
        dt = (t1 - t0) / 1000.0
        if dt <= 0:
            raise LogError(f"{path}:{n1}: error: eval_accuracy: not later than the previous one")
        rates.append((s1 - s0) / dt)
    return rates


def analyse(path, text, interval=None):
    """Per-run figures: benchmark, global batch, throughput, median interval, run time."""
    events = read_events(path, text)
    benchmark = single_value(path, events, "submission_benchmark")
    batch = positive_int(path, events, "global_batch_size")
    run = {"file": path, "benchmark": benchmark, "global_batch_size": batch,
           "platform": single_value(path, events, "submission_platform"),
           "gradient_accumulation_steps":
               single_value(path, events, "gradient_accumulation_steps")}
    if benchmark == "resnet":
        if interval is not None:
            raise LogError(f"{path}:1: error: --eval-interval-samples applies to bert logs only")
        intervals = resnet_intervals(path, events)
        run["median_interval_s"] = statistics.median(intervals)
        by_epochs = IMAGENET_TRAIN_IMAGES / run["median_interval_s"]
        rates = resnet_eval_rates(path, events)
        if len(rates) == 0:
            run["rule"] = "epoch_stop (unchecked: fewer than two evaluations)"
            run["intervals"], run["throughput"] = len(intervals), by_epochs
        else:
            by_evals = statistics.median(rates)
            run["eval_interval_throughput"] = by_evals
            if by_epochs > (1 + ASYNC_TOLERANCE) * by_evals:
                run["rule"] = "eval_accuracy (epoch_stop asynchronous)"
                run["intervals"], run["throughput"] = len(rates), by_evals
            else:
                run["rule"] = "epoch_stop"
                run["intervals"], run["throughput"] = len(intervals), by_epochs
    elif benchmark == "bert":
        rates = bert_intervals(path, events, batch, interval)
        run["intervals"] = len(rates)
        run["throughput"] = statistics.median(rates)
    else:
        raise LogError(f"{path}:1: error: submission_benchmark: expected resnet or bert, got "
                       f"{benchmark!r}")
    start = [e["time_ms"] for _, _, e in events if e["key"] == "run_start"]
    stop = [e["time_ms"] for _, _, e in events if e["key"] == "run_stop"]
    run["run_time_s"] = (stop[0] - start[0]) / 1000.0 if start and stop else None
    return run


def summarise(runs):
    """The job: median throughput and run time over the runs, which must agree on the setup."""
    first = runs[0]
    for r in runs[1:]:
        for key in ("benchmark", "global_batch_size", "platform"):
            if r[key] != first[key]:
                raise LogError(f"{r['file']}:1: error: {key}: {r[key]!r} differs from "
                               f"{first[key]!r} in {first['file']}")
    times = [r["run_time_s"] for r in runs if r["run_time_s"] is not None]
    return {"benchmark": first["benchmark"], "platform": first["platform"],
            "global_batch_size": first["global_batch_size"],
            "gradient_accumulation_steps": first["gradient_accumulation_steps"],
            "runs": len(runs),
            "throughput": statistics.median(r["throughput"] for r in runs),
            "run_time_s": statistics.median(times) if times else None,
            "per_run": runs}


def extract(path, text):
    """The lines the derivation reads, in log order."""
    return "".join(line + "\n" for _, line, e in read_events(path, text) if e["key"] in KEPT_KEYS)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="+", metavar="LOG")
    parser.add_argument("--eval-interval-samples", type=int, default=None,
                        help="bert logs whose eval_accuracy events do not count samples: the "
                             "recipe's EVAL_ITER_SAMPLES")
    parser.add_argument("--extract", action="store_true",
                        help="print the lines of one LOG that the derivation reads")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    try:
        if args.eval_interval_samples is not None and args.eval_interval_samples <= 0:
            raise LogError("--eval-interval-samples: expected a positive integer")
        texts = []
        for path in args.logs:
            try:
                with open(path, encoding="utf-8") as f:
                    texts.append((path, f.read()))
            except (OSError, UnicodeDecodeError) as e:
                raise LogError(f"{path}:1: error: cannot read: {e}") from None
        if args.extract:
            if len(texts) != 1:
                raise LogError("--extract: give exactly one LOG")
            sys.stdout.write(extract(*texts[0]))
            return 0
        job = summarise([analyse(p, t, args.eval_interval_samples) for p, t in texts])
    except LogError as e:
        print(e, file=sys.stderr)
        return 1
    if args.json:
        json.dump(job, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
        return 0
    unit = "images/s" if job["benchmark"] == "resnet" else "samples/s"
    for r in job["per_run"]:
        extra = f", rule {r['rule']}" if "rule" in r else ""
        run_time = "-" if r["run_time_s"] is None else f"{r['run_time_s']:.1f} s"
        print(f"{r['file']}: {r['throughput']:.1f} {unit} over {r['intervals']} intervals"
              f"{extra}, run time {run_time}")
    run_time = "-" if job["run_time_s"] is None else f"{job['run_time_s']:.1f} s"
    print(f"{job['benchmark']} {job['platform']}: global batch {job['global_batch_size']}, "
          f"median of {job['runs']} runs: {job['throughput']:.1f} {unit}, run time {run_time}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
