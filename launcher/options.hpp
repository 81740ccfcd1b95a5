// Command-line parsing for ftmpirun (mpirun spellings).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ftmpi::launcher {

enum class BindPolicy { kDefault, kCore, kNone };

struct Options {
  enum class Action { kRun, kHelp, kVersion };
  Action action = Action::kRun;
  int np = 1;
  // -x VAR (value taken from the launcher's environment) or -x VAR=value.
  std::vector<std::pair<std::string, std::optional<std::string>>> exports;
  bool tag_output = false;
  std::optional<double> timeout_s;   // --timeout; always > 0 when set
  std::string timeout_text;          // as the user spelled it, for messages
  BindPolicy bind = BindPolicy::kDefault;
  bool report_bindings = false;
  bool ft = true;                    // false with --no-ft
  std::string program_path;          // resolved, executable
  std::vector<std::string> argv;     // argv[0] is the program as given
};

// Parses argv. Throws UsageError (message without the "ftmpirun: " prefix)
// on any bad usage; resolves the program through PATH and checks that it is
// an executable regular file. Has no side effects.
Options parse_options(int argc, char** argv);

// Searches PATH like execvp (a name containing '/' is used as is).
// Throws UsageError when nothing executable is found.
std::string resolve_program(const std::string& name);

const char* usage_text();

}  // namespace ftmpi::launcher
