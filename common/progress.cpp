#include "common/progress.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <cstdio>

namespace scalecast::common {
namespace {

std::string format_eta(double seconds) {
  if (seconds < 0) return "?";
  const auto s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace

Progress::Progress(std::string label, std::size_t total, double log_interval_s)
    : label_(std::move(label)),
      total_(total),
      log_interval_s_(log_interval_s),
      tty_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_log_(start_) {}

Progress::~Progress() { finish(); }

void Progress::advance(std::size_t n, const std::string& detail) {
  done_ += n;
  draw(detail);
}

void Progress::draw(const std::string& detail) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta = done_ > 0 ? elapsed * static_cast<double>(total_ - std::min(done_, total_)) /
                                     static_cast<double>(done_)
                               : -1.0;
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = total_ ? static_cast<int>(kWidth * std::min(done_, total_) / total_) : 0;
    std::fprintf(stderr, "\r%s [%s%s] %zu/%zu eta %s %-30.30s", label_.c_str(),
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(kWidth - filled), ' ').c_str(), done_, total_,
                 format_eta(eta).c_str(), detail.c_str());
    std::fflush(stderr);
  } else if (std::chrono::duration<double>(now - last_log_).count() >= log_interval_s_ ||
             done_ == total_) {
    last_log_ = now;
    spdlog::info("[progress] {} {}/{} wall={} eta={} {}", label_, done_, total_,
                 format_eta(elapsed), format_eta(eta), detail);
  }
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (tty_) std::fprintf(stderr, "\n");
}

}  // namespace scalecast::common
