#pragma once
// The recorder keeps what the replay did: the activities of the traced ranks on their three
// streams (compute, communication, copy), iteration boundaries, and bytes moved per link class.
// From the job's first rank it derives the metrics: iteration time, and the breakdown of each
// iteration into compute, exposed communication (communication while the compute stream is
// idle), I/O stall, exposed host-device copies and idle time, which add up to the iteration.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/step_program.hpp"

namespace scalecast::sim {

struct Interval {
  int rank = 0;  // job-local rank (node-major: node * gpus_per_node + local GPU)
  Stream stream = Stream::kCompute;
  int iteration = 0;
  double start_s = 0.0, end_s = 0.0;
  std::string name;
  std::string tier;  // cost-model tier for compute ops, "" otherwise
  double bytes = 0.0;
};

// The tier of the compute-stream interval that stands for the fixed per-iteration host time
// (StepProgram::fixed_per_iteration_s).
inline constexpr const char* kFixedTier = "fixed";

struct Breakdown {
  double compute_s = 0.0;
  double fixed_s = 0.0;  // fixed per-iteration host time (synchronisation, data hand-off)
  double exposed_comm_s = 0.0;
  double io_stall_s = 0.0;
  double copy_s = 0.0;
  double idle_s = 0.0;
};

struct IterationRecord {
  int iteration = 0;
  double start_s = 0.0, end_s = 0.0;
  Breakdown breakdown;
  double comm_total_s = 0.0;  // all communication-stream time, hidden or not
  int buckets = 0;
};

// Link classes for "bytes moved": within a node (NVLink/X-Bus/PCIe between GPUs), between nodes
// (NIC rails and the fabric), host to device (input copies).
// Storage: bytes read by the input pipeline (NVMe or parallel file system); listed in
// bytes_per_iteration() only when a run read any.
enum class LinkClass { kIntraNode = 0, kInterNode = 1, kHostDevice = 2, kStorage = 3 };
const char* to_string(LinkClass c);

class Recorder {
 public:
  Recorder(int warmup, int iterations) : warmup_(warmup), iterations_(iterations) {}

  void add(Interval interval) { intervals_.push_back(std::move(interval)); }
  // Bytes put on the wire; `multiplicity` counts symmetric copies simulated once.
  void add_bytes(LinkClass c, double bytes, double multiplicity = 1.0);
  void mark_iteration(int iteration, double start_s, double end_s, int buckets);
  // Time a rank's compute stream waited for its input batch (the I/O stall).
  void add_stall(int rank, double start_s, double end_s) {
    stalls_.push_back({rank, start_s, end_s});
  }

  // Breakdown of rank 0's measured iterations (after warm-up).
  std::vector<IterationRecord> iterations() const;
  const std::vector<Interval>& intervals() const { return intervals_; }
  // Bytes per link class per iteration.
  std::map<std::string, double> bytes_per_iteration() const;
  int warmup() const { return warmup_; }
  int iterations_measured() const { return iterations_; }

 private:
  int warmup_;
  int iterations_;
  std::vector<Interval> intervals_;
  double bytes_[4] = {0.0, 0.0, 0.0, 0.0};
  struct Stall {
    int rank;
    double start_s, end_s;
  };
  std::vector<Stall> stalls_;
  struct Mark {
    int iteration;
    double start_s, end_s;
    int buckets;
  };
  std::vector<Mark> marks_;
};

}  // namespace scalecast::sim
