// A rank that crashes dies from its real signal.
//
// Some libraries that libfabric loads install handlers for fatal signals that
// print a backtrace and call exit(1). The process manager then sees "exited
// with code 1" instead of "killed by signal 11 (SIGSEGV)". On Debian 12,
// libinfinipath (under libfabric's psm provider) does so from its library
// constructor, for SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT and SIGTERM, unless
// IPATH_NO_BACKTRACE is set; libpsm2 does the same when HFI_BACKTRACE is set.
#pragma once

namespace ftmpi::runtime {

// Puts SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT and SIGTERM back to
// SIG_DFL wherever the installed handler belongs to one of those libraries.
// Any other handler stays: the program's own, and libfabric shm's, which cleans
// up and then re-raises the signal under the action it replaced (so, once the
// interceptor is gone, the process still dies from the signal). Returns how
// many handlers were removed.
//
// libftmpi calls it from a library constructor (the interceptors' constructors
// run before ours, since they are our dependencies), so a crash before
// MPI_Init is reported too, and again from MPI_Init once the transport is open,
// for an interceptor that a provider loaded then. Not thread-safe with respect
// to other sigaction() calls on the same signals.
int release_fatal_signals();

}  // namespace ftmpi::runtime
