#pragma once
// Progress reporting that behaves under batch systems: a one-line "\r" bar with an ETA when
// stderr is a terminal, otherwise a plain log line at most every `log_interval_s` seconds
// (Slurm sends stderr to a file, where escape codes are garbage).

#include <chrono>
#include <cstddef>
#include <string>

namespace scalecast::common {

class Progress {
 public:
  Progress(std::string label, std::size_t total, double log_interval_s = 10.0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::size_t n = 1, const std::string& detail = "");
  void finish();

 private:
  void draw(const std::string& detail);

  std::string label_;
  std::size_t total_;
  std::size_t done_ = 0;
  double log_interval_s_;
  bool tty_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_log_;
};

}  // namespace scalecast::common
