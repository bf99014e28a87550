// gpulab-task: the workloads the platform's agents launch. `matmul` runs a
// verified chain of FP32 matmuls on one HAL backend; `train` is one rank of a
// data-parallel gang that trains an MLP with ring all-reduce over TCP,
// checkpoints, and resumes. --json prints one event per line for the agent.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "gpulab/cli.hpp"
#include "platform/task/human_output.hpp"
#include "platform/task/matmul_job.hpp"
#include "platform/task/slurm_env.hpp"
#include "platform/task/train_job.hpp"

namespace task = gpulab::platform::task;

int main(int argc, char** argv) {
  CLI::App app{
      "gpulab-task: the platform's workloads, run on a HAL backend. `matmul` checks a chain of "
      "FP32 matmuls against cpu_ref;\n`train` is one rank of a data-parallel gang (ring all-reduce "
      "over TCP) whose loss falls deterministically and survives restarts from checkpoints."};
  app.require_subcommand(1);
  bool json = false;
  app.add_flag("--json", json, "Print one JSON event per line (step/matmul events, then done)");

  task::MatmulOptions mm;
  auto* matmul =
      app.add_subcommand("matmul", "A verified chain of n x n FP32 matmuls; prints GFLOP/s");
  matmul->add_option("--backend", mm.backend, "HAL backend: cpu_ref, fast, blas, opencl, cuda, ...")
      ->capture_default_str();
  matmul->add_option("--n", mm.n, "Matrix size (1..4096)")->capture_default_str();
  matmul->add_option("--chain", mm.chain, "Number of matmuls in the chain (1..1000)")
      ->capture_default_str();
  matmul->add_option("--seed", mm.seed, "Seed of the inputs")->capture_default_str();
  matmul->add_flag("--json", json, "Same as the global --json");

  task::TrainOptions tr;
  auto* train = app.add_subcommand("train", "One rank of a data-parallel MLP training gang");
  train->add_option("--backend", tr.backend, "HAL backend for every matmul")->capture_default_str();
  train->add_option("--rank", tr.rank, "This process's rank (0..world-1)")->capture_default_str();
  train->add_option("--world", tr.world, "Number of ranks in the gang")->capture_default_str();
  bool from_slurm = false;
  train->add_flag("--slurm", from_slurm,
                  "Rank and world from SLURM_PROCID and SLURM_NTASKS (a rank started by srun)");
  train->add_option("--steps", tr.steps, "Total training steps of the run")->capture_default_str();
  train->add_option("--seed", tr.seed, "Seed of data, teacher and initial weights")
      ->capture_default_str();
  train->add_option("--checkpoint-dir", tr.checkpoint_dir,
                    "Where rank 0 checkpoints and every rank resumes from");
  train
      ->add_option("--checkpoint-every", tr.checkpoint_every, "Checkpoint every K steps (0: never)")
      ->capture_default_str();
  train->add_option("--batch", tr.batch, "Global batch (a multiple of --world)")
      ->capture_default_str();
  train->add_option("--hidden", tr.hidden, "Width of the two hidden layers")->capture_default_str();
  train->add_option("--lr", tr.lr, "SGD learning rate")->capture_default_str();
  train->add_option("--rendezvous", tr.rendezvous_url, "Control plane base URL (http://host:port)");
  train->add_option("--job", tr.job, "Job id for --rendezvous");
  train->add_option("--attempt", tr.attempt, "Gang attempt for --rendezvous")
      ->capture_default_str();
  train->add_option("--rendezvous-dir", tr.rendezvous_dir,
                    "Rendezvous through files in DIR (fresh per launch)");
  train->add_option("--address", tr.address,
                    "IPv4 address this rank listens on (with --slurm also auto: its node's address "
                    "toward the node srun started on)")
      ->capture_default_str();
  train
      ->add_option("--timeout-ms", tr.timeout_ms,
                   "Rendezvous, connect and collective watchdog timeout")
      ->capture_default_str();
  train
      ->add_option("--crash-at-step", tr.crash_at_step,
                   "Fault injection: SIGKILL this rank when step S starts (0: never)")
      ->capture_default_str();
  train->add_flag("--json", json, "Same as the global --json");

  return gpulab::run_program("gpulab-task", app, argc, argv, [&]() -> int {
    task::HumanPrinter human(stdout);
    const auto emit = [&](const gpulab::Json& e) {
      if (json)
        task::print_json_line(stdout, e);
      else
        human.print(e);
    };
    if (matmul->parsed()) {
      const auto s =
          task::run_matmul_chain(mm, [&](const task::LinkResult& l) { emit(task::link_event(l)); });
      emit(task::done_event(s));
      if (s.pass) return gpulab::kExitOk;
      // Keep stdout pure JSON lines under --json: the FAIL line goes to stderr there.
      fmt::print(
          json ? stderr : stdout,
          "FAIL: {} of {} links outside FP32 tolerance on {} (worst error {:.3g}x tolerance)\n",
          s.failed_links, s.chain, s.backend, s.worst_ratio);
      return gpulab::kExitCheckFailed;
    }
    if (from_slurm) task::apply_slurm_env(tr, [](const char* name) { return std::getenv(name); });
    const auto s = task::run_train(tr, {emit});
    emit(task::done_event(s));
    return gpulab::kExitOk;
  });
}
