// The Slurm executor's pure pieces: gres.conf from an inventory, the batch
// script, scontrol's answer and the state mirror, the srun environment of a
// rank, the job spec's `executor` field, and the command runner. What needs
// a running Slurm is in tests/p12-platform/slurm/ (label slurm).
#include <gtest/gtest.h>

#include <map>

#include "gpulab/errors.hpp"
#include "platform/command.hpp"
#include "platform/inventory.hpp"
#include "platform/job_spec.hpp"
#include "platform/slurm_gres_conf.hpp"
#include "platform/slurm_script.hpp"
#include "platform/slurm_status.hpp"
#include "platform/task/slurm_env.hpp"

namespace {

using gpulab::Json;
using namespace platform;

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const gpulab::UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SlurmGresConf, OneLinePerDeviceTypedByBackendAndTheNodeCounts) {
  const auto devices = parse_device_spec("cpu_ref:2,fast:1");
  const auto c =
      render_gres_conf("gpu-n1", devices,
                       {{"cpu_ref:0", "/dev/g0"}, {"cpu_ref:1", "/dev/g1"}, {"fast:0", "/dev/g2"}});
  EXPECT_EQ(c.gres_conf,
            "# gres.conf for Slurm node gpu-n1: 3 device(s) of the gpulab inventory\n"
            "# (written by gpulabctl slurm gres-conf; Type is the HAL backend)\n"
            "NodeName=gpu-n1 Name=gpu Type=cpu_ref File=/dev/g0\n"
            "NodeName=gpu-n1 Name=gpu Type=cpu_ref File=/dev/g1\n"
            "NodeName=gpu-n1 Name=gpu Type=fast File=/dev/g2\n");
  EXPECT_EQ(c.node_line, "NodeName=gpu-n1 Gres=gpu:cpu_ref:2,gpu:fast:1\n");
}

TEST(SlurmGresConf, CudaDevicesDefaultToTheirNvidiaNode) {
  const auto c = render_gres_conf("n", parse_device_spec("cuda:2"), {});
  EXPECT_NE(c.gres_conf.find("Type=cuda File=/dev/nvidia0\n"), std::string::npos) << c.gres_conf;
  EXPECT_NE(c.gres_conf.find("Type=cuda File=/dev/nvidia1\n"), std::string::npos) << c.gres_conf;
  EXPECT_EQ(c.node_line, "NodeName=n Gres=gpu:cuda:2\n");
  EXPECT_EQ(
      render_gres_conf("n", parse_device_spec("cuda:1"), {}, "NodeAddr=10.0.0.7 CPUs=64").node_line,
      "NodeName=n Gres=gpu:cuda:1 NodeAddr=10.0.0.7 CPUs=64\n");
}

TEST(SlurmGresConf, RefusesWhatSlurmWouldMisreadNamingIt) {
  const auto two = parse_device_spec("cpu_ref:2");
  EXPECT_EQ(usage_error([&] {
              render_gres_conf("n", two, {{"cpu_ref:0", "/dev/g0"}});
            }),
            "cpu_ref:1: no device file (HAL cpu_ref devices have none); give --device-file "
            "cpu_ref:1=PATH");
  EXPECT_EQ(
      usage_error([&] {
        render_gres_conf("n", two, {{"cpu_ref:0", "/a"}, {"cpu_ref:1", "/b"}, {"fast:0", "/c"}});
      }),
      "--device-file 'fast:0=/c': no device fast:0 in the inventory");
  EXPECT_EQ(usage_error([&] { render_gres_conf("n[1-2]", two, {}); }),
            "--node 'n[1-2]': a Slurm node name is letters, digits, '-', '_' and '.'");
  EXPECT_EQ(usage_error([&] {
              render_gres_conf("n", two, {{"cpu_ref:0", "rel/g0"}, {"cpu_ref:1", "/b"}});
            }),
            "--device-file cpu_ref:0: 'rel/g0' must be an absolute path without blanks or commas");
  EXPECT_EQ(usage_error([&] { render_gres_conf("n", {}, {}); }),
            "--devices: the inventory has no devices");
  EXPECT_EQ(usage_error([&] {
              render_gres_conf("n", two, {{"cpu_ref:0", "/a"}, {"cpu_ref:1", "/b"}}, "CPUs=8\nX=1");
            }),
            "--node-attrs: one line of KEY=VALUE attributes, without '#'");
}

JobSpec train_spec(int gpus) {
  return parse_job_spec(Json{{"name", "mlp"},
                             {"kind", "train"},
                             {"gpus", gpus},
                             {"backend", "cpu_ref"},
                             {"executor", "slurm"},
                             {"params", Json{{"steps", 6}, {"checkpoint_every", 2}}}});
}

TEST(SlurmScript, OneAllocationOneGpuPerTaskOneSrunStep) {
  SlurmScriptInputs in{"j-000007",
                       2,
                       train_spec(2),
                       "/opt/gpulab/bin/gpulab-task",
                       "/state/slurm/j-000007/attempt-2",
                       "/state/checkpoints/j-000007"};
  const auto s = render_batch_script(in);
  EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0U);
  for (const char* line : {"#SBATCH --job-name=gpulab-j-000007\n", "#SBATCH --ntasks=2\n",
                           "#SBATCH --gpus-per-task=cpu_ref:1\n", "#SBATCH --no-requeue\n",
                           "#SBATCH --output=/state/slurm/j-000007/attempt-2/batch.out\n",
                           "#SBATCH --chdir=/state/slurm/j-000007/attempt-2\n"}) {
    EXPECT_NE(s.find(line), std::string::npos) << line << "\n" << s;
  }
  EXPECT_NE(s.find("exec srun --kill-on-bad-exit=1 --gpu-bind=per_task:1 "
                   "--output=/state/slurm/j-000007/attempt-2/rank-%t.out bash -c 'echo \"gpulab: "
                   "rank $SLURM_PROCID "
                   "of $SLURM_NTASKS on $SLURMD_NODENAME, "
                   "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-}\" >&2; "
                   "exec \"$@\"' gpulab-rank /opt/gpulab/bin/gpulab-task train --slurm --backend "
                   "cpu_ref --steps 6 --seed 7 "
                   "--checkpoint-dir /state/checkpoints/j-000007 --checkpoint-every 2 --batch 64 "
                   "--hidden 64 "
                   "--rendezvous-dir /state/slurm/j-000007/attempt-2/rendezvous --address "
                   "auto --json\n"),
            std::string::npos)
      << s;
  // Every #SBATCH line comes before the first command: sbatch stops reading them there.
  EXPECT_LT(s.rfind("#SBATCH"), s.find("set -eu"));
  EXPECT_EQ(s.find("--nodes"), std::string::npos) << "Slurm packs the ranks unless the spec says";
}

TEST(SlurmScript, NodesSpreadTheRanksAndOneAddressServesOneNode) {
  auto spec = train_spec(4);
  spec.nodes = 2;
  SlurmScriptInputs in{"j-000003", 1, spec, "/bin/gpulab-task", "/s/a", "/s/c", "127.0.0.1"};
  const auto s = render_batch_script(in);
  EXPECT_NE(s.find("#SBATCH --ntasks=4\n#SBATCH --nodes=2\n"), std::string::npos) << s;
  EXPECT_NE(s.find(" --address 127.0.0.1 --json\n"), std::string::npos) << s;
}

TEST(SlurmScript, MatmulIsOneTaskWithoutRendezvous) {
  const auto spec = parse_job_spec(Json{{"name", "mm"},
                                        {"kind", "matmul"},
                                        {"backend", "fast"},
                                        {"executor", "slurm"},
                                        {"params", Json{{"n", 32}}}});
  SlurmScriptInputs in{"j-000001", 1, spec, "/bin/gpulab-task", "/s/a", "/s/c"};
  EXPECT_EQ(slurm_rank_argv(in),
            (std::vector<std::string>{"matmul", "--backend", "fast", "--n", "32", "--chain", "4",
                                      "--seed", "1", "--json"}));
  EXPECT_NE(render_batch_script(in).find("#SBATCH --ntasks=1\n"), std::string::npos);
}

TEST(SlurmScript, ShellQuotingSurvivesBlanksAndQuotes) {
  EXPECT_EQ(shell_quote("/plain/path-1_2.x"), "/plain/path-1_2.x");
  EXPECT_EQ(shell_quote("/a b"), "'/a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_quote(""), "''");
}

// A real line of `scontrol show job -o` (Slurm 22.05), trimmed of nothing.
constexpr const char* kCompleted =
    "JobId=1 JobName=gpulab-j-000001 UserId=root(0) GroupId=root(0) MCS_label=N/A "
    "Priority=4294901759 Nice=0 "
    "Account=(null) QOS=(null) JobState=COMPLETED Reason=None Dependency=(null) Requeue=0 "
    "Restarts=0 BatchFlag=1 "
    "Reboot=0 ExitCode=0:0 RunTime=00:00:01 TimeLimit=UNLIMITED TimeMin=N/A "
    "AllocNode:Sid=localhost:17326 "
    "NodeList=gpulab-n1 BatchHost=gpulab-n1 NumNodes=1 NumCPUs=2 NumTasks=2 CPUs/Task=1 "
    "ReqB:S:C:T=0:0:*:* "
    "TRES=cpu=2,node=1,billing=2 Socks/Node=* Power= TresPerTask=gres:gpu:1";

TEST(SlurmStatus, ParsesScontrolLinesByJobId) {
  const std::string text =
      std::string(kCompleted) +
      "\nJobId=2 JobName=gpulab-j-000002 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 "
      "NodeList=gpulab-n1\n"
      "JobId=3 JobName=x JobState=PENDING Reason=launch failed requeued held ExitCode=0:9 "
      "NodeList=(null)\n";
  const auto jobs = parse_scontrol_jobs(text);
  ASSERT_EQ(jobs.size(), 3U);
  EXPECT_EQ(jobs.at("1").name, "gpulab-j-000001");
  EXPECT_EQ(jobs.at("1").state, "COMPLETED");
  EXPECT_EQ(jobs.at("1").nodes, "gpulab-n1");
  EXPECT_EQ(jobs.at("1").exit_code, 0);
  EXPECT_EQ(jobs.at("2").exit_code, 1);
  EXPECT_EQ(jobs.at("2").reason, "NonZeroExitCode");
  EXPECT_EQ(jobs.at("3").reason, "launch failed requeued held");
  EXPECT_EQ(jobs.at("3").signal, 9);
  EXPECT_TRUE(parse_scontrol_jobs("No jobs in the system\n").empty());
  EXPECT_TRUE(parse_scontrol_jobs("").empty());
}

TEST(SlurmStatus, StatesMirrorOntoGpulabStates) {
  EXPECT_EQ(mirror_state("PENDING"), JobState::kPending);
  EXPECT_EQ(mirror_state("CONFIGURING"), JobState::kPending);
  EXPECT_EQ(mirror_state("RUNNING"), JobState::kRunning);
  EXPECT_EQ(mirror_state("COMPLETING"), JobState::kRunning);
  EXPECT_EQ(mirror_state("COMPLETED"), JobState::kSucceeded);
  EXPECT_EQ(mirror_state("CANCELLED"), JobState::kCancelled);
  for (const char* failed :
       {"FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "PREEMPTED"}) {
    EXPECT_EQ(mirror_state(failed), JobState::kFailed) << failed;
  }
  EXPECT_EQ(mirror_state("WHATEVER"), std::nullopt);
}

TEST(SlurmEnv, RankAndWorldComeFromSrun) {
  namespace task = gpulab::platform::task;
  std::map<std::string, std::string> env{{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}};
  const auto get = [&](const char* n) -> const char* {
    const auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  task::TrainOptions o;
  task::apply_slurm_env(o, get);
  EXPECT_EQ(o.rank, 1);
  EXPECT_EQ(o.world, 2);

  task::TrainOptions explicit_rank;
  explicit_rank.rank = 1;
  explicit_rank.world = 2;
  EXPECT_EQ(usage_error([&] { task::apply_slurm_env(explicit_rank, get); }),
            "--slurm takes the rank and world from SLURM_PROCID and SLURM_NTASKS; drop --rank and "
            "--world");
  env["SLURM_PROCID"] = "2";
  EXPECT_EQ(usage_error([&] {
              task::TrainOptions x;
              task::apply_slurm_env(x, get);
            }),
            "--slurm: SLURM_PROCID must be a whole number in [0, 1], got '2'");
  env.erase("SLURM_NTASKS");
  EXPECT_EQ(usage_error([&] {
              task::TrainOptions x;
              task::apply_slurm_env(x, get);
            }),
            "--slurm: SLURM_NTASKS is not set (run the rank under srun)");
}

// --address auto: the node's own address on the route to srun's node.
TEST(SlurmEnv, AutoAddressIsThisNodesAddressTowardTheLaunchNode) {
  namespace task = gpulab::platform::task;
  std::map<std::string, std::string> env{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}};
  const auto get = [&](const char* n) -> const char* {
    const auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  const auto with = [&](const std::string& address) {
    task::TrainOptions o;
    o.address = address;
    task::apply_slurm_env(o, get);
    return o.address;
  };
  EXPECT_EQ(usage_error([&] { with("auto"); }),
            "--address auto: SLURM_LAUNCH_NODE_IPADDR is not set (run the rank under srun, or give "
            "--address)");
  env["SLURM_LAUNCH_NODE_IPADDR"] = "127.0.0.1";
  EXPECT_EQ(with("auto"), "127.0.0.1");  // loopback is reached from loopback
  EXPECT_EQ(with("10.1.2.3"), "10.1.2.3") << "an address given is kept";
  env["SLURM_LAUNCH_NODE_IPADDR"] = "node-1";
  EXPECT_EQ(usage_error([&] { with("auto"); }),
            "--address auto: SLURM_LAUNCH_NODE_IPADDR: 'node-1' is not a numeric IPv4 address");
  EXPECT_EQ(task::local_address_toward("127.0.0.9"), "127.0.0.1") << "the kernel's source for 127/8";
}

std::string spec_error(const Json& doc) {
  try {
    parse_job_spec(doc);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(SlurmSpec, ExecutorFieldIsCheckedAndKept) {
  const auto s = train_spec(2);
  EXPECT_EQ(s.executor, Executor::kSlurm);
  EXPECT_EQ(to_json(s).at("executor"), "slurm");
  EXPECT_EQ(parse_job_spec(to_json(s)).executor, Executor::kSlurm);
  EXPECT_EQ(parse_job_spec(Json{{"name", "x"}, {"kind", "train"}}).executor, Executor::kNative);
  EXPECT_EQ(spec_error(Json{{"name", "x"}, {"kind", "train"}, {"executor", "k8s"}}),
            "executor: unknown executor 'k8s' (native, slurm)");
  EXPECT_EQ(spec_error(Json{{"name", "x"}, {"kind", "train"}, {"executor", "slurm"}}),
            "backend: executor slurm needs a named backend (cpu_ref, fast, blas, opencl, cuda): it "
            "is the GRES "
            "type the job asks Slurm for");
  EXPECT_EQ(spec_error(Json{{"name", "x"},
                            {"kind", "serve"},
                            {"backend", "fast"},
                            {"executor", "slurm"},
                            {"params", Json{{"model", "tiny"}}}}),
            "executor: slurm runs matmul and train jobs; a serve job needs the native executor "
            "(its agent probes "
            "GET /health and reports the endpoint)");
  EXPECT_EQ(spec_error(Json{{"name", "x"},
                            {"kind", "train"},
                            {"backend", "fast"},
                            {"executor", "slurm"},
                            {"gpus", 5000}}),
            "gpus: must be between 1 and 256, got 5000");
}

TEST(SlurmSpec, NodesIsForSlurmAndAtMostOneNodePerRank) {
  Json doc = to_json(train_spec(2));
  EXPECT_FALSE(doc.contains("nodes")) << "unset: absent, so older specs keep their JSON";
  doc["nodes"] = 2;
  const auto s = parse_job_spec(doc);
  EXPECT_EQ(s.nodes, 2);
  EXPECT_EQ(to_json(s).at("nodes"), 2);
  doc["nodes"] = 3;
  EXPECT_EQ(spec_error(doc), "nodes: 3 nodes for 2 rank(s): every node needs a rank");
  doc["nodes"] = 0;
  EXPECT_EQ(spec_error(doc), "nodes: must be between 1 and 256, got 0");
  doc["nodes"] = 1;
  doc["executor"] = "native";
  EXPECT_EQ(spec_error(doc), "nodes: only for executor slurm (the native scheduler places ranks by topology)");
}

TEST(Command, KeepsBothStreamsAndTheExitCode) {
  const auto r =
      run_command({"sh", "-c", "cat; echo err >&2; exit 3"}, "in\n", std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "in\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(first_error_line(r), "err");
}

TEST(Command, AMissingProgramIs127AndAHangIsKilled) {
  const auto missing = run_command({"gpulab-no-such-program"}, "", std::chrono::seconds(60));
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.err.find("gpulab-no-such-program"), std::string::npos);
  EXPECT_FALSE(find_on_path("gpulab-no-such-program"));
  EXPECT_TRUE(find_on_path("sh"));
  const auto hang = run_command({"sleep", "600"}, "", std::chrono::milliseconds(100));
  EXPECT_TRUE(hang.timed_out);
  EXPECT_EQ(hang.exit_code, -1);
  EXPECT_EQ(first_error_line(hang), "no answer before the timeout");
}

}  // namespace
