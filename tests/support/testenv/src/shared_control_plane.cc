#include <gtest/gtest.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "shardscaler/testenv/control_plane.h"

namespace shardscaler::testenv {
namespace {

struct SharedState {
  std::unique_ptr<ControlPlane> plane;
  std::optional<std::string> start_error;
  ControlPlaneOptions options;
  bool environment_registered = false;
};

// A function-local static: if no TearDown runs (exit() in a test), its destructor still stops
// the servers at exit; a SIGKILL is covered by PR_SET_PDEATHSIG.
SharedState& shared() {
  static SharedState state;
  return state;
}

bool keepRequested() {
  const char* keep = std::getenv("SHARDSCALER_TESTENV_KEEP");
  return keep && std::string(keep) == "1";
}

class SharedControlPlaneEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    auto& state = shared();
    if (!state.plane) return;
    if (keepRequested() || ::testing::UnitTest::GetInstance()->Failed()) {
      state.plane->keepWorkDir();
    }
    state.plane.reset();
  }
};

}  // namespace

ControlPlane& sharedControlPlane() {
  auto& state = shared();
  if (state.plane) return *state.plane;
  if (state.start_error) throw std::runtime_error(*state.start_error);
  if (!state.environment_registered) {
    // GoogleTest owns the environment; environments added during the run are torn down too.
    ::testing::AddGlobalTestEnvironment(new SharedControlPlaneEnvironment);
    state.environment_registered = true;
  }
  try {
    state.plane = std::make_unique<ControlPlane>(state.options);
  } catch (const std::exception& e) {
    state.start_error = e.what();
    throw;
  }
  if (keepRequested()) state.plane->keepWorkDir();
  std::cerr << "testenv: control plane at " << state.plane->server() << ", kubeconfig "
            << state.plane->kubeconfigPath() << std::endl;
  return *state.plane;
}

void setSharedControlPlaneOptions(ControlPlaneOptions options) {
  auto& state = shared();
  if (state.plane || state.start_error) {
    throw std::logic_error("setSharedControlPlaneOptions after the shared control plane started");
  }
  state.options = std::move(options);
}

}  // namespace shardscaler::testenv
