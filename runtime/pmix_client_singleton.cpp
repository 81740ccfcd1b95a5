// The singleton backend of the process-manager contract: a process started without a launcher.
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/auth.hpp"
#include "runtime/pmix_client_internal.hpp"
#include "runtime/process_manager.hpp"

namespace ftmpi::runtime {
namespace {

// Singleton: a one-process job with no process manager at all.
class SingletonManager final : public ProcessManager {
public:
    SingletonManager() {
        job_.local_peers = {0};
        job_.secret.resize(auth::k_secret_size);
        auth::random_bytes(job_.secret.data(), job_.secret.size());
    }
    const JobInfo &job() const override { return job_; }
    void put(const std::string &key, const void *data, std::size_t len) override {
        auto p = static_cast<const char *>(data);
        kv_[key].assign(p, p + len);
    }
    void exchange() override {}
    std::vector<char> get_remote(int, int, const std::string &) override { return {}; }
    std::vector<char> get(int rank, const std::string &key) override {
        if (rank != 0) return {};
        auto it = kv_.find(key);
        return it == kv_.end() ? std::vector<char>{} : it->second;
    }
    [[noreturn]] void abort(int code, const std::string &) override { ::_exit(code != 0 ? code : 1); }
    bool request_kill(int) override { return false; }
    void finalize() override {}

    bool spawn(const std::vector<SpawnApp> &, SpawnedJob &, std::string &why) override {
        why = why_no_spawn();
        return false;
    }
    void kill_job(const SpawnedJob &) override {}

    std::string why_no_spawn() const override {
        return "a process started without a launcher (a singleton) has no process manager to start processes";
    }

    Names publish(const std::string &service, const std::string &port, std::string &) override {
        return names_.emplace(service, port).second ? Names::ok : Names::exists;
    }
    Names lookup(const std::string &service, std::string &port, std::string &) override {
        auto it = names_.find(service);
        if (it == names_.end()) return Names::not_found;
        port = it->second;
        return Names::ok;
    }
    Names unpublish(const std::string &service, std::string &) override {
        return names_.erase(service) != 0 ? Names::ok : Names::not_found;
    }

private:
    JobInfo job_;
    std::map<std::string, std::vector<char>> kv_;
    std::map<std::string, std::string> names_;  // the name service of a one-process job
};

}  // namespace

std::unique_ptr<ProcessManager> make_singleton_manager() { return std::make_unique<SingletonManager>(); }

}  // namespace ftmpi::runtime
