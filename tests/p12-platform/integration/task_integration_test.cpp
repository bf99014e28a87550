// gpulab-task run as the agents run it: real processes, real sockets, JSON
// lines on stdout. Gangs of ranks rendezvous through a directory or through
// an HTTP stand-in for the control plane; training is checked for a falling,
// bit-reproducible loss, a crash plus resume that lands exactly where an
// uninterrupted run does, and agreement across every HAL backend this build
// loaded.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gpulab/json.hpp"
#include "gpulab_test/program_run.hpp"
#include "hal/hal.hpp"
#include "task_rendezvous_server.hpp"

namespace fs = std::filesystem;
namespace hal = gpulab::hal;

namespace {

// The largest relative difference of a step's loss between two backends (or
// two world sizes) that the tests accept. Measured on this build: at most
// 2.5e-7 over 200 steps and 4.5e-7 over 1000 steps between cpu_ref, fast, blas
// and opencl (world 2, seed 1); the bound leaves a 200x margin and still
// catches a backend that computes in half precision (~1e-3).
constexpr double kCrossBackendRelTol = 1e-4;

struct Proc {
  pid_t pid = -1;
  fs::path out, err;
};

struct Outcome {
  int exit_code = -1;  // -1: killed by a signal
  int signal = 0;
  std::string out, err;
  std::vector<gpulab::Json> events;  // stdout parsed as JSON lines
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

class Scratch {
 public:
  explicit Scratch(const std::string& name)
      : dir_(fs::temp_directory_path() /
             ("gpulab-task-it-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { fs::remove_all(dir_); }
  [[nodiscard]] fs::path operator/(const std::string& s) const { return dir_ / s; }

 private:
  fs::path dir_;
};

Proc spawn(const std::vector<std::string>& args, const fs::path& out, const fs::path& err) {
  // Everything is allocated before fork(): the test may run an HTTP server
  // thread, and the child of a threaded process may only call async-signal-safe
  // functions until it execs.
  std::vector<std::string> full{std::string(GPULAB_BIN_DIR) + "/gpulab-task"};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : full) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out_path = out.string(), err_path = err.string();
  Proc p{-1, out, err};
  p.pid = ::fork();
  if (p.pid == 0) {
    const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return p;
}

// Waits at most `limit`, then kills: a hung rank fails the test instead of hanging ctest.
Outcome finish(const Proc& p, std::chrono::seconds limit = std::chrono::seconds(120)) {
  Outcome o;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (::waitpid(p.pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(p.pid, SIGKILL);
      ::waitpid(p.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  o.out = slurp(p.out);
  o.err = slurp(p.err);
  std::istringstream lines(o.out);
  for (std::string line; std::getline(lines, line);) {
    auto j = gpulab::Json::parse(line, nullptr, false);
    if (!j.is_discarded()) o.events.push_back(std::move(j));
  }
  return o;
}

Outcome run_task(const std::vector<std::string>& args, const Scratch& s, const std::string& tag) {
  return finish(spawn(args, s / (tag + ".out"), s / (tag + ".err")));
}

struct GangSpec {
  std::string backend = "cpu_ref";
  int world = 2;
  int steps = 60;
  std::uint64_t seed = 7;
  int timeout_ms = 20000;                          // a bug must fail, not hang the suite
  std::vector<std::string> extra;                  // every rank
  std::vector<std::vector<std::string>> per_rank;  // rank-specific flags
};

// Launches all ranks at once, rendezvous through a fresh directory (or the
// flags in `extra`), and collects every rank's outcome.
std::vector<Outcome> run_gang(const GangSpec& g, const Scratch& s, const std::string& tag,
                              bool dir_rendezvous = true) {
  std::vector<Proc> procs;
  for (int r = 0; r < g.world; ++r) {
    std::vector<std::string> args{"train",        "--json",
                                  "--backend",    g.backend,
                                  "--rank",       std::to_string(r),
                                  "--world",      std::to_string(g.world),
                                  "--steps",      std::to_string(g.steps),
                                  "--seed",       std::to_string(g.seed),
                                  "--timeout-ms", std::to_string(g.timeout_ms)};
    if (dir_rendezvous) {
      args.push_back("--rendezvous-dir");
      args.push_back((s / (tag + "-rdv")).string());
    }
    args.insert(args.end(), g.extra.begin(), g.extra.end());
    if (static_cast<std::size_t>(r) < g.per_rank.size())
      args.insert(args.end(), g.per_rank[static_cast<std::size_t>(r)].begin(),
                  g.per_rank[static_cast<std::size_t>(r)].end());
    const std::string name = tag + "-rank" + std::to_string(r);
    procs.push_back(spawn(args, s / (name + ".out"), s / (name + ".err")));
  }
  std::vector<Outcome> out;
  for (const auto& p : procs) out.push_back(finish(p));
  return out;
}

std::vector<double> losses(const Outcome& o) {
  std::vector<double> v;
  for (const auto& e : o.events)
    if (e["event"] == "step") v.push_back(e["loss"].get<double>());
  return v;
}

const gpulab::Json& done(const Outcome& o) {
  static const gpulab::Json none = gpulab::Json::object();
  return !o.events.empty() && o.events.back()["event"] == "done" ? o.events.back() : none;
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n' ? 1 : 0;
  return n;
}

void expect_gang_ok(const std::vector<Outcome>& gang) {
  for (std::size_t r = 0; r < gang.size(); ++r) {
    ASSERT_EQ(gang[r].exit_code, 0) << "rank " << r << ": " << gang[r].err;
    ASSERT_EQ(done(gang[r])["event"], "done") << gang[r].out;
    EXPECT_EQ(done(gang[r])["weights_checksum"], done(gang[0])["weights_checksum"]) << "rank " << r;
  }
}

// What this build's HAL loaded (the same discovery gpulab-task does).
const hal::Registry& registry() {
  static const hal::Registry reg(hal::DiscoveryOptions::from_environment());
  return reg;
}

// ---- matmul ----

TEST(TaskMatmul, PassesOnCpuRefAndFastWithOneEventPerLink) {
  Scratch s("matmul");
  for (const std::string be : {"cpu_ref", "fast"}) {
    const auto o =
        run_task({"matmul", "--json", "--backend", be, "--n", "96", "--chain", "6"}, s, be);
    ASSERT_EQ(o.exit_code, 0) << be << ": " << o.err;
    ASSERT_EQ(o.events.size(), 7u) << o.out;
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(o.events[static_cast<std::size_t>(i)]["event"], "matmul");
      EXPECT_EQ(o.events[static_cast<std::size_t>(i)]["i"], i);
      EXPECT_TRUE(o.events[static_cast<std::size_t>(i)]["checksum"]["sum"].is_number());
    }
    EXPECT_EQ(done(o)["pass"], true);
    EXPECT_EQ(done(o)["backend"], be);
    EXPECT_GT(done(o)["gflops"].get<double>(), 0.0);
    EXPECT_LE(done(o)["worst_error_ratio"].get<double>(), 1.0);
  }
}

TEST(TaskMatmul, HumanOutputIsATableWithAVerdict) {
  const auto r = gpulab_test::run_program("gpulab-task", "matmul --n 16 --chain 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pass               true"), std::string::npos) << r.out;
}

TEST(TaskMatmul, CudaWithoutADeviceIsASkip) {
  bool rejected_no_device = false;
  for (const auto& rej : registry().rejected())
    rejected_no_device |= rej.name == "cuda" && rej.reason == hal::RejectReason::kNoDevice;
  if (registry().find("cuda") == nullptr && !rejected_no_device)
    GTEST_SKIP() << "this build has no cuda backend";
  const auto r = gpulab_test::run_program("gpulab-task", "matmul --backend cuda --n 64 --chain 2");
  if (rejected_no_device) {
    EXPECT_EQ(r.exit_code, 77) << r.err;
    EXPECT_NE(r.err.find("backend 'cuda' cannot run here"), std::string::npos) << r.err;
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.err;  // a machine with a GPU runs it
  }
}

// ---- bad usage: exit 2, one line on stderr naming what is wrong ----

TEST(TaskUsage, BadFlagsExitTwoWithOneLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"matmul --n 4097", "--n must be 1..4096"},
      {"matmul --chain 1001", "--chain must be 1..1000"},
      {"matmul --backend nosuch", "unknown backend 'nosuch'; loaded backends: "},
      {"train --backend nosuch", "unknown backend 'nosuch'"},
      {"train --world 2 --rank 2 --rendezvous-dir /tmp/x", "--rank must be 0..1"},
      {"train --world 2", "--world 2 needs --rendezvous"},
      {"train --world 3 --batch 64 --rendezvous-dir /tmp/x", "a multiple of --world 3"},
      {"train --rendezvous http://x:1", "--rendezvous needs --job"},
      {"train --world 2 --rendezvous https://x --job j", "wants http://host:port"},
      {"train --checkpoint-every 5", "--checkpoint-every needs --checkpoint-dir"},
      {"train --lr -1", "--lr must be in (0, 100]"},
      {"train --steps 0", "--steps must be"},
      {"train --address localhost", "--address wants a numeric IPv4 address"},
      {"train --bogus", "--bogus"},
      {"", "A subcommand is required"},
  };
  for (const auto& [args, want] : cases) {
    const auto r = gpulab_test::run_program("gpulab-task", args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << "\n" << r.err;
    EXPECT_TRUE(r.err.starts_with("gpulab-task: error: ")) << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
  // The cpu_ref reference is listed among the loaded backends.
  const auto r = gpulab_test::run_program("gpulab-task", "matmul --backend nosuch");
  EXPECT_NE(r.err.find("cpu_ref"), std::string::npos) << r.err;
}

// ---- train ----

TEST(TaskTrain, GangOfTwoLossFallsAndRerunIsBitIdentical) {
  Scratch s("train");
  GangSpec g;
  g.steps = 80;
  const auto first = run_gang(g, s, "a");
  expect_gang_ok(first);
  const auto curve = losses(first[0]);
  ASSERT_EQ(curve.size(), 80u);
  EXPECT_TRUE(losses(first[1]).empty()) << "only rank 0 reports the loss";
  double head = 0, tail = 0;
  for (int i = 0; i < 10; ++i) {
    head += curve[static_cast<std::size_t>(i)];
    tail += curve[curve.size() - 1 - static_cast<std::size_t>(i)];
  }
  EXPECT_LT(tail, 0.5 * head) << "mean loss of the first 10 steps " << head / 10 << ", last 10 "
                              << tail / 10;
  const auto& d = done(first[0]);
  EXPECT_EQ(d["steps"], 80);
  EXPECT_EQ(d["resumed_from"], 0);
  EXPECT_EQ(d["first_loss"].get<double>(), curve.front());
  EXPECT_EQ(d["final_loss"].get<double>(), curve.back());
  EXPECT_GT(d["allreduce_bytes"].get<std::uint64_t>(),
            80u * 4 * 5000);  // ~ the gradients, each step
  EXPECT_EQ(d["weights_checksum"].get<std::string>().size(), 16u);

  const auto second = run_gang(g, s, "b");
  expect_gang_ok(second);
  EXPECT_EQ(losses(second[0]), curve);  // exact: bit-identical doubles
  EXPECT_EQ(done(second[0])["weights_checksum"], d["weights_checksum"]);

  g.seed = 8;
  const auto other_seed = run_gang(g, s, "c");
  expect_gang_ok(other_seed);
  EXPECT_NE(losses(other_seed[0]), curve);
}

TEST(TaskTrain, CrashedRankIsNamedAndResumeEqualsAnUninterruptedRun) {
  Scratch s("resume");
  GangSpec g;
  g.steps = 50;
  g.extra = {"--checkpoint-every", "10", "--checkpoint-dir", (s / "ref-ckpt").string()};
  const auto reference = run_gang(g, s, "ref");
  expect_gang_ok(reference);

  // Rank 1 is SIGKILLed as step 26 starts; rank 0 must notice within the
  // watchdog timeout and exit 1 naming rank 1.
  g.extra = {"--checkpoint-every", "10", "--checkpoint-dir", (s / "ckpt").string()};
  g.timeout_ms = 1500;
  g.per_rank = {{}, {"--crash-at-step", "26"}};
  const auto crashed = run_gang(g, s, "crash");
  EXPECT_EQ(crashed[1].signal, SIGKILL);
  EXPECT_EQ(crashed[0].exit_code, 1) << crashed[0].err;
  EXPECT_EQ(lines(crashed[0].err), 1) << crashed[0].err;
  EXPECT_NE(crashed[0].err.find("peer rank 1 died"), std::string::npos) << crashed[0].err;
  EXPECT_EQ(losses(crashed[0]).size(), 25u);
  EXPECT_TRUE(fs::exists(s / "ckpt" / "ckpt-00000020.bin"));

  // Relaunch with a fresh rendezvous dir: every rank resumes from step 20.
  g.per_rank.clear();
  g.timeout_ms = 20000;
  const auto resumed = run_gang(g, s, "resumed");
  expect_gang_ok(resumed);
  const auto& d = done(resumed[0]);
  const auto& want = done(reference[0]);
  EXPECT_EQ(d["resumed_from"], 20);
  EXPECT_EQ(done(resumed[1])["resumed_from"], 20);
  EXPECT_EQ(d["final_loss"].get<double>(), want["final_loss"].get<double>());
  EXPECT_EQ(d["first_loss"].get<double>(), want["first_loss"].get<double>());
  EXPECT_EQ(d["weights_checksum"], want["weights_checksum"]);
  const auto full = losses(reference[0]);
  const auto tail = losses(resumed[0]);
  ASSERT_EQ(tail.size(), 30u);
  EXPECT_EQ(tail, std::vector<double>(full.begin() + 20, full.end()));

  // A finished run relaunched resumes at its last checkpoint and does nothing more.
  const auto again = run_gang(g, s, "again");
  expect_gang_ok(again);
  EXPECT_EQ(done(again[0])["resumed_from"], 50);
  EXPECT_EQ(done(again[0])["final_loss"].get<double>(), want["final_loss"].get<double>());
}

TEST(TaskTrain, DamagedOrForeignCheckpointIsRefused) {
  Scratch s("badckpt");
  const std::string dir = (s / "ckpt").string();
  auto o = run_task({"train", "--steps", "10", "--checkpoint-dir", dir, "--checkpoint-every", "5"},
                    s, "w");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  o = run_task({"train", "--steps", "10", "--lr", "0.2", "--checkpoint-dir", dir}, s, "lr");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("belongs to another run: lr 0.1 (this run: 0.2)"), std::string::npos)
      << o.err;
  {
    std::fstream f(fs::path(dir) / "ckpt-00000010.bin",
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x55');
  }
  o = run_task({"train", "--steps", "10", "--checkpoint-dir", dir}, s, "corrupt");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("ckpt-00000010.bin is unusable: checksum"), std::string::npos) << o.err;
}

TEST(TaskTrain, MissingRankTimesOutNamingIt) {
  Scratch s("lonely");
  const auto o = run_task({"train", "--world", "3", "--rank", "1", "--batch", "63",
                           "--rendezvous-dir", (s / "rdv").string(), "--timeout-ms", "300"},
                          s, "r1");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("missing rank 0, 2"), std::string::npos) << o.err;
}

TEST(TaskTrain, HttpRendezvousGangMatchesTheDirectoryGang) {
  Scratch s("http");
  task_test::RendezvousServer server;
  GangSpec g;
  g.steps = 30;
  g.extra = {"--rendezvous", server.url(), "--job", "job-42", "--attempt", "3"};
  const auto http = run_gang(g, s, "http", false);
  expect_gang_ok(http);
  EXPECT_EQ(server.posts(), 2);
  g.extra.clear();
  const auto dir = run_gang(g, s, "dir");
  expect_gang_ok(dir);
  // How the ranks met does not change what they computed.
  EXPECT_EQ(losses(http[0]), losses(dir[0]));
  EXPECT_EQ(done(http[0])["weights_checksum"], done(dir[0])["weights_checksum"]);
}

TEST(TaskTrain, WorldOfOneAndFourAgreeWithTwoWithinTolerance) {
  // The global batch is the same samples whatever the world, so only the
  // gradient summation order differs.
  Scratch s("worlds");
  GangSpec g;
  g.steps = 40;
  g.world = 2;
  const auto two = losses(run_gang(g, s, "w2")[0]);
  ASSERT_EQ(two.size(), 40u);
  for (int world : {1, 4}) {
    g.world = world;
    const auto other = run_gang(g, s, "w" + std::to_string(world));
    expect_gang_ok(other);
    const auto curve = losses(other[0]);
    ASSERT_EQ(curve.size(), two.size());
    for (std::size_t i = 0; i < curve.size(); ++i)
      EXPECT_NEAR(curve[i], two[i], kCrossBackendRelTol * two[i])
          << "world " << world << " step " << i + 1;
  }
}

TEST(TaskTrain, EveryLoadedBackendAgreesWithCpuRef) {
  Scratch s("backends");
  GangSpec g;
  g.steps = 60;
  const auto ref = run_gang(g, s, "cpu_ref");
  expect_gang_ok(ref);
  const auto want = losses(ref[0]);
  int compared = 0;
  for (const std::string be : {"fast", "blas", "opencl", "cuda"}) {
    if (registry().find(be) == nullptr) {
      // Only what this build's HAL really did not load is skipped (and said so).
      std::cout << "[  NOTE    ] backend " << be << " not loaded: skipped\n";
      continue;
    }
    g.backend = be;
    const auto gang = run_gang(g, s, be);
    expect_gang_ok(gang);
    const auto got = losses(gang[0]);
    ASSERT_EQ(got.size(), want.size()) << be;
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, std::fabs(got[i] - want[i]) / want[i]);
    EXPECT_LE(worst, kCrossBackendRelTol) << be;
    std::cout << "[  NOTE    ] " << be << " vs cpu_ref: worst relative loss difference " << worst
              << " over " << got.size() << " steps\n";
    ++compared;
  }
  EXPECT_GE(compared, 1) << "fast is always built";
}

}  // namespace

namespace {

TEST(TaskTrain, RanksThatResumeFromDifferentStepsStopAtOnce) {
  // Rank 0 sees a checkpoint at step 10, rank 1 a directory without one: the
  // first step's agreement check must stop both instead of training apart.
  Scratch s("split");
  const std::string ckpt = (s / "ckpt").string();
  GangSpec g;
  g.steps = 10;
  g.extra = {"--checkpoint-every", "10"};
  g.per_rank = {{"--checkpoint-dir", ckpt}, {"--checkpoint-dir", (s / "ckpt1").string()}};
  expect_gang_ok(run_gang(g, s, "seed"));
  fs::remove_all(s / "ckpt1");
  g.steps = 20;
  const auto split = run_gang(g, s, "split");
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(split[static_cast<std::size_t>(r)].exit_code, 1)
        << split[static_cast<std::size_t>(r)].err;
    EXPECT_NE(split[static_cast<std::size_t>(r)].err.find("ranks disagree on the step"),
              std::string::npos)
        << split[static_cast<std::size_t>(r)].err;
  }
}

}  // namespace
