// One doctest main for every test executable. Test suites name the ctest label of their cases:
// "unit", "golden", "validation", "gpu" or "slow" (see cmake/ScalecastTargets.cmake).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
