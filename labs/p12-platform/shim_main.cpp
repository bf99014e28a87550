// gpulab-shim: the runtime process of one containerised task. The agent
// writes the container plan (task_container.hpp) beside the task's log and
// starts this program on it; the shim runs the task with P04's mininer
// library, waits, removes the task's cgroup and exits as the task did.
#include <CLI/CLI.hpp>

#include "gpulab/cli.hpp"
#include "gpulab/file.hpp"
#include "platform/task_container.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gpulab-shim: runs one platform task in a mininer container, as the agent's plan says\n"
               "(namespaces, a devices cgroup, the host's /usr read-only); exits with the task's status."};
  std::string plan_file;
  app.add_option("PLAN", plan_file, "Container plan (JSON) the agent wrote")->required();
  return gpulab::run_program("gpulab-shim", app, argc, argv, [&] {
    const auto text = gpulab::read_input_file(plan_file, std::size_t{1} << 20);
    const auto json = gpulab::Json::parse(text, nullptr, false);
    if (json.is_discarded()) throw gpulab::UsageError(plan_file + ": not JSON");
    return platform::run_container_plan(platform::container_plan_from_json(json));
  });
}
