// shardscaler's command line on CLI11: the commands, their flags from the option tables
// (option_spec.h), --help, and one error line per bad input, each naming the flag and the problem.
#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <sstream>

#include "config_file.h"
#include "option_spec.h"
#include "shardscaler/app/run_options.h"
#include "shardscaler/base/expected.h"

namespace shardscaler::app {
namespace {

using namespace detail;

constexpr std::string_view kCommands = "run, plan, release or version";

const std::vector<std::string>& commandNames() {
  static const std::vector<std::string> names = {"run", "plan", "release", "version"};
  return names;
}

class HelpFormatter : public CLI::Formatter {
 public:
  // "-h, --help" as pflag prints it (CLI11 joins the names with a bare comma).
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string names = CLI::Formatter::make_option_name(opt, is_positional);
    for (size_t at = names.find(','); at != std::string::npos; at = names.find(',', at + 2)) {
      names.insert(at + 1, " ");
    }
    return names;
  }
  // A command's description is a summary line, a blank line and its help's text: the list of
  // commands shows the summary, the command's own help the rest.
  std::string make_description(const CLI::App* app) const override {
    const std::string& description = app->get_description();
    const size_t blank = description.find("\n\n");
    return (blank == std::string::npos ? description : description.substr(blank + 2)) + "\n";
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    const std::string& description = sub->get_description();
    CLI::detail::format_help(out, sub->get_name(), description.substr(0, description.find('\n')),
                             column_width_);
    return out.str();
  }
};

template <typename Options>
std::string helpLine(const OptionSpec<Options>& spec) {
  const std::string dflt = spec.default_text == "required"
                               ? " (required)"
                               : " (default: " + std::string(spec.default_text) + ")";
  return std::string(spec.help) + dflt;
}

// Checks one command-line value as the row does, on a scratch copy; applyValues stores it later.
template <typename Options>
CLI::Validator valueCheck(const CLI::App& app, const OptionSpec<Options>& spec) {
  return {[&app, &spec](std::string& value) -> std::string {
            // CLI11, like pflag, takes the argument after a flag as its value even when it is the
            // next flag; that is a forgotten value, not a value.
            if (spec.target.kind != Kind::Bool && value.starts_with("--") &&
                app.get_option_no_throw(value.substr(0, value.find('='))) != nullptr) {
              return "missing value (" + std::string(spec.value_name) + ")";
            }
            Options scratch;
            auto ok = spec.target.set(scratch, value);
            return ok ? std::string() : ok.error();
          },
          ""};
}

template <typename Options>
void addFlags(CLI::App& app, const std::vector<OptionSpec<Options>>& specs) {
  for (const auto& spec : specs) {
    const std::string name = "--" + std::string(spec.flag);
    CLI::Option* opt = spec.target.kind == Kind::Bool ? app.add_flag(name) : app.add_option(name);
    if (spec.target.kind != Kind::Bool) {
      opt->option_text(std::string(spec.value_name))->type_name(std::string(spec.value_name));
    }
    if (spec.default_text == "required") opt->required();
    // Every value is checked and a repeated flag allowed: the last value of a scalar wins.
    opt->description(helpLine(spec))
        ->group("Flags")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(valueCheck(app, spec));
  }
}

// Stores each row's values: the command line's, else the config file's, else the default stays.
template <typename Options>
Applied applyValues(Options& options, const CLI::App& app,
                    const std::vector<OptionSpec<Options>>& specs,
                    const std::map<std::string, std::vector<std::string>, std::less<>>& from_file) {
  for (const auto& spec : specs) {
    const CLI::Option* opt = app.get_option("--" + std::string(spec.flag));
    const std::vector<std::string>* values = &opt->results();
    if (opt->count() == 0) {
      const auto file = from_file.find(spec.flag);
      if (file == from_file.end()) continue;
      values = &file->second;
    }
    if (spec.target.clear) spec.target.clear(options);
    for (const std::string& value : *values) {
      if (auto ok = spec.target.set(options, value); !ok) {
        return fail("--" + std::string(spec.flag) + ": " + ok.error());
      }
    }
  }
  return {};
}

class CommandLine {
 public:
  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  Expected<Command> parse(std::span<const std::string_view> args, const OptionsEnvironment& env);
  // root_.help() would show the help of the command that was parsed: "help" itself.
  std::string help(const CLI::App* command) const {
    if (command != nullptr) return command->help(root_.get_name());
    return root_.get_formatter()->make_help(&root_, root_.get_name(), CLI::AppFormatMode::Normal);
  }
  const CLI::App* commandNamed(std::string_view name) const {
    for (const CLI::App* c : {run_, plan_, release_, version_}) {
      if (c->get_name() == name) return c;
    }
    return nullptr;
  }

 private:
  CLI::App* addCommand(const std::string& name, const std::string& description);
  Expected<std::vector<std::string>> normalized(std::span<const std::string_view> args) const;
  std::optional<std::string> unexpectedArgument(const std::vector<std::string>& args) const;
  std::string errorLine(const CLI::ParseError& e, const std::vector<std::string>& args) const;
  Expected<Command> parsedCommand(const OptionsEnvironment& env) const;

  CLI::App root_;
  CLI::App* run_;
  CLI::App* plan_;
  CLI::App* release_;
  CLI::App* version_;
  CLI::App* help_;
  std::string help_topic_;
  // The --config file's values by flag name, read while CLI11 checks the flags.
  std::map<std::string, std::vector<std::string>, std::less<>> from_file_;
};

CommandLine::CommandLine()
    : root_(
          "shardscaler changes the shard count of Prometheus and PrometheusAgent objects through "
          "a\nShardSet (scale subresource) and keeps the data of removed shards as long as "
          "asked.\n",
          "shardscaler") {
  auto formatter = std::make_shared<HelpFormatter>();
  formatter->column_width(44);
  formatter->label("OPTIONS", "flags");
  formatter->label("SUBCOMMAND", "<command>");
  root_.formatter(formatter);  // before the commands, which copy it
  root_.set_help_flag("-h,--help", "show this help")->group("Flags");
  root_.require_subcommand(0, 1);

  run_ = addCommand(
      "run",
      "run the controller\n\n"
      "Runs the ShardSet controller and serves /metrics, /healthz and /readyz, and on every\n"
      "replica the shard guard, an admission webhook that refuses deleting active shards and\n"
      "retained ones before their deadline (POST /guard/statefulsets over HTTPS).\n"
      "SIGTERM or SIGINT: stop taking work, finish the reconciles in flight, release the Lease.\n");
  run_->footer(
      "Flags take --flag=value or --flag value; booleans --flag or --flag=false.\n"
      "Durations use Go syntax (10s, 1m30s). The --config file uses the flag names in camelCase\n"
      "(metricsBindAddress, leaderElect, leaderElectionId, ...), with namespaces: [a, b] for\n"
      "--namespace (lists also for the other repeatable flags); flags given on the command line\n"
      "win over the file.");
  addFlags(*run_, runSpecs());
  // Read while CLI11 checks the flags in table order, --config first: a bad file is reported
  // before a bad flag value, as the file is applied below the flags.
  run_->get_option("--config")->each([this](const std::string& path) {
    auto values = readConfigFile(path, runSpecs());
    if (!values) throw CLI::ConfigError(values.error());
    from_file_.clear();
    for (auto& v : *values) from_file_[std::string(v.spec->flag)] = std::move(v.values);
  });

  plan_ = addCommand("plan",
                     "print, without writing, the steps a scale to N shards would take\n\n"
                     "Prints, without writing anything, the steps a scale of the ShardSet to N "
                     "shards would take.\n");
  addFlags(*plan_, planSpecs());

  release_ = addCommand(
      "release",
      "finish the release of ShardSets being deleted when shardscaler is not running\n\n"
      "Does, once, what shardscaler's finalizer does for every ShardSet being deleted: resumes\n"
      "a target it paused and re-attaches shards it detached mid-transition, keeps the target's\n"
      "shard count, orphans the retained StatefulSets (a RetainedShardsOrphaned Event names\n"
      "them; nothing deletes them) and removes the finalizer shardscaler.io/release-target.\n"
      "For an install deleted before its ShardSets: run it with a kubeconfig of your own.\n"
      "ShardSets not being deleted are left alone.\n");
  addFlags(*release_, releaseSpecs());

  version_ = addCommand("version",
                        "print the version and the git commit\n\n"
                        "Prints the version and the git commit shardscaler was built from.\n");
  help_ = addCommand("help", "show the help of a command\n");
  help_->add_option("command", help_topic_, "run, plan, release or version")->type_name("");
  // Set last: the commands would copy it.
  root_.footer("Run 'shardscaler <command> --help' for the flags of a command.");
}

CLI::App* CommandLine::addCommand(const std::string& name, const std::string& description) {
  CLI::App* command = root_.add_subcommand(name, description);
  command->group("Commands");
  command->get_help_ptr()->group("Flags");
  return command;
}

// CLI11 2.1.2 reads "--flag=" as "--flag" and takes the next argument as its value; pflag and the
// tables read it as the empty value ("--guard-exempt-groups=" exempts no group), so it is passed
// as a separate empty argument. A boolean flag has no empty value.
Expected<std::vector<std::string>> CommandLine::normalized(
    std::span<const std::string_view> args) const {
  std::vector<std::string> out;
  for (std::string_view arg : args) {
    const std::string name(arg.substr(0, arg.size() - 1));
    const CLI::Option* opt = nullptr;
    if (arg.starts_with("--") && arg.find('=') == arg.size() - 1) {
      for (const CLI::App* c : {run_, plan_, release_}) {
        if (opt == nullptr) opt = c->get_option_no_throw(name);
      }
    }
    if (opt == nullptr) {
      out.emplace_back(arg);
    } else if (opt->get_expected_max() == 0) {
      return fail(name + ": " + parseBool("").error());
    } else {
      out.push_back(name);
      out.emplace_back();
    }
  }
  return out;
}

// An unknown flag or a stray argument, named, with a guess at what was meant.
std::optional<std::string> CommandLine::unexpectedArgument(
    const std::vector<std::string>& args) const {
  for (const CLI::App* c : {run_, plan_, release_, version_, help_}) {
    if (!c->parsed() || c->remaining_size() == 0) continue;
    const std::string arg = c->remaining().front();
    if (arg.starts_with("-") && arg != "-") {
      const std::string name = arg.substr(0, arg.find('='));
      std::string bare = name;  // "-kubeconfig" is a misspelt "--kubeconfig"
      bare.erase(0, bare.find_first_not_of('-'));
      std::vector<std::string> flags;
      for (const CLI::Option* o : c->get_options()) flags.push_back(o->get_name());
      return "unknown flag " + inQuotes(name) + suggestion("--" + bare, flags);
    }
    // "--leader-elect false": a boolean flag takes no separate value.
    std::string hint;
    const auto at = std::ranges::find(args, arg);
    if (at != args.begin() && at != args.end() && parseBool(arg)) {
      const CLI::Option* previous = c->get_option_no_throw(*(at - 1));
      if (previous != nullptr && previous->get_expected_max() == 0 && previous->count() > 0 &&
          previous != c->get_help_ptr()) {
        hint = " (a boolean flag takes its value with '=': " + *(at - 1) + "=" + arg + ")";
      }
    }
    return "unexpected argument " + inQuotes(arg) + hint;
  }
  if (root_.remaining_size() == 0) return std::nullopt;
  const std::string arg = root_.remaining().front();
  if (!root_.get_subcommands().empty()) return "unexpected argument " + inQuotes(arg);  // after --
  if (arg.starts_with("-")) {
    return "unknown flag " + inQuotes(arg) +
           " (flags go after the command: " + std::string(kCommands) + ")";
  }
  return "unknown command " + inQuotes(arg) + " (" + std::string(kCommands) + ")" +
         suggestion(arg, commandNames());
}

// CLI11's error, reworded where it names less than the tests' error lines ask. CLI11 throws
// ArgumentMismatch when the arguments end before a flag's value: the last one is that flag.
std::string CommandLine::errorLine(const CLI::ParseError& e,
                                   const std::vector<std::string>& args) const {
  // "plan: --shards is required", naming the command.
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && plan_->parsed()) {
    return "plan: " + std::string(e.what());
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) == nullptr || args.empty()) return e.what();
  for (const CLI::App* c : {run_, plan_, release_}) {
    const CLI::Option* opt = c->parsed() ? c->get_option_no_throw(args.back()) : nullptr;
    if (opt != nullptr) return args.back() + ": missing value (" + opt->get_option_text() + ")";
  }
  return e.what();
}

Expected<Command> CommandLine::parse(std::span<const std::string_view> args,
                                     const OptionsEnvironment& env) {
  auto argv = normalized(args);
  if (!argv) return std::unexpected(argv.error());
  std::vector<std::string> reversed(argv->rbegin(), argv->rend());  // CLI11 pops from the back
  std::optional<std::string> error;
  try {
    root_.parse(reversed);
  } catch (const CLI::CallForHelp&) {  // decided below, after unknown flags
  } catch (const CLI::ParseError& e) {
    error = errorLine(e, *argv);
  }
  // Unknown flags first, then --help (which wins over bad values), then the first bad value.
  if (auto unexpected = unexpectedArgument(*argv)) return fail(*unexpected);
  const CLI::App* selected = root_.get_subcommands().empty() ? nullptr : root_.get_subcommands()[0];
  const bool help_flag = root_.get_help_ptr()->count() > 0 ||
                         (selected != nullptr && selected->get_help_ptr()->count() > 0);
  if (help_flag) return HelpCommand{help(selected == help_ ? nullptr : selected)};
  if (error) return fail(*error);
  return parsedCommand(env);
}

Expected<Command> CommandLine::parsedCommand(const OptionsEnvironment& env) const {
  if (run_->parsed()) {
    RunOptions options;
    if (auto ok = applyValues(options, *run_, runSpecs(), from_file_); !ok) {
      return std::unexpected(ok.error());
    }
    if (auto ok = finishRunOptions(options, env); !ok) return std::unexpected(ok.error());
    return options;
  }
  if (plan_->parsed()) {
    PlanOptions options;
    if (auto ok = applyValues(options, *plan_, planSpecs(), {}); !ok) {
      return std::unexpected(ok.error());
    }
    return options;
  }
  if (release_->parsed()) {
    ReleaseOptions options;
    if (auto ok = applyValues(options, *release_, releaseSpecs(), {}); !ok) {
      return std::unexpected(ok.error());
    }
    return options;
  }
  if (version_->parsed()) return VersionCommand{};
  if (help_->parsed()) {
    if (help_topic_.empty()) return HelpCommand{help(nullptr)};
    if (const CLI::App* topic = commandNamed(help_topic_)) return HelpCommand{help(topic)};
    return fail("unknown command " + inQuotes(help_topic_) + " (" + std::string(kCommands) + ")");
  }
  return fail("missing command (" + std::string(kCommands) + "); see shardscaler --help");
}

std::string helpOf(std::string_view command) {
  const CommandLine cli;
  return cli.help(cli.commandNamed(command));
}

}  // namespace

Expected<Command> parseCommandLine(std::span<const std::string_view> args,
                                   const OptionsEnvironment& env) {
  CommandLine cli;
  return cli.parse(args, env);
}

Expected<Command> parseCommandLine(int argc, const char* const* argv,
                                   const OptionsEnvironment& env) {
  std::vector<std::string_view> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return parseCommandLine(std::span<const std::string_view>(args), env);
}

std::string mainHelp() { return helpOf(""); }
std::string runHelp() { return helpOf("run"); }
std::string planHelp() { return helpOf("plan"); }
std::string releaseHelp() { return helpOf("release"); }
std::string versionHelp() { return helpOf("version"); }

}  // namespace shardscaler::app
