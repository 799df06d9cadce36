// shardscaler: entry point. Parses the command line and dispatches to the sub-command; a bad
// command line is one "shardscaler: error: ..." line and exit status 2.
#include <cstdio>
#include <exception>
#include <variant>

#include "shardscaler/scaler/logging.h"
#include "shardscaler/scaler/run_options.h"
#include "shardscaler/scaler/service.h"

namespace {

namespace scaler = shardscaler::scaler;

template <typename... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

int dispatch(const scaler::Command& command) {
  return std::visit(Overloaded{
                        [](const scaler::HelpCommand& help) {
                          std::fputs(help.text.c_str(), stdout);
                          return 0;
                        },
                        [](const scaler::VersionCommand&) {
                          const auto build = scaler::buildInfo();
                          std::printf("shardscaler %s (commit %s)\n", build.version.c_str(),
                                      build.commit.c_str());
                          return 0;
                        },
                        [](const scaler::RunOptions& options) {
                          scaler::configureLogging(options.log_level, options.log_format);
                          return scaler::runService(options);
                        },
                        [](const scaler::PlanOptions& options) {
                          // The plan goes to stdout; only problems are logged, on stderr.
                          scaler::configureLogging(scaler::LogLevel::Warn, scaler::LogFormat::Text);
                          return scaler::runPlan(options);
                        },
                    },
                    command);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    auto command = scaler::parseCommandLine(argc, argv, scaler::OptionsEnvironment::fromProcess());
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
