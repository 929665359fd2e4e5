#!/usr/bin/env python3
"""Writes the small, format-faithful trace fixtures of tests/validation (run once; outputs are
committed). Expected metrics are worked out by hand in test_traces.cpp."""
import json

# Chrome trace: X and B/E events in microseconds, metadata names, two devices, three steps
# named "iteration N" on a host thread. Per steady step: compute [0,6] ms, comm [5,8] ms,
# memcpy [8,8.5] ms, step 10 ms.
ev = [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "gpu0"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "compute"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "nccl"}},
    {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "gpu1"}},
]
for k in range(3):
    b = k * 10000.0
    conv = 8000.0 if k == 0 else 4000.0  # warm-up step is slower
    ev += [
        {"ph": "X", "name": f"iteration {k + 1}", "cat": "step", "pid": 9, "tid": 9, "ts": b, "dur": 10000.0},
        {"ph": "X", "name": "conv2d_fprop", "cat": "Op", "pid": 1, "tid": 1, "ts": b, "dur": conv},
        {"ph": "B", "name": "relu_fwd", "cat": "Op", "pid": 1, "tid": 1, "ts": b + conv},
        {"ph": "E", "pid": 1, "tid": 1, "ts": b + 6000.0 if k else b + 8500.0},
        {"ph": "X", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "cat": "Op", "pid": 1, "tid": 2, "ts": b + 5000.0, "dur": 3000.0},
        {"ph": "X", "name": "Memcpy HtoD", "cat": "Op", "pid": 1, "tid": 3, "ts": b + 8000.0, "dur": 500.0},
        {"ph": "i", "name": "marker", "pid": 1, "tid": 1, "ts": b + 1.0, "s": "t"},
        {"ph": "C", "name": "mem", "pid": 1, "ts": b, "args": {"bytes": 5}},
        {"ph": "X", "name": "conv2d_fprop", "cat": "Op", "pid": 2, "tid": 1, "ts": b, "dur": 100.0},
    ]
json.dump({"traceEvents": ev, "displayTimeUnit": "ms"}, open("chrome_steps.json", "w"), indent=0)

# Kineto: absolute epoch microseconds, CPU ProfilerStep#N spans with GPU twins, cpu_op and
# cuda_runtime host events (never busy time), kernels on streams 7 and 20, a memcpy.
T0 = 1700000000000000.0
ev = []
for k in range(3):
    b = T0 + k * 20000.0
    ev += [
        {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{k + 2}", "pid": 4242, "tid": 4242, "ts": b, "dur": 15000.0},
        {"ph": "X", "cat": "gpu_user_annotation", "name": f"ProfilerStep#{k + 2}", "pid": 0, "tid": 7, "ts": b + 500.0, "dur": 18000.0},
        {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 4242, "tid": 4242, "ts": b + 10.0, "dur": 900.0},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 4242, "tid": 4242, "ts": b + 20.0, "dur": 50.0, "args": {"correlation": 1}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": b + 500.0, "dur": 1000.0, "args": {"device": 0, "stream": 7}},
        {"ph": "X", "cat": "kernel", "name": "void implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, true, false, true>", "pid": 0, "tid": 7, "ts": b + 1500.0, "dur": 8000.0, "args": {"device": 0, "stream": 7, "correlation": 2, "grid": [1, 2, 3]}},
        {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": b + 9500.0, "dur": 4000.0, "args": {"device": 0, "stream": 7}},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 20, "ts": b + 12500.0, "dur": 6000.0, "args": {"device": 0, "stream": 20, "Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 8, "dtype": "Float"}},
        {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": k, "pid": 0, "tid": 7, "ts": b + 1500.0, "bp": "e"},
    ]
json.dump({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Tesla V100-SXM2-16GB"}],
           "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
           "traceEvents": ev, "traceName": "rank0.pt.trace.json"},
          open("kineto_steps.json", "w"), indent=0)

# Horovod timeline: a bare array written incrementally and cut off (no closing bracket, a
# trailing comma). Tensor grad_a is reduced every 100 ms; grad_b only in the first two cycles.
lines = ['[', json.dumps({"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "horovod", "start_time_since_epoch_in_micros": 1690000000000000}}) + ",",
         json.dumps({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "allreduce.grad_a"}}) + ",",
         json.dumps({"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "allreduce.grad_b"}}) + ","]
def be(pid, name, t0, t1):
    return [json.dumps({"name": name, "ph": "B", "ts": t0, "pid": pid}) + ",", json.dumps({"ph": "E", "ts": t1, "pid": pid}) + ","]
for k in range(4):
    b = k * 100000
    lines += [json.dumps({"name": "NEGOTIATE_ALLREDUCE", "ph": "B", "ts": b, "pid": 1}) + ","]
    lines += [json.dumps({"name": "0", "ph": "X", "ts": b + 200, "pid": 1, "dur": 0}) + ","]
    lines += [json.dumps({"name": "1", "ph": "X", "ts": b + 900, "pid": 1, "dur": 0}) + ","]
    lines += [json.dumps({"ph": "E", "ts": b + 1000, "pid": 1}) + ","]
    lines += [json.dumps({"name": "ALLREDUCE", "ph": "B", "ts": b + 1000, "pid": 1}) + ","]
    lines += be(1, "QUEUE", b + 1000, b + 1500)
    lines += be(1, "MEMCPY_IN_FUSION_BUFFER", b + 1500, b + 2500)
    if k == 3:
        lines += [json.dumps({"name": "NCCL_ALLREDUCE", "ph": "B", "ts": b + 2500, "pid": 1}) + ","]
        break
    lines += be(1, "NCCL_ALLREDUCE", b + 2500, b + 12500)
    lines += be(1, "MEMCPY_OUT_FUSION_BUFFER", b + 12500, b + 13000)
    lines += [json.dumps({"ph": "E", "ts": b + 13000, "pid": 1}) + ","]
    if k < 2:
        lines += [json.dumps({"name": "ALLREDUCE", "ph": "B", "ts": b + 20000, "pid": 2}) + ","]
        lines += be(2, "NCCL_ALLREDUCE", b + 20000, b + 25000)
        lines += [json.dumps({"ph": "E", "ts": b + 25000, "pid": 2}) + ","]
open("horovod_truncated.json", "w").write("\n".join(lines) + "\n")

# scalecast's own trace.json (sim/outputs.cpp): pid = node, tid = gpu*3 + stream, cat = stream
# name, args.iteration; no step markers. Per iteration (10 ms apart): compute [0,5] ms,
# comm [4,7] ms, copy [7,7.5] ms.
ev = [{"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "node0000"}}]
for tid, stream in enumerate(["compute", "comm", "copy"]):
    ev.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": tid, "args": {"name": f"gpu0/{stream}"}})
for k in range(3):
    b = k * 10000.0
    ev += [
        {"name": "conv1.fwd", "cat": "compute", "ph": "X", "pid": 0, "tid": 0, "ts": b, "dur": 3000.0, "args": {"iteration": k, "tier": "exact"}},
        {"name": "fc.wgrad", "cat": "compute", "ph": "X", "pid": 0, "tid": 0, "ts": b + 3000.0, "dur": 2000.0, "args": {"iteration": k, "tier": "exact"}},
        {"name": "allreduce.bucket0", "cat": "comm", "ph": "X", "pid": 0, "tid": 1, "ts": b + 4000.0, "dur": 3000.0, "args": {"iteration": k, "bytes": 1e6}},
        {"name": "h2d.input", "cat": "copy", "ph": "X", "pid": 0, "tid": 2, "ts": b + 7000.0, "dur": 500.0, "args": {"iteration": k}},
    ]
json.dump({"displayTimeUnit": "ns", "traceEvents": ev}, open("scalecast_trace.json", "w"))
