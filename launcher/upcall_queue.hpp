// Hand-off from PMIx's progress thread to the launcher's event loop.
#pragma once

#include <pmix.h>
#include <pmix_server.h>

#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace ftmpi::launcher {

// One PMIx server upcall, copied out of PMIx-owned memory. The event loop
// acts on it and then calls reply() exactly once.
struct Upcall {
  enum class Kind { kConnected, kFinalized, kAbort, kJobControl };
  Kind kind = Kind::kConnected;
  pmix_rank_t rank = 0;              // the requesting client
  int status = 0;                    // abort: exit code; job control: signal
  std::string msg;                   // abort message
  bool all = false;                  // abort/job control: the whole namespace
  std::vector<pmix_rank_t> targets;  // abort/job control when !all
  pmix_op_cbfunc_t op_cb = nullptr;      // connected/finalized/abort
  pmix_info_cbfunc_t info_cb = nullptr;  // job control
  void* cbdata = nullptr;

  // Completes the PMIx request (PMIx thread-shifts internally, so any thread
  // may call it). Calling it twice is a no-op.
  void reply(pmix_status_t st);
};

// Multi-producer (PMIx threads), single-consumer (event loop) queue whose
// readiness is an eventfd, so the loop can poll() it with everything else.
class UpcallQueue {
 public:
  UpcallQueue();   // throws LauncherError when eventfd fails
  ~UpcallQueue();
  UpcallQueue(const UpcallQueue&) = delete;
  UpcallQueue& operator=(const UpcallQueue&) = delete;

  // Never blocks beyond the mutex; noexcept-safe for callers that catch.
  void post(Upcall u);
  // Clears the eventfd and returns everything posted so far, in order.
  std::deque<Upcall> drain();
  int fd() const { return efd_; }

 private:
  int efd_ = -1;
  std::mutex mu_;
  std::deque<Upcall> items_;
};

}  // namespace ftmpi::launcher
