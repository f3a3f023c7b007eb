// tests/cli: scripts/fa_attach_baseline.py's file editing (fake measurement, no torch or GPU needed), run
// through its Python unittest file tests/scripts/test_fa_attach_baseline.py; skipped without python3.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

TEST(FaAttachBaseline, PythonUnitTestsPass) {
  if (std::system("python3 -c 'import json, unittest' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  const std::string test = std::string(XS_TEST_DATA_DIR) + "/../scripts/test_fa_attach_baseline.py";
  FILE* pipe = ::popen(("python3 '" + test + "' 2>&1").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  const int status = ::pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_NE(out.find("OK"), std::string::npos) << out;
}

}  // namespace
