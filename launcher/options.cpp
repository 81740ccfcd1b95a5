#include "options.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "error.hpp"

namespace ftmpi::launcher {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

int parse_np(const std::string& opt, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v <= 0 || v > 65536)
    throw UsageError(opt + " expects a positive integer (at most 65536), got '" + text + "'");
  return static_cast<int>(v);
}

double parse_timeout(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v <= 0)
    throw UsageError("--timeout expects a positive number of seconds, got '" + text + "'");
  return v;
}

bool valid_env_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

}  // namespace

const char* usage_text() {
  return "usage: ftmpirun [options] program [args...]\n"
         "  -n, -np, --np N     number of ranks (default 1)\n"
         "  -x VAR[=value]      export VAR (from this environment or with value) to the ranks\n"
         "  --tag-output        prefix every output line with [rank]\n"
         "  --timeout SECONDS   kill the job after SECONDS (exit code 124)\n"
         "  --bind-to core|none bind rank i to core i (default: core when N <= cores)\n"
         "  --report-bindings   print each rank's binding on stderr\n"
         "  --no-ft             classic mode: the first failed rank kills the job\n"
         "  --version, --help\n"
         "Options stop at the first non-option argument or at '--'.\n";
}

std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    struct stat st {};
    if (::stat(name.c_str(), &st) != 0) throw UsageError("program '" + name + "' not found");
    if (!is_executable_file(name)) throw UsageError("program '" + name + "' is not an executable file");
    return name;
  }
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  bool found_non_exec = false;
  std::size_t pos = 0;
  while (true) {
    std::size_t colon = path.find(':', pos);
    std::string dir = path.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
    std::string cand = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(cand)) return cand;
    if (::access(cand.c_str(), F_OK) == 0) found_non_exec = true;
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  if (found_non_exec) throw UsageError("program '" + name + "' found in PATH but is not executable");
  throw UsageError("program '" + name + "' not found in PATH");
}

Options parse_options(int argc, char** argv) {
  Options o;
  int i = 1;
  // Returns the value of option `opt`: the text after '=' when given inline,
  // else the next argument.
  auto value_of = [&](const std::string& opt, const std::optional<std::string>& inl) {
    if (inl) return *inl;
    if (i + 1 >= argc) throw UsageError("option " + opt + " requires a value");
    return std::string(argv[++i]);
  };
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") { ++i; break; }
    if (arg.size() < 2 || arg[0] != '-') break;  // first non-option: the program
    std::string opt = arg;
    std::optional<std::string> inl;
    if (arg.rfind("--", 0) == 0) {
      auto eq = arg.find('=');
      if (eq != std::string::npos) { opt = arg.substr(0, eq); inl = arg.substr(eq + 1); }
    }
    auto no_value = [&] {
      if (inl) throw UsageError("option " + opt + " does not take a value");
    };
    if (opt == "-n" || opt == "-np" || opt == "--np" || opt == "--n") {
      o.np = parse_np(opt, value_of(opt, inl));
    } else if (opt == "-x") {
      std::string v = value_of(opt, inl);
      auto eq = v.find('=');
      std::string name = v.substr(0, eq);
      if (!valid_env_name(name)) throw UsageError("-x expects VAR or VAR=value, got '" + v + "'");
      if (eq == std::string::npos) o.exports.emplace_back(name, std::nullopt);
      else o.exports.emplace_back(name, v.substr(eq + 1));
    } else if (opt == "--tag-output") {
      no_value(); o.tag_output = true;
    } else if (opt == "--timeout") {
      o.timeout_text = value_of(opt, inl);
      o.timeout_s = parse_timeout(o.timeout_text);
    } else if (opt == "--bind-to") {
      std::string v = value_of(opt, inl);
      if (v == "core") o.bind = BindPolicy::kCore;
      else if (v == "none") o.bind = BindPolicy::kNone;
      else throw UsageError("--bind-to expects 'core' or 'none', got '" + v + "'");
    } else if (opt == "--report-bindings") {
      no_value(); o.report_bindings = true;
    } else if (opt == "--no-ft") {
      no_value(); o.ft = false;
    } else if (opt == "--version" || opt == "-V") {
      o.action = Options::Action::kVersion;
      return o;
    } else if (opt == "--help" || opt == "-h") {
      o.action = Options::Action::kHelp;
      return o;
    } else {
      throw UsageError("unknown option '" + arg + "' (see ftmpirun --help)");
    }
  }
  if (i >= argc) throw UsageError("no program given (see ftmpirun --help)");
  o.program_path = resolve_program(argv[i]);
  for (; i < argc; ++i) o.argv.emplace_back(argv[i]);
  return o;
}

}  // namespace ftmpi::launcher
