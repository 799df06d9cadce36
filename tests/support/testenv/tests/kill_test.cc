// The servers of a control plane must die with the process that started them, however it ends:
// SIGKILL (as CTest's timeout does), SIGTERM, SIGINT, or kube-testenv's own clean shutdown.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "shardscaler/test_kit/eventually.h"
#include "shardscaler/testenv/control_plane.h"
#include "shardscaler/testenv/process_table.h"

namespace shardscaler::testenv {
namespace {

// The waits look every 100 ms, as they did before the kit.
constexpr std::chrono::milliseconds kWaitPoll{100};

using ::testing::IsEmpty;
using ::testing::SizeIs;
using namespace std::chrono_literals;

constexpr auto kStartBound = 240s;  // the control plane's own 180 s, plus slack on a busy machine
constexpr auto kDeathBound = 15s;

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class KillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "testenv-kill-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    scratch_ = pattern;
  }
  void TearDown() override {
    if (owner_ > 0) {
      kill(owner_, SIGKILL);
      waitpid(owner_, nullptr, 0);
    }
    if (!HasFailure()) std::filesystem::remove_all(scratch_);
  }

  // Waits until the owner wrote its ready file or died; returns false if neither in time.
  bool waitForOwnerReady(const std::filesystem::path& ready_file) {
    bool exited = false;
    bool ready = test_kit::eventually(kStartBound, kWaitPoll, [&] {
      if (std::filesystem::exists(ready_file)) return true;
      int status = 0;
      exited = waitpid(owner_, &status, WNOHANG) == owner_;
      if (exited) owner_ = -1;
      return exited;
    });
    return ready && !exited;
  }

  void killOwnerAndExpectServersGone(int sig, const std::filesystem::path& work_dir) {
    const std::string needle = work_dir.string() + "/";
    ASSERT_THAT(processesMentioning(needle), SizeIs(3))
        << "etcd, kube-apiserver, controller-manager";
    ASSERT_EQ(kill(owner_, sig), 0) << strerror(errno);
    int status = 0;
    ASSERT_EQ(waitpid(owner_, &status, 0), owner_);
    owner_ = -1;
    EXPECT_TRUE(test_kit::eventually(kDeathBound, kWaitPoll,
                                     [&] { return processesMentioning(needle).empty(); }))
        << "still running after " << strsignal(sig)
        << " of their owner: " << ::testing::PrintToString(processesMentioning(needle));
  }

  std::filesystem::path scratch_;
  pid_t owner_ = -1;
};

class OwnerKilledTest : public KillTest, public ::testing::WithParamInterface<int> {};

// A forked copy of this test process starts a control plane and is then killed by a signal it
// does not handle; PR_SET_PDEATHSIG must take the servers down with it.
TEST_P(OwnerKilledTest, ServersDieWithTheirOwner) {
  const int sig = GetParam();
  const auto work_dir = scratch_ / "plane";
  const auto ready_file = scratch_ / "ready";
  const auto error_file = scratch_ / "error";
  owner_ = fork();
  ASSERT_GE(owner_, 0) << strerror(errno);
  if (owner_ == 0) {
    // The child never returns into GoogleTest.
    try {
      ControlPlaneOptions options;
      options.work_dir = work_dir;
      ControlPlane plane(std::move(options));
      std::ofstream(ready_file) << "ready\n";
      while (true) pause();
    } catch (const std::exception& e) {
      std::ofstream(error_file) << e.what();
    }
    _exit(1);
  }
  ASSERT_TRUE(waitForOwnerReady(ready_file)) << readFile(error_file);
  killOwnerAndExpectServersGone(sig, work_dir);
}

INSTANTIATE_TEST_SUITE_P(Signals, OwnerKilledTest, ::testing::Values(SIGKILL, SIGTERM, SIGINT),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(sigabbrev_np(info.param));
                         });

pid_t spawnKubeTestenv(const std::filesystem::path& work_dir, const std::filesystem::path& ready,
                       const std::filesystem::path& log) {
  pid_t pid = fork();
  if (pid == 0) {
    FILE* out = std::freopen(log.c_str(), "w", stdout);
    if (out) dup2(fileno(stdout), 2);
    execl(KUBE_TESTENV_BINARY, KUBE_TESTENV_BINARY, "up", "--dir", work_dir.c_str(), "--ready-file",
          ready.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// kube-testenv handles SIGTERM itself: it stops the servers, removes the ready file and exits 0,
// and the env file it wrote is enough for kubectl.
TEST_F(KillTest, KubeTestenvStopsEverythingOnSigterm) {
  const auto work_dir = scratch_ / "plane";
  const auto ready_file = scratch_ / "ready";
  const auto log = scratch_ / "kube-testenv.log";
  owner_ = spawnKubeTestenv(work_dir, ready_file, log);
  ASSERT_GT(owner_, 0);
  ASSERT_TRUE(waitForOwnerReady(ready_file)) << readFile(log);
  EXPECT_EQ(readFile(ready_file), (work_dir / "admin.kubeconfig").string() + "\n");
  EXPECT_THAT(readFile(log), ::testing::HasSubstr("get ns"));

  const std::string kubectl =
      std::getenv("SHARDSCALER_KUBECTL") ? std::getenv("SHARDSCALER_KUBECTL") : "/usr/bin/kubectl";
  const std::string command = ". '" + (work_dir / "testenv.env").string() + "' && " + kubectl +
                              " --cache-dir '" + (scratch_ / "cache").string() +
                              "' get ns kube-system -o name >/dev/null";
  EXPECT_EQ(std::system(("/bin/sh -c \"" + command + "\"").c_str()), 0);

  const std::string needle = work_dir.string() + "/";
  ASSERT_THAT(processesMentioning(needle), SizeIs(3));
  ASSERT_EQ(kill(owner_, SIGTERM), 0);
  int status = -1;
  EXPECT_TRUE(test_kit::eventually(30s, kWaitPoll, [&] {
    return waitpid(owner_, &status, WNOHANG) == owner_;
  })) << readFile(log);
  owner_ = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << readFile(log);
  // A clean stop reaps the servers before exiting: nothing to wait for.
  EXPECT_THAT(processesMentioning(needle), IsEmpty());
  EXPECT_FALSE(std::filesystem::exists(ready_file));
  EXPECT_FALSE(std::filesystem::exists(work_dir / "etcd-data"));
  EXPECT_TRUE(std::filesystem::exists(work_dir / "logs" / "kube-apiserver.log"));
}

}  // namespace
}  // namespace shardscaler::testenv

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
