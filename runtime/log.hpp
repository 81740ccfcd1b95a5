// Logging to stderr, prefixed with the process's world rank.
// Safe to call from any thread; one write(2) per message so lines never interleave.
#pragma once

#include <cstdarg>

namespace ftmpi::runtime {

enum class Level : int { error = 0, warn = 1, info = 2, debug = 3 };

// The world rank shown in the prefix (-1 before it is known).
void set_log_rank(int rank);

// The level in force: the one set_log_level() set last, else FTMPI_LOG
// (config().LOG). Messages above it are dropped. Any thread.
int log_level();
// Sets the level from now on, whatever FTMPI_LOG says (also across a later
// load_config()). Any value is accepted, as FTMPI_LOG accepts any integer:
// below 0 drops everything, above 3 is debug. Any thread.
void set_log_level(int level);
// "error", "warning", "info" or "debug"; nullptr for a value outside Level.
const char *level_name(int level);

[[gnu::format(printf, 2, 3)]] void log(Level level, const char *fmt, ...);
void vlog(Level level, const char *fmt, va_list ap);

}  // namespace ftmpi::runtime

#define FTMPI_ERROR(...) ::ftmpi::runtime::log(::ftmpi::runtime::Level::error, __VA_ARGS__)
#define FTMPI_WARN(...) ::ftmpi::runtime::log(::ftmpi::runtime::Level::warn, __VA_ARGS__)
#define FTMPI_INFO(...) ::ftmpi::runtime::log(::ftmpi::runtime::Level::info, __VA_ARGS__)
#define FTMPI_DEBUG(...) ::ftmpi::runtime::log(::ftmpi::runtime::Level::debug, __VA_ARGS__)
