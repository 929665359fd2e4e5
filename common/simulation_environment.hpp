#pragma once
// The environment of the processes that simulate (the CLI's point processes and validate's
// simulation servers): the caller's, with glibc's malloc asked to back the heap with transparent
// huge pages (GLIBC_TUNABLES glibc.malloc.hugetlb=1; glibc 2.35 and later, Debian 12 has 2.36).
//
// Why: a machine-scale point builds hundreds of thousands of SimGrid links, hosts and actors, a
// gigabyte of small objects, and on 4 KiB pages its time went to page faults and TLB misses
// (perf, 100,002 GPUs wave: 25 % in page faults). With huge pages the same run takes 1.2-1.5 s
// less (6.2-6.5 s -> 5.0-5.1 s; full Summit 2.15 -> 1.86 s; bench/README.md), with 0.5 % more
// peak memory, and a small run 2 MB more. Simulated results do not depend on it.
//
// glibc reads GLIBC_TUNABLES only when a process starts, so the setting goes into the
// environment of the processes scalecast starts. A caller who set glibc.malloc.hugetlb
// themselves (0 turns it off) keeps their value. Where the kernel's transparent huge pages are
// "never", the request changes nothing.

#include <spawn.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace scalecast::common {

// `env` (a null-terminated environ-style array) with GLIBC_TUNABLES amended as above.
std::vector<std::string> simulation_environment(const char* const* env);

// posix_spawn of `exe` with the process's environment amended as above: how the point runner and
// validate's simulation server start simulating processes. Returns posix_spawn's result.
int spawn_simulation(pid_t* pid, const std::string& exe, const posix_spawn_file_actions_t* actions,
                     char* const argv[]);

// True when this process runs with the setting (GLIBC_TUNABLES names glibc.malloc.hugetlb, with
// any value). The benchmarks, which simulate in their own process, say so when it is missing, as
// they then measure something else than a point process does; bench/run_benchmarks.sh sets it.
// (They do not re-execute themselves with it: under valgrind, /proc/self/exe is valgrind.)
bool has_simulation_environment();

}  // namespace scalecast::common
