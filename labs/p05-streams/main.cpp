// stream-sched: the curriculum's four stream/event scenarios, plus graph
// capture/replay and priority streams as subcommands.
#include <fmt/format.h>

#include <string>

#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/table.hpp"
#include "streams/extensions.hpp"
#include "streams/scenarios.hpp"

namespace {

using namespace streams;
constexpr std::string_view kProgram = "stream-sched";

struct Flags {
  gpulab::CommonOptions common;
  std::string clock_name = "wall";
  Clock clock = Clock::kWall;
  int trials = 200;
  int chunks = 8;
  int reps = 200;
};

const char* verdict(bool ok) {
  return ok ? "PASS" : "FAIL";
}

int run_scenarios(const Flags& f) {
  const int trials = f.common.quick ? 20 : f.trials;
  const PipelineResult s1 = scenario_pipeline(f.clock);
  const DefaultStreamResult s2 = scenario_default_stream(f.clock);
  const LifetimeResult s3 = scenario_lifetime(f.clock, trials, f.common.seed);
  const DeadlockResult s4 = scenario_deadlock(f.clock);
  const bool all = s1.pass && s2.pass && s3.pass && s4.pass;
  if (f.common.json) {
    gpulab::print_json(gpulab::Json{{"clock", f.clock == Clock::kWall ? "wall" : "virtual"},
                                    {"scenario1",
                                     {{"serial_ms", s1.serial_ms},
                                      {"pipelined_ms", s1.pipelined_ms},
                                      {"speedup", s1.speedup},
                                      {"pass", s1.pass}}},
                                    {"scenario2",
                                     {{"one_stream_ms", s2.one_stream_ms},
                                      {"two_stream_ms", s2.two_stream_ms},
                                      {"overlap", s2.overlap},
                                      {"pass", s2.pass}}},
                                    {"scenario3",
                                     {{"host_ordered_trials", s3.host_trials},
                                      {"host_ordered_corrupted", s3.host_corrupted},
                                      {"stream_ordered_trials", s3.trials},
                                      {"stream_ordered_corrupted", s3.stream_corrupted},
                                      {"block_reused", s3.reused},
                                      {"event_edges", s3.edges},
                                      {"pass", s3.pass}}},
                                    {"scenario4",
                                     {{"acyclic_accepted", s4.acyclic_accepted},
                                      {"acyclic_order_ok", s4.acyclic_order_ok},
                                      {"cycle_detected", s4.cycle_detected},
                                      {"cycle_error", s4.cycle_message},
                                      {"pass", s4.pass}}},
                                    {"pass", all}});
    return all ? gpulab::kExitOk : gpulab::kExitCheckFailed;
  }
  fmt::print("[scenario 1] serial={:.0f}ms  pipelined={:.0f}ms  speedup={:.2f}x   {} (>=1.7x)\n",
             s1.serial_ms, s1.pipelined_ms, s1.speedup, verdict(s1.pass));
  fmt::print(
      "[scenario 2] one-stream={:.0f}ms  two-stream={:.0f}ms  overlap={:.2f}x  {} (>=1.5x)\n",
      s2.one_stream_ms, s2.two_stream_ms, s2.overlap, verdict(s2.pass));
  fmt::print(
      "             (legacy default stream forces the one-stream case — that's the 2x you lose)\n");
  if (s3.host_detected) {
    fmt::print("[scenario 3] host-ordered free: CORRUPTION detected (as expected)\n");
  } else {
    fmt::print(
        "[scenario 3] host-ordered free: corruption in {} of {} trials  FAIL (the bug was not "
        "reproduced)\n",
        s3.host_corrupted, s3.host_trials);
  }
  if (s3.stream_corrupted == 0) {
    fmt::print("             stream-ordered free: no corruption across {} trials  {}\n", s3.trials,
               verdict(s3.pass));
  } else {
    fmt::print("             stream-ordered free: corruption in {} of {} trials  FAIL\n",
               s3.stream_corrupted, s3.trials);
  }
  if (!s3.pass && s3.host_detected && s3.stream_corrupted == 0) {
    fmt::print(
        "FAIL scenario 3: block reused in {} of {} trials, {} event edges, hook timed out: {}\n",
        s3.reused, s3.host_trials + s3.trials, s3.edges, s3.hook_timed_out ? "yes" : "no");
  }
  fmt::print("[scenario 4] {} / {}   {}\n",
             s4.acyclic_accepted && s4.acyclic_order_ok ? "acyclic accepted" : "acyclic REJECTED",
             s4.cycle_detected ? "circular wait detected" : "circular wait MISSED",
             verdict(s4.pass));
  return all ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

int run_graph(const Flags& f) {
  const IssueCost cost = measure_issue_cost(f.chunks, f.reps);
  const std::vector<CaptureRejection> rejected = capture_rejections();
  bool all_rejected = true;
  for (const auto& r : rejected) all_rejected = all_rejected && r.error != "(accepted)";
  const bool cheaper = cost.graph_ns_per_op < cost.eager_ns_per_op;
  if (f.common.json) {
    gpulab::Json rej = gpulab::Json::array();
    for (const auto& r : rejected) rej.push_back({{"attempt", r.attempt}, {"error", r.error}});
    gpulab::print_json(gpulab::Json{{"ops_per_iteration", cost.ops_per_iteration},
                                    {"nodes_per_iteration", cost.nodes_per_iteration},
                                    {"repetitions", f.reps},
                                    {"eager_ns_per_op", cost.eager_ns_per_op},
                                    {"graph_ns_per_op", cost.graph_ns_per_op},
                                    {"ratio", cost.ratio},
                                    {"capture_rejections", rej},
                                    {"pass", cheaper && all_rejected}});
  } else {
    fmt::print(
        "Issue cost of a scenario-1 iteration ({} ops, {} nodes with records and waits), median of "
        "{}:\n",
        cost.ops_per_iteration, cost.nodes_per_iteration, f.reps);
    gpulab::Table t;
    t.column("issued as", gpulab::Table::Align::kLeft).column("ns per op");
    t.row({"one call per op", fmt::format("{:.0f}", cost.eager_ns_per_op)});
    t.row({"one captured graph", fmt::format("{:.0f}", cost.graph_ns_per_op)});
    fmt::print("{}", t.render());
    fmt::print("graph replay is {:.1f}x cheaper per op  {}\n", cost.ratio, verdict(cheaper));
    fmt::print("\nWhat a capture refuses:\n");
    for (const auto& r : rejected) fmt::print("  {}: {}\n", r.attempt, r.error);
    fmt::print("capture restrictions  {}\n", verdict(all_rejected));
  }
  return cheaper && all_rejected ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

int run_priority(const Flags& f) {
  const PriorityResult r = priority_demo(f.clock);
  if (f.common.json) {
    gpulab::print_json(gpulab::Json{{"clock", f.clock == Clock::kWall ? "wall" : "virtual"},
                                    {"latency_op_done_ms", r.latency_op_done_ms},
                                    {"latency_op_done_fifo_ms", r.latency_op_done_fifo_ms},
                                    {"bulk_done_ms", r.bulk_done_ms},
                                    {"bulk_done_fifo_ms", r.bulk_done_fifo_ms},
                                    {"pass", r.pass}});
  } else {
    fmt::print(
        "One engine slot; 3 bulk streams x 4 ops x 50 ms, then one 2 ms latency-sensitive op:\n");
    gpulab::Table t;
    t.column("latency stream", gpulab::Table::Align::kLeft)
        .column("latency op done ms")
        .column("all bulk done ms");
    t.row({"priority -1 (high)", fmt::format("{:.0f}", r.latency_op_done_ms),
           fmt::format("{:.0f}", r.bulk_done_ms)});
    t.row({"priority 0 (FIFO)", fmt::format("{:.0f}", r.latency_op_done_fifo_ms),
           fmt::format("{:.0f}", r.bulk_done_fifo_ms)});
    fmt::print("{}", t.render());
    fmt::print("latency op finishes ahead of the bulk work  {}\n", verdict(r.pass));
  }
  return r.pass ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{
      "CUDA-style streams (worker + FIFO), events (counter + condvar) and the legacy default "
      "stream,\n"
      "run on the wall clock or in virtual time; the curriculum's four scenarios with PASS/FAIL."};
  app.fallthrough();
  gpulab::add_json_flag(app, f.common);
  app.add_option("--clock", f.clock_name,
                 "wall: worker threads and real sleeps; virtual: exact discrete-event simulation")
      ->check(CLI::IsMember({"wall", "virtual"}))
      ->capture_default_str();
  app.add_option("--trials", f.trials, "Stream-ordered free trials in scenario 3")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  gpulab::add_quick_flag(app, f.common, "Scenario 3 with 20 trials instead of --trials");
  gpulab::add_seed_flag(app, f.common);

  auto* graph = app.add_subcommand(
      "graph", "Capture/replay: issue cost per op, eager vs graph, and what capture refuses");
  graph
      ->add_option("--chunks", f.chunks, "Chunks in the captured scenario-1 iteration (3 ops each)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  graph->add_option("--reps", f.reps, "Measured repetitions (median reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  auto* priority = app.add_subcommand(
      "priority", "A high-priority stream's op jumps the queue of a shared engine");
  app.require_subcommand(0, 1);

  return gpulab::run_program(kProgram, app, argc, argv, [&] {
    f.clock = f.clock_name == "virtual" ? Clock::kVirtual : Clock::kWall;
    if (graph->parsed()) return run_graph(f);
    if (priority->parsed()) return run_priority(f);
    return run_scenarios(f);
  });
}
