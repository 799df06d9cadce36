// shardscaler: entry point. Parses the command line and dispatches to the sub-command; a bad
// command line is one "shardscaler: error: ..." line and exit status 2.
#include <cstdio>
#include <exception>
#include <variant>

#include "shardscaler/app/run_options.h"
#include "shardscaler/app/service.h"
#include "shardscaler/base/log.h"
#include "shardscaler/telemetry/build_info.h"

namespace {

namespace base = shardscaler::base;
namespace app = shardscaler::app;
namespace telemetry = shardscaler::telemetry;

template <typename... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

int dispatch(const app::Command& command) {
  return std::visit(Overloaded{
                        [](const app::HelpCommand& help) {
                          std::fputs(help.text.c_str(), stdout);
                          return 0;
                        },
                        [](const app::VersionCommand&) {
                          const auto build = telemetry::buildInfo();
                          std::printf("shardscaler %s (commit %s)\n", build.version.c_str(),
                                      build.commit.c_str());
                          return 0;
                        },
                        [](const app::RunOptions& options) {
                          base::configureLogging(options.log_level, options.log_format);
                          return app::runService(options);
                        },
                        [](const app::PlanOptions& options) {
                          // The plan goes to stdout; only problems are logged, on stderr.
                          base::configureLogging(base::LogLevel::Warn, base::LogFormat::Text);
                          return app::runPlan(options);
                        },
                        [](const app::ReleaseOptions& options) {
                          // What was released goes to stdout; problems are logged, on stderr.
                          base::configureLogging(base::LogLevel::Warn, base::LogFormat::Text);
                          return app::runRelease(options);
                        },
                    },
                    command);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    auto command = app::parseCommandLine(argc, argv, app::OptionsEnvironment::fromProcess());
    if (!command) {
      std::fprintf(stderr, "shardscaler: error: %s\n", command.error().c_str());
      return 2;
    }
    return dispatch(*command);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shardscaler: error: %s\n", e.what());
    return 1;
  }
}
