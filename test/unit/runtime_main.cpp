// main() of kiln_unit_tests. With KILN_UNIT_PRINT_LOG_MASK set it only
// prints the log mask the runtime parsed from KILN_LOGS at load time (the
// Logs test runs this binary that way).
#include <kiln/stats.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
  if (std::getenv("KILN_UNIT_PRINT_LOG_MASK")) {
    std::printf("log_mask=%u\n", kiln::rt::g_log_mask);
    return 0;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
