#!/usr/bin/env python3
"""validation/tools/mlperf_throughput.py: the MLPerf Training throughput derivation (FORMAT.md §7).

Run from the repository root: python3 -m unittest tests/validation/test_mlperf_throughput.py
(ctest: validation.mlperf_throughput, label unit). Fixtures in tests/validation/data/mlperf/
are excerpts written by the script's --extract from NVIDIA's result logs (mlcommons
training_results_v1.1 and v2.0); the synthetic logs below have answers known by construction.
"""

import contextlib
import io
import json
import os
import re
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "validation", "tools"))
import mlperf_throughput as mt  # noqa: E402

DATA = os.path.join(ROOT, "tests", "validation", "data", "mlperf")
IMAGES = 1281167


def mllog(key, time_ms, value=None, **metadata):
    return ":::MLLOG " + json.dumps({"namespace": "", "time_ms": time_ms,
                                     "event_type": "POINT_IN_TIME", "key": key,
                                     "value": value, "metadata": metadata})


def header(benchmark, batch, platform="1xTEST"):
    return [mllog("submission_benchmark", 0, benchmark),
            mllog("submission_platform", 0, platform),
            mllog("global_batch_size", 0, batch)]


def run_main(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = mt.main(list(args))
    return rc, out.getvalue(), err.getvalue()


def public_throughput(point_id):
    """measured.throughput of a point of validation/mlperf-scale.yaml (the text, no YAML library)."""
    with open(os.path.join(ROOT, "validation", "mlperf-scale.yaml"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'- id: "' + re.escape(point_id) + r'"\n(?:    .*\n)*?      throughput: (\S+)',
                  text)
    if m is None:
        raise AssertionError(f"{point_id} has no throughput in mlperf-scale.yaml")
    return float(m.group(1))


class TempLogs(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, lines):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        return path


class Synthetic(TempLogs):
    def test_resnet_median_epoch_interval(self):
        # Epochs of 10 s; the evaluation after epochs 2 and 4 takes 0.1 s, so the intervals are
        # 10, 10.1, 10, 10.1 s (median 10.05 s), and the evaluations are 20.1 s apart.
        lines = header("resnet", 3264)
        for epoch, t in [(1, 0), (2, 10000), (3, 20100), (4, 30100), (5, 40200)]:
            lines.append(mllog("epoch_stop", t, epoch_num=epoch))
        lines += [mllog("eval_accuracy", 10100, 0.1, epoch_num=2),
                  mllog("eval_accuracy", 30200, 0.2, epoch_num=4)]
        run = mt.analyse("r.txt", "\n".join(lines))
        self.assertEqual(run["rule"], "epoch_stop")
        self.assertAlmostEqual(run["throughput"], IMAGES / 10.05, places=6)
        self.assertAlmostEqual(run["eval_interval_throughput"], 2 * IMAGES / 20.1, places=6)
        self.assertEqual(run["intervals"], 4)

    def test_resnet_asynchronous_epoch_stop_uses_evaluations(self):
        # The host logs epoch_stop 0.1 s apart, but evaluations (which wait for the GPUs) come
        # every 4 epochs, 2 s apart: 4 * 1,281,167 images / 2 s.
        lines = header("resnet", 65536)
        t = 0
        for block in range(3):
            for i in range(4):
                lines.append(mllog("epoch_stop", t + 100 * i, epoch_num=4 * block + i + 1))
            lines.append(mllog("eval_accuracy", t + 2000, 0.1, epoch_num=4 * block + 4))
            t += 2000
        run = mt.analyse("a.txt", "\n".join(lines))
        self.assertEqual(run["rule"], "eval_accuracy (epoch_stop asynchronous)")
        self.assertAlmostEqual(run["throughput"], 4 * IMAGES / 2.0, places=6)

    def test_bert_samples_between_evaluations(self):
        # 2,000 samples in 1 s, then 2,000 in 1.5 s, then 3,000 in 1 s: median 2,000/s.
        lines = header("bert", 448)
        for samples, t in [(1000, 0), (3000, 1000), (5000, 2500), (8000, 3500)]:
            lines.append(mllog("eval_accuracy", t, 0.5, epoch_num=samples))
        run = mt.analyse("b.txt", "\n".join(lines))
        self.assertAlmostEqual(run["throughput"], 2000.0, places=6)

    def test_bert_recipe_interval(self):
        # Interval 1,000 samples, batch 448: evaluations after steps 3, 5, 7 (1,344, 2,240,
        # 3,136 samples), 1 s apart: median (896 + 896) / 2 per second.
        lines = header("bert", 448)
        for t in (0, 1000, 2000):
            lines.append(mllog("eval_accuracy", t, 0.5, epoch_num=1))
        lines.append(mllog("train_samples", 2000, 3136))
        run = mt.analyse("b.txt", "\n".join(lines), interval=1000)
        self.assertAlmostEqual(run["throughput"], 896.0, places=6)
        with self.assertRaisesRegex(mt.LogError, r"^b.txt:7: error: train_samples: 3136 "
                                                 r"trained, but 3 evaluations every 700 "
                                                 r"samples end at 2240"):
            mt.analyse("b.txt", "\n".join(lines), interval=700)

    def test_median_over_runs(self):
        paths = []
        for i, interval_ms in enumerate((10000, 12000, 11000)):
            lines = header("resnet", 3264)
            lines += [mllog("epoch_stop", 0, epoch_num=1),
                      mllog("epoch_stop", interval_ms, epoch_num=2)]
            paths.append(self.write(f"result_{i}.txt", lines))
        rc, out, err = run_main("--json", *paths)
        self.assertEqual((rc, err), (0, ""))
        job = json.loads(out)
        self.assertEqual(job["runs"], 3)
        self.assertAlmostEqual(job["throughput"], IMAGES / 11.0, places=6)


class Errors(TempLogs):
    def check_error(self, lines, expected, *extra):
        path = self.write("result_0.txt", lines)
        rc, out, err = run_main(*extra, path)
        self.assertEqual(rc, 1)
        self.assertEqual(out, "")
        self.assertEqual(err.strip(), expected.replace("FILE", path))

    def test_broken_json_line(self):
        lines = header("resnet", 3264) + [':::MLLOG {"key": "epoch_stop", "time_ms": 1,']
        self.check_error(lines, "FILE:4: error: invalid MLLOG JSON: Expecting property name "
                                "enclosed in double quotes at column 45")

    def test_not_a_result_log(self):
        self.check_error(["hello"], "FILE:1: error: no ':::MLLOG' lines; is this an MLPerf "
                                    "result log?")

    def test_missing_global_batch(self):
        lines = [mllog("submission_benchmark", 0, "resnet")]
        self.check_error(lines, "FILE:1: error: global_batch_size: not in the log")

    def test_non_positive_global_batch(self):
        lines = [mllog("submission_benchmark", 0, "resnet"), mllog("global_batch_size", 0, 0)]
        self.check_error(lines, "FILE:2: error: global_batch_size: expected a positive "
                                "integer, got 0")

    def test_other_benchmark(self):
        self.check_error(header("ssd", 1024), "FILE:1: error: submission_benchmark: expected "
                                              "resnet or bert, got 'ssd'")

    def test_single_epoch(self):
        lines = header("resnet", 3264) + [mllog("epoch_stop", 5, epoch_num=1)]
        self.check_error(lines, "FILE:1: error: epoch_stop: fewer than two consecutive epochs "
                                "logged")

    def test_bert_needs_interval_when_epoch_num_is_not_samples(self):
        lines = header("bert", 448) + [mllog("eval_accuracy", t, 0.5, epoch_num=1)
                                       for t in (0, 1000)]
        self.check_error(lines, "FILE:4: error: eval_accuracy: metadata.epoch_num does not "
                                "count samples (got [1, 1]...); give the recipe's evaluation "
                                "interval with --eval-interval-samples")

    def test_runs_of_different_jobs(self):
        a = self.write("a.txt", header("resnet", 3264) +
                       [mllog("epoch_stop", 0, epoch_num=1), mllog("epoch_stop", 9, epoch_num=2)])
        b = self.write("b.txt", header("resnet", 6528) +
                       [mllog("epoch_stop", 0, epoch_num=1), mllog("epoch_stop", 9, epoch_num=2)])
        rc, _, err = run_main(a, b)
        self.assertEqual(rc, 1)
        self.assertEqual(err.strip(), f"{b}:1: error: global_batch_size: 6528 differs from "
                                      f"3264 in {a}")


class NvidiaExcerpts(unittest.TestCase):
    def fixture(self, name):
        path = os.path.join(DATA, name)
        with open(path, encoding="utf-8") as f:
            return path, f.read()

    def test_v11_one_node_resnet_is_the_public_anchor(self):
        runs = [mt.analyse(*self.fixture(f"v1.1_dgxa100_ngc21.09_mxnet_resnet_result_{i}.txt"))
                for i in range(5)]
        self.assertEqual({r["rule"] for r in runs}, {"epoch_stop"})
        job = mt.summarise(runs)
        self.assertEqual(job["global_batch_size"], 3264)  # 8 GPUs x 408
        self.assertEqual(round(job["throughput"]), public_throughput("MT11-R.n1"))

    def test_v20_527_nodes_resnet_logs_epoch_stop_ahead_of_the_gpus(self):
        path, text = self.fixture("v2.0_dgxa100_n527_ngc22.04_mxnet_resnet_result_0.txt")
        run = mt.analyse(path, text)
        self.assertEqual(run["rule"], "eval_accuracy (epoch_stop asynchronous)")
        self.assertGreater(IMAGES / run["median_interval_s"], 5 * run["throughput"])
        self.assertEqual(run["global_batch_size"], 67456)  # 4,216 GPUs x 16
        self.assertAlmostEqual(run["throughput"], 6137326.9, delta=0.1)

    def test_v11_540_nodes_bert_with_the_recipe_interval(self):
        path, text = self.fixture("v1.1_dgxa100_n540_ngc21.09_pytorch_bert_result_0.txt")
        run = mt.analyse(path, text, interval=275000)  # config_DGXA100_540x8x3x1_new.sh
        self.assertAlmostEqual(run["throughput"], 357634.7, delta=0.1)
        with self.assertRaisesRegex(mt.LogError, "wrong --eval-interval-samples"):
            mt.analyse(path, text, interval=175000)

    def test_v20_512_nodes_bert_counts_samples(self):
        path, text = self.fixture("v2.0_dgxa100_n512_ngc22.04_pytorch_bert_result_0.txt")
        run = mt.analyse(path, text)
        self.assertAlmostEqual(run["throughput"], 466000.7, delta=0.1)
        self.assertEqual(run["gradient_accumulation_steps"], 1)
        with self.assertRaisesRegex(mt.LogError, "do not give --eval-interval-samples"):
            mt.analyse(path, text, interval=325000)

    def test_extract_keeps_what_the_derivation_reads(self):
        path, text = self.fixture("v2.0_dgxa100_n512_ngc22.04_pytorch_bert_result_0.txt")
        excerpt = mt.extract(path, text)
        self.assertEqual(excerpt, text)  # the fixture is an excerpt: extracting is idempotent
        noisy = text + mllog("weights_initialization", 1, None, tensor="w") + "\nplain text\n"
        self.assertEqual(mt.extract(path, noisy), text)


if __name__ == "__main__":
    unittest.main()
