#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "shardscaler/test_kit/eventually.h"
#include "shardscaler/test_kit/temp_dir.h"

namespace shardscaler::test_kit {
namespace {

using namespace std::chrono_literals;

TEST(Eventually, ReturnsTrueOnceTheConditionHolds) {
  int calls = 0;
  EXPECT_TRUE(eventually(5s, 1ms, [&] { return ++calls == 3; }));
  EXPECT_EQ(calls, 3);
}

TEST(Eventually, GivesUpAfterTheTimeoutAndChecksOnceMoreAtTheEnd) {
  int calls = 0;
  EXPECT_FALSE(eventually(20ms, [&] {
    ++calls;
    return false;
  }));
  EXPECT_GE(calls, 2);
}

TEST(Eventually, KeepsWhatTheLastTrySawOnFailure) {
  int calls = 0;
  std::string last;
  EXPECT_FALSE(eventually(
      20ms, 1ms,
      [&](std::string* state) {
        *state = "try " + std::to_string(++calls);
        return false;
      },
      &last));
  EXPECT_EQ(last, "try " + std::to_string(calls));
}

TEST(Eventually, LeavesLastStateAloneOnSuccess) {
  std::string last = "untouched";
  EXPECT_TRUE(eventually(
      1s,
      [](std::string* state) {
        *state = "seen";
        return true;
      },
      &last));
  EXPECT_EQ(last, "untouched");
}

TEST(TempDir, CreatesAPrivateDirectoryWithThePrefixAndRemovesItWithItsContents) {
  std::filesystem::path where;
  {
    TempDir dir("kit-test-");
    where = dir.path();
    EXPECT_TRUE(std::filesystem::is_directory(where));
    EXPECT_TRUE(where.filename().string().starts_with("kit-test-"));
    auto perms = std::filesystem::status(where).permissions();
    EXPECT_EQ(perms & std::filesystem::perms::all, std::filesystem::perms::owner_all);
    auto file = dir.write("sub/a.txt", "hello");
    std::ifstream in(file);
    std::string text;
    std::getline(in, text);
    EXPECT_EQ(text, "hello");
  }
  EXPECT_FALSE(std::filesystem::exists(where));
}

TEST(TempDir, KeepLeavesTheDirectory) {
  std::filesystem::path where;
  {
    TempDir dir("kit-keep-");
    where = dir.path();
    dir.keep();
  }
  EXPECT_TRUE(std::filesystem::exists(where));
  std::filesystem::remove_all(where);
}

TEST(TempDir, AMovedFromDirectoryRemovesNothing) {
  TempDir first("kit-move-");
  auto where = first.path();
  {
    TempDir second(std::move(first));
    EXPECT_EQ(second.path(), where);
  }
  EXPECT_FALSE(std::filesystem::exists(where));
}

TEST(TempDir, NamesThePatternWhenItCannotCreate) {
  try {
    TempDir dir("x-", "/proc/no-such-dir-for-kit");
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-dir-for-kit"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace shardscaler::test_kit
