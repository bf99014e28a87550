#include "ring_allreduce/launcher.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "gpulab/errors.hpp"
#include "ring_allreduce/rank_netns.hpp"

namespace ring {
namespace {

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (errno != EINTR) {
      return;  // the launcher is gone; nobody to report to
    }
  }
}

[[noreturn]] void child_main(int rank, const LaunchOptions& opts, std::vector<Listener>& listeners,
                             const std::vector<Endpoint>& endpoints, int report_fd, int release_fd,
                             const RankJob& job) {
  // Die with the launcher: a killed parent must not leave ranks behind.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  Fd mine = std::move(listeners[static_cast<std::size_t>(rank)].fd);
  listeners.clear();  // close the other ranks' listeners in this process
  gpulab::Json report;
  try {
    // On its own "host": the connections it opens leave through that namespace's interfaces.
    if (!opts.rank_netns.empty()) enter_netns(opts.rank_netns[static_cast<std::size_t>(rank)]);
    Transport t = connect_mesh(rank, endpoints, std::move(mine), opts.timeout, Clock::now() + opts.setup_timeout,
                               opts.transport);
    report = run_rank_job(t, job);
    write_all(report_fd, report.dump() + "\n");
    // Keep every connection open until the launcher has heard from all ranks:
    // only a rank that really died closes early, so a probing survivor never
    // mistakes a finished (or failed-and-reporting) peer for the culprit.
    char c = 0;
    while (::read(release_fd, &c, 1) < 0 && errno == EINTR) {
    }
  } catch (const std::exception& e) {
    report = gpulab::Json{{"error", e.what()}};
    write_all(report_fd, report.dump() + "\n");
  }
  ::_exit(report.contains("error") ? 1 : 0);  // not exit(): the forked copy must not run the parent's atexit handlers
}

}  // namespace

gpulab::Json run_rank_job(Transport& t, const RankJob& job) {
  try {
    return job(t);
  } catch (const PeerFailure& e) {
    return gpulab::Json{{"error", e.what()}, {"suspects", e.suspects}};
  } catch (const std::exception& e) {
    return gpulab::Json{{"error", e.what()}};
  }
}

std::vector<RankOutcome> launch_local(const LaunchOptions& opts, const RankJob& job) {
  if (opts.world < 2) throw std::invalid_argument("a collective needs at least 2 ranks");
  if (const std::string why = memory_problem(opts.world, job.memory, available_memory_bytes()); !why.empty())
    throw gpulab::UsageError(why);
  const auto n = static_cast<std::size_t>(opts.world);
  if (!opts.rank_netns.empty() && opts.rank_netns.size() != n)
    throw std::invalid_argument("launch_local: one network namespace per rank");
  std::vector<Listener> listeners;
  std::vector<Endpoint> endpoints;
  std::vector<IfaceChoice> picks(n);
  for (std::size_t r = 0; r < n; ++r) {
    if (opts.rank_netns.empty()) {
      listeners.push_back(listen_tcp("127.0.0.1", opts.world));
    } else {
      try {
        const NetnsSeat seat(opts.rank_netns[r]);  // the socket is created in the rank's namespace
        picks[r] = choose_interface(ipv4_interfaces(), opts.iface_spec, opts.iface_source);
        listeners.push_back(listen_tcp(picks[r].iface.address, opts.world));
      } catch (const std::runtime_error& e) {
        throw gpulab::UsageError(fmt::format("rank {} (--rank-netns {}): {}", r, opts.rank_netns[r], e.what()));
      }
    }
    endpoints.push_back({listeners.back().address, listeners.back().port});
  }

  struct Child {
    pid_t pid = -1;
    Fd report;   // the rank's JSON line
    Fd release;  // closed by the launcher: "everyone has reported, you may exit"
    std::string text;
    bool reported = false;
    bool ended = false;
  };
  std::vector<Child> children(n);
  std::fflush(nullptr);  // buffered output would otherwise be printed once per child
  const auto start = Clock::now();
  for (std::size_t r = 0; r < n; ++r) {
    int rep[2];
    int rel[2];
    if (::pipe2(rep, O_CLOEXEC) != 0 || ::pipe2(rel, O_CLOEXEC) != 0)
      throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
    if (pid == 0) {
      ::close(rep[0]);
      ::close(rel[1]);
      for (std::size_t k = 0; k < r; ++k) {
        children[k].report.reset();
        children[k].release.reset();
      }
      child_main(static_cast<int>(r), opts, listeners, endpoints, rep[1], rel[0], job);
    }
    ::close(rep[1]);
    ::close(rel[0]);
    children[r].pid = pid;
    children[r].report = Fd(rep[0]);
    children[r].release = Fd(rel[1]);
  }
  listeners.clear();

  std::vector<RankOutcome> out(n);
  for (std::size_t r = 0; r < n; ++r) {
    out[r].rank = static_cast<int>(r);
    out[r].iface = picks[r].iface.name;
    out[r].address = picks[r].iface.address;
    out[r].iface_rule = picks[r].rule;
  }
  const auto settled = [&](const Child& c) { return c.reported || c.ended; };
  bool trouble = false;
  Clock::time_point kill_at = Clock::time_point::max();
  // After the first failure the others get one watchdog period (plus slack) to report.
  const auto grace = opts.timeout + std::chrono::seconds(2);
  while (!std::all_of(children.begin(), children.end(), settled)) {
    std::vector<pollfd> pfds;
    std::vector<std::size_t> which;
    for (std::size_t r = 0; r < n; ++r)
      if (!settled(children[r])) {
        pfds.push_back({children[r].report.get(), POLLIN, 0});
        which.push_back(r);
      }
    const int timeout_ms = kill_at == Clock::time_point::max() ? -1 : ms_until(kill_at);
    const int ready = ::poll(pfds.data(), pfds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
    if (ready == 0 && Clock::now() >= kill_at) {
      for (std::size_t r : which) ::kill(children[r].pid, SIGKILL);  // past timeout + grace: stop waiting
      kill_at = Clock::time_point::max();
      continue;
    }
    for (std::size_t i = 0; ready > 0 && i < pfds.size(); ++i) {
      if (pfds[i].revents == 0) continue;
      Child& c = children[which[i]];
      RankOutcome& o = out[which[i]];
      char buf[65536];
      const ssize_t got = ::read(c.report.get(), buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got > 0) c.text.append(buf, static_cast<std::size_t>(got));
      if (got <= 0) c.ended = true;  // the process is gone
      if (!c.text.empty() && c.text.back() == '\n') c.reported = true;
      if (!settled(c)) continue;
      o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      const gpulab::Json report = gpulab::Json::parse(c.text, nullptr, /*allow_exceptions=*/false);
      if (!c.reported || !report.is_object()) {
        o.status = RankOutcome::Status::kDied;
      } else if (report.contains("error")) {
        o.status = RankOutcome::Status::kFailed;
        o.error = report["error"].get<std::string>();
        if (report.contains("suspects")) o.suspects = report["suspects"].get<std::vector<int>>();
      } else {
        o.status = RankOutcome::Status::kOk;
        o.report = report;
      }
      if (o.status != RankOutcome::Status::kOk && !trouble) {
        trouble = true;
        if (opts.timeout.count() > 0) kill_at = Clock::now() + grace;
      }
    }
  }
  // Everyone has reported or is gone: let the ranks close their connections and exit.
  for (auto& c : children) c.release.reset();
  for (std::size_t r = 0; r < n; ++r) {
    int status = 0;
    while (::waitpid(children[r].pid, &status, 0) < 0 && errno == EINTR) {
    }
    RankOutcome& o = out[r];
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (o.status == RankOutcome::Status::kDied)
      o.error = WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                                    : fmt::format("exited with code {} without a report", o.exit_code);
  }
  return out;
}

}  // namespace ring
