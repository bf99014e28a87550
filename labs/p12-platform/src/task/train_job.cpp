#include "platform/task/train_job.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <memory>

#include "gpulab/errors.hpp"
#include "gpulab/timing.hpp"
#include "platform/task/checkpoint.hpp"
#include "platform/task/checksum.hpp"
#include "platform/task/dir_rendezvous.hpp"
#include "platform/task/gang.hpp"
#include "platform/task/hal_backend.hpp"
#include "platform/task/http_rendezvous.hpp"
#include "platform/task/mlp.hpp"
#include "platform/task/synthetic_data.hpp"
#include "ring_allreduce/collectives.hpp"

namespace gpulab::platform::task {

namespace {

constexpr std::uint64_t kMaxSteps = 10'000'000;
constexpr int kMaxWorld = 256;

MlpShape shape_of(const TrainOptions& o) {
  return train_shape(o.hidden);
}

std::unique_ptr<Rendezvous> make_rendezvous(const TrainOptions& o) {
  if (!o.rendezvous_dir.empty()) return std::make_unique<DirRendezvous>(o.rendezvous_dir);
  if (!o.rendezvous_url.empty())
    return std::make_unique<HttpRendezvous>(o.rendezvous_url, o.job, o.attempt);
  return nullptr;
}

// The binary64 statistics all-reduced every step: the loss sum and correct
// count, then per rank (its own slot, zeros elsewhere) the two 32-bit halves
// of its weights checksum and its step. Sums of one non-zero integer and
// zeros are exact, so after the all-reduce every rank reads every rank's slot.
class StepStats {
 public:
  StepStats(int rank, int world) : rank_(rank), v_(2 + 3 * static_cast<std::size_t>(world), 0.0) {}
  void fill(double loss_sum, double correct, std::uint64_t checksum, std::uint64_t step) {
    std::fill(v_.begin(), v_.end(), 0.0);
    v_[0] = loss_sum;
    v_[1] = correct;
    double* slot = v_.data() + 2 + 3 * rank_;
    slot[0] = static_cast<double>(checksum >> 32);
    slot[1] = static_cast<double>(checksum & 0xffffffffULL);
    slot[2] = static_cast<double>(step);
  }
  std::span<double> data() { return v_; }
  [[nodiscard]] double loss_sum() const { return v_[0]; }
  [[nodiscard]] double correct() const { return v_[1]; }
  // RunError naming the first rank whose checksum or step differs from ours.
  void require_agreement(std::uint64_t checksum, std::uint64_t step) const {
    const int world = static_cast<int>((v_.size() - 2) / 3);
    for (int q = 0; q < world; ++q) {
      const double* slot = v_.data() + 2 + 3 * static_cast<std::size_t>(q);
      const auto theirs =
          (static_cast<std::uint64_t>(slot[0]) << 32) | static_cast<std::uint64_t>(slot[1]);
      const auto their_step = static_cast<std::uint64_t>(slot[2]);
      if (their_step != step)
        throw RunError(
            fmt::format("ranks disagree on the step: rank {} is at step {}, rank {} at "
                        "step {} (do all ranks see the same --checkpoint-dir?)",
                        q, their_step, rank_, step));
      if (theirs != checksum)
        throw RunError(
            fmt::format("ranks disagree on the weights at step {}: rank {} has {}, "
                        "rank {} has {}",
                        step, q, hex64(theirs), rank_, hex64(checksum)));
    }
  }

 private:
  int rank_;
  std::vector<double> v_;
};

std::uint64_t weights_checksum(const std::vector<float>& params) {
  return fnv1a64_of(std::span<const float>(params));
}

}  // namespace

void validate(const TrainOptions& o) {
  if (o.world < 1 || o.world > kMaxWorld)
    throw UsageError(fmt::format("--world must be 1..{}; got {}", kMaxWorld, o.world));
  if (o.rank < 0 || o.rank >= o.world)
    throw UsageError(
        fmt::format("--rank must be 0..{} for --world {}; got {}", o.world - 1, o.world, o.rank));
  if (o.steps < 1 || o.steps > kMaxSteps)
    throw UsageError(fmt::format("--steps must be 1..{}; got {}", kMaxSteps, o.steps));
  if (o.batch < 1 || o.batch > 65536 || o.batch % static_cast<std::uint64_t>(o.world) != 0)
    throw UsageError(fmt::format("--batch must be 1..65536 and a multiple of --world {}; got {}",
                                 o.world, o.batch));
  if (o.hidden < 1 || o.hidden > 1024)
    throw UsageError(fmt::format("--hidden must be 1..1024; got {}", o.hidden));
  if (!(o.lr > 0.0f) || !std::isfinite(o.lr) || o.lr > 100.0f)
    throw UsageError(fmt::format("--lr must be in (0, 100]; got {}", o.lr));
  if (o.checkpoint_every > 0 && o.checkpoint_dir.empty())
    throw UsageError("--checkpoint-every needs --checkpoint-dir");
  if (o.timeout_ms < 1 || o.timeout_ms > 3'600'000)
    throw UsageError(fmt::format("--timeout-ms must be 1..3600000; got {}", o.timeout_ms));
  const bool by_dir = !o.rendezvous_dir.empty();
  const bool by_url = !o.rendezvous_url.empty();
  if (by_dir && by_url)
    throw UsageError("--rendezvous and --rendezvous-dir exclude each other; give one");
  if (by_url && o.job.empty()) throw UsageError("--rendezvous needs --job");
  if (!by_url && !o.job.empty()) throw UsageError("--job needs --rendezvous");
  if (o.world > 1 && !by_dir && !by_url)
    throw UsageError(
        fmt::format("--world {} needs --rendezvous URL --job ID --attempt A or "
                    "--rendezvous-dir DIR",
                    o.world));
  if (by_url) (void)parse_base_url(o.rendezvous_url);
  in_addr ignored{};
  if (::inet_pton(AF_INET, o.address.c_str(), &ignored) != 1)
    throw UsageError(fmt::format("--address wants a numeric IPv4 address; got '{}'", o.address));
}

TrainSummary run_train(const TrainOptions& o, const TrainEvents& events) {
  validate(o);
  const MlpShape shape = shape_of(o);
  const HalBackend hal_backend(o.backend);
  const hal::Backend& be = hal_backend.backend();
  const std::uint64_t rows = o.batch / static_cast<std::uint64_t>(o.world);
  for (const std::uint64_t dim : {rows, shape.hidden}) {
    const hal::Request r{hal::Op::kMatmul, hal::DType::kF32, dim, dim, dim};
    if (!be.accepts(r))
      throw UsageError(
          fmt::format("backend '{}' cannot train this model: {}", be.name(), be.why_not(r)));
  }

  const RunIdentity identity{o.seed,
                             static_cast<std::uint32_t>(o.world),
                             shape.param_count(),
                             static_cast<std::uint32_t>(o.hidden),
                             o.batch,
                             o.lr};
  TrainSummary s;
  s.rank = o.rank;
  s.world = o.world;
  s.backend = std::string(be.name());
  s.steps = o.steps;
  std::vector<float> params = init_params(shape, o.seed);
  if (!o.checkpoint_dir.empty()) {
    if (auto ckpt = load_latest_checkpoint(o.checkpoint_dir)) {
      const std::string origin =
          (std::filesystem::path(o.checkpoint_dir) / checkpoint_file_name(ckpt->step)).string();
      require_same_run(*ckpt, identity, origin);
      if (ckpt->step > o.steps)
        throw UsageError(fmt::format("checkpoint {} is at step {}, past --steps {}", origin,
                                     ckpt->step, o.steps));
      params = std::move(ckpt->params);
      s.resumed_from = ckpt->step;
      s.first_loss = ckpt->first_loss;
      s.final_loss = ckpt->last_loss;
    }
  }

  const std::unique_ptr<Rendezvous> rv = make_rendezvous(o);
  ring::Transport transport =
      join_gang(o.rank, o.world, o.address, rv.get(), std::chrono::milliseconds(o.timeout_ms));

  const Teacher teacher(shape, o.seed);
  std::vector<float> grads(params.size());
  StepStats stats(o.rank, o.world);
  const Stopwatch clock;
  // Pace, for the agent's MFU gauge: every rank says about once a second how
  // many model FLOPs its steps since the last pace did, in how many seconds
  // of wall clock (its all-reduces and checkpoints included, as MFU counts them).
  const std::uint64_t step_flops = forward_backward_flops(shape, rows);
  auto pace_from = std::chrono::steady_clock::now();
  std::uint64_t pace_steps = 0;
  std::uint64_t step = s.resumed_from;
  try {
    while (step < o.steps) {
      ++step;
      if (step == o.crash_at_step) {
        std::fflush(stdout);
        ::kill(::getpid(), SIGKILL);  // a real crash: no unwinding, sockets closed by the kernel
      }
      const Batch shard = shard_for(teacher, shape, o.seed, step, o.batch, o.rank, o.world);
      const LossSum local =
          forward_backward(be, shape, params, shard, static_cast<double>(o.batch), grads);
      const std::uint64_t checksum = weights_checksum(params);
      stats.fill(local.loss, static_cast<double>(local.correct), checksum, step);
      ring::ring_allreduce<double>(transport, stats.data());
      ring::ring_allreduce<float>(transport, std::span<float>(grads));
      stats.require_agreement(checksum, step);

      const double loss = stats.loss_sum() / static_cast<double>(o.batch);
      if (!std::isfinite(loss))
        throw RunError(fmt::format("the loss is {} at step {} (try a smaller --lr)", loss, step));
      if (step == 1) s.first_loss = loss;
      s.final_loss = loss;
      s.final_accuracy = stats.correct() / static_cast<double>(o.batch);
      sgd_update(params, grads, o.lr);

      ++pace_steps;
      const auto now = std::chrono::steady_clock::now();
      if (const double since = std::chrono::duration<double>(now - pace_from).count();
          since >= kPaceSeconds && events.emit) {
        events.emit({{"event", "pace"},
                     {"rank", o.rank},
                     {"step", step},
                     {"steps", pace_steps},
                     {"seconds", since},
                     {"model_flops", pace_steps * step_flops}});
        pace_from = now;
        pace_steps = 0;
      }
      if (o.rank != 0) continue;
      if (events.emit)
        events.emit(
            {{"event", "step"}, {"step", step}, {"loss", loss}, {"accuracy", s.final_accuracy}});
      if (o.checkpoint_every > 0 && step % o.checkpoint_every == 0) {
        Checkpoint c{identity, step, s.first_loss, loss, params};
        std::filesystem::path file;
        try {
          file = write_checkpoint(o.checkpoint_dir, c);
        } catch (const std::runtime_error& e) {
          throw RunError(fmt::format("rank 0: checkpoint at step {} failed: {}", step, e.what()));
        }
        if (events.emit)
          events.emit({{"event", "checkpoint"}, {"step", step}, {"path", file.string()}});
      }
    }
    // The final weights, compared once more after the last update.
    const std::uint64_t checksum = weights_checksum(params);
    stats.fill(0, 0, checksum, step);
    ring::ring_allreduce<double>(transport, stats.data());
    stats.require_agreement(checksum, step);
    s.weights_checksum = hex64(checksum);
  } catch (const ring::PeerFailure& e) {
    throw RunError(fmt::format("{} (step {})", describe_peer_failure(o.rank, e), step));
  }
  s.seconds = clock.seconds();
  s.allreduce_bytes = transport.bytes_sent();
  return s;
}

gpulab::Json done_event(const TrainSummary& s) {
  gpulab::Json j;
  j["event"] = "done";
  j["steps"] = s.steps;
  j["final_loss"] = s.final_loss;
  j["first_loss"] = s.first_loss;
  j["resumed_from"] = s.resumed_from;
  j["weights_checksum"] = s.weights_checksum;
  j["allreduce_bytes"] = s.allreduce_bytes;
  j["kind"] = "train";
  j["rank"] = s.rank;
  j["world"] = s.world;
  j["backend"] = s.backend;
  j["final_accuracy"] = s.final_accuracy;
  j["seconds"] = s.seconds;
  return j;
}

}  // namespace gpulab::platform::task
