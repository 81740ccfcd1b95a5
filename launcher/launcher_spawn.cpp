// MPI_Comm_spawn at the launcher: Runner::on_spawn starts a new namespace of processes.
#include <unistd.h>

#include <exception>
#include <string>
#include <vector>

#include "binding.hpp"
#include "launcher_internal.hpp"
#include "options.hpp"
#include "pmix_server.hpp"
#include "runtime/process_manager.hpp"
#include "upcall_queue.hpp"

namespace ftmpi::launcher::detail {

// MPI_Comm_spawn (PMIx_Spawn): a new namespace with the ids after every
// process so far, forked, bound and forwarded like the job's ranks. The
// reply names it; the processes connect to their parents themselves.
void Runner::on_spawn(Upcall &u) {
    if (teardown_) {
        u.reply(PMIX_ERR_JOB_TERMINATED);
        return;
    }
    const int base = static_cast<int>(ranks_.size());
    int total = 0;
    std::vector<std::string> paths;
    for (const Upcall::App &a : u.apps) {
        if (a.maxprocs <= 0 || a.cmd.empty()) {
            say("spawn by process " + std::to_string(u.rank) + ": a program without a name or processes, refused");
            u.reply(PMIX_ERR_BAD_PARAM);
            return;
        }
        total += a.maxprocs;
        try {
            paths.push_back(resolve_spawned(a.cmd, a.cwd, o_.wdir));
        } catch (const std::exception &e) {
            say("spawn by process " + std::to_string(u.rank) + ": " + e.what());
            u.reply(PMIX_ERR_NOT_FOUND);
            return;
        }
    }
    if (u.apps.empty() || base + total > ftmpi::runtime::k_max_processes) {
        say("spawn by process " + std::to_string(u.rank) + ": " + std::to_string(total) +
            " processes refused (at most " + std::to_string(ftmpi::runtime::k_max_processes) + " in all)");
        u.reply(PMIX_ERR_OUT_OF_RESOURCE);
        return;
    }
    std::vector<int> appnums;
    for (size_t i = 0; i < u.apps.size(); ++i)
        appnums.insert(appnums.end(), static_cast<size_t>(u.apps[i].maxprocs), static_cast<int>(i));
    Options sized = o_;
    sized.np = base + total;
    const BindingPlan plan = plan_bindings(sized, false);
    server_->register_job(base, appnums, universe_size_);
    ranks_.resize(static_cast<size_t>(base + total));
    job_sizes_[base] = total;
    int id = base;
    for (size_t i = 0; i < u.apps.size(); ++i) {
        const Upcall::App &a = u.apps[i];
        std::vector<std::string> argv = a.argv;
        if (argv.empty()) argv.push_back(a.cmd);
        for (int k = 0; k < a.maxprocs; ++k, ++id)
            start_process(id, base, id - base, total, paths[i], argv, a.env, a.cwd.empty() ? o_.wdir : a.cwd,
                          plan.ranks[static_cast<size_t>(id)]);
    }
    if (o_.report_bindings)
        for (int p = base; p < base + total; ++p)
            say("process " + std::to_string(p) +
                (plan.ranks[static_cast<size_t>(p)].bound ? " bound to " + plan.ranks[static_cast<size_t>(p)].where
                                                          : std::string(" not bound")));
    u.reply(PMIX_SUCCESS, server_->job_nspace(base));
}

// A relative path is ftmpirun's directory's (as for the job's program), else
// the process's wdir's; a bare name is looked for as the job's program is
// (PATH, then the wdir, else the job's). resolve_program makes it absolute:
// the process changes to its wdir before it executes it.
std::string resolve_spawned(const std::string &cmd, const std::string &cwd, const std::string &job_wdir) {
    std::string name = cmd;
    const bool relative = name.find('/') != std::string::npos && name.front() != '/';
    if (relative && !cwd.empty() && ::access(name.c_str(), F_OK) != 0) name = cwd + "/" + name;
    return resolve_program(name, relative ? std::string() : cwd.empty() ? job_wdir : cwd);
}

}  // namespace ftmpi::launcher::detail
