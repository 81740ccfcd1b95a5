// Launcher error types. Exceptions are allowed in the launcher (STYLE.md §5)
// but never cross a PMIx callback; each carries the call site.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

namespace ftmpi::launcher {

// A fatal launcher error (PMIx, fork, pipe...). main() prints
// "ftmpirun: <what>" and exits with kExitInternal.
class LauncherError : public std::runtime_error {
public:
    explicit LauncherError(const std::string &what, std::source_location where = std::source_location::current())
        : std::runtime_error(what + " [" + where.file_name() + ":" + std::to_string(where.line()) + " " +
                             where.function_name() + "]") {}
};

// Bad command line. main() prints "ftmpirun: <what>" and exits with kExitUsage,
// before anything is forked.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline constexpr int kExitUsage = 2;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitTimeout = 124;

}  // namespace ftmpi::launcher
