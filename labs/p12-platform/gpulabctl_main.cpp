// gpulabctl: the platform's command line — nodes, submit, jobs, describe,
// logs, cancel, drain, top — against the control plane's API.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "gpulab/cli.hpp"
#include "gpulab/file.hpp"
#include "gpulab/json.hpp"
#include "platform/api_client.hpp"
#include "platform/ctl_render.hpp"
#include "platform/release_commands.hpp"
#include "platform/slurm_commands.hpp"

namespace {
constexpr std::size_t kMaxSpecBytes = 1 << 20;
}

int main(int argc, char** argv) {
  CLI::App app{"gpulabctl: talk to the gpulab platform's control plane.\n"
               "Submit jobs, watch them, look at nodes. --control URL or GPULAB_CONTROL picks the control plane."};
  app.require_subcommand(1);
  std::string control = platform::default_control_url();
  bool json = false;
  app.add_option("--control", control, "Control plane URL (default: $GPULAB_CONTROL, then http://127.0.0.1:7070)");
  app.add_flag("--json", json, "Print the API's JSON instead of tables");

  auto* nodes = app.add_subcommand("nodes", "Nodes, their devices and health.");
  std::string spec_file;
  std::string idempotency_key;
  auto* submit = app.add_subcommand("submit", "Submit a job (YAML or JSON file, - for stdin).");
  submit->add_option("file", spec_file, "Job spec")->required();
  submit->add_option("--idempotency-key", idempotency_key, "The same key returns the same job");
  auto* jobs = app.add_subcommand("jobs", "Every job and its state.");
  std::string id;
  auto* describe = app.add_subcommand("describe", "One job: placement, tasks, result.");
  describe->add_option("id", id, "Job id")->required();
  auto* logs = app.add_subcommand("logs", "A job's task logs (its latest attempt).");
  logs->add_option("id", id, "Job id")->required();
  auto* cancel = app.add_subcommand("cancel", "Cancel a job.");
  cancel->add_option("id", id, "Job id")->required();
  std::string node;
  auto* drain = app.add_subcommand("drain", "Stop placing new work on a node.");
  drain->add_option("node", node, "Node name")->required();
  auto* top = app.add_subcommand("top", "One screen: jobs, devices, licence.");
  for (auto* sub : {nodes, submit, jobs, describe, logs, cancel, drain, top}) {
    sub->add_flag("--json", json, "Print the API's JSON");
  }
  const platform::ReleaseCommands release(app);  // release-manifest, verify-release
  const platform::SlurmCommands slurm(app);       // slurm gres-conf

  return gpulab::run_program("gpulabctl", app, argc, argv, [&] {
    if (const auto rc = release.run()) return *rc;
    if (const auto rc = slurm.run()) return *rc;
    const platform::ApiClient api(control);
    const auto out = [&](const gpulab::Json& doc, const std::string& text) {
      if (json) {
        gpulab::print_json(doc);
      } else {
        fmt::print("{}", text);
      }
    };
    if (nodes->parsed()) {
      const auto n = api.get("/v1/nodes");
      out(n, platform::render_nodes(n));
    } else if (submit->parsed()) {
      auto text = gpulab::read_text_file(spec_file == "-" ? "/dev/stdin" : spec_file, kMaxSpecBytes);
      if (!text.ok()) throw gpulab::UsageError(text.error().message);
      int status = 0;
      const auto job = api.post("/v1/jobs", text.value(), idempotency_key, &status);
      out(job, fmt::format("{} {} ({}{})\n", status == 201 ? "submitted" : "already submitted",
                           job.at("id").get<std::string>(), job.at("state").get<std::string>(),
                           status == 201 ? "" : ", same idempotency key"));
    } else if (jobs->parsed()) {
      const auto j = api.get("/v1/jobs");
      out(j, platform::render_jobs(j));
    } else if (describe->parsed()) {
      const auto j = api.get("/v1/jobs/" + id);
      out(j, platform::render_job(j));
    } else if (logs->parsed()) {
      const auto text = api.get_text("/v1/jobs/" + id + "/logs");
      out(gpulab::Json{{"id", id}, {"logs", text}}, text);
    } else if (cancel->parsed()) {
      const auto j = api.post("/v1/jobs/" + id + "/cancel", "");
      out(j, fmt::format("cancelled {}\n", j.at("id").get<std::string>()));
    } else if (drain->parsed()) {
      const auto n = api.post("/v1/nodes/" + node + "/drain", "");
      out(n, fmt::format("draining {}: no new work is placed there\n", n.at("name").get<std::string>()));
    } else if (top->parsed()) {
      const auto j = api.get("/v1/jobs");
      const auto n = api.get("/v1/nodes");
      const auto l = api.get("/v1/licence");
      out(gpulab::Json{{"jobs", j}, {"nodes", n}, {"licence", l}}, platform::render_top(j, n, l));
    }
    return gpulab::kExitOk;
  });
}
