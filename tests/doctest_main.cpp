// One doctest main for every test executable. Test suites name the ctest label of their cases:
// "unit", "golden", "validation", "gpu" or "slow" (see cmake/ScalecastTargets.cmake).
//
// A run filtered by test case name (`--test-case=`, as every ctest entry runs) that matches no
// test case fails: doctest itself exits 0 then, so a ctest entry whose name no longer matches its
// test case (a renamed case, a name the discovery cut) would pass without testing anything.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

namespace {

bool run_ended = false;
unsigned cases_matched = 0;

// A listener that only keeps the count of test cases that passed the filters.
struct RunCounter : doctest::IReporter {
  explicit RunCounter(const doctest::ContextOptions& /*options*/) {}
  void report_query(const doctest::QueryData& /*data*/) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    run_ended = true;
    cases_matched = stats.numTestCasesPassingFilters;
  }
  void test_case_start(const doctest::TestCaseData& /*data*/) override {}
  void test_case_reenter(const doctest::TestCaseData& /*data*/) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& /*stats*/) override {}
  void test_case_exception(const doctest::TestCaseException& /*e*/) override {}
  void subcase_start(const doctest::SubcaseSignature& /*signature*/) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& /*data*/) override {}
  void log_message(const doctest::MessageData& /*data*/) override {}
  void test_case_skipped(const doctest::TestCaseData& /*data*/) override {}
};

REGISTER_LISTENER("scalecast_run_counter", 1, RunCounter);

bool filters_by_name(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    for (const char* option : {"--test-case=", "-tc=", "--dt-test-case=", "--dt-tc="})
      if (std::strncmp(argv[i], option, std::strlen(option)) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;  // --help, --list-test-cases and other queries
  if (rc == 0 && run_ended && cases_matched == 0 && filters_by_name(argc, argv)) {
    std::fprintf(stderr, "no test case matches the --test-case filter: nothing was tested\n");
    return 1;
  }
  return rc;
}
