#include "platform/job_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "serving/engine.hpp"
#include "serving/model_config.hpp"
#include "topology/yaml.hpp"

namespace platform {
namespace {

using gpulab::Json;

std::string_view type_of(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "a list";
  return "a mapping";
}

// An integer field within [lo, hi]; 2.0 is accepted as 2, 2.5 is not.
std::int64_t get_int(const Json& obj, const std::string& key, const std::string& path, std::int64_t lo,
                     std::int64_t hi, std::optional<std::int64_t> fallback) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (fallback) return *fallback;
    throw SpecError(path, "is required");
  }
  double value = 0;
  if (it->is_number_integer() || it->is_number_unsigned()) {
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
      throw SpecError(path, fmt::format("must be between {} and {}, got {}", lo, hi, it->dump()));
    }
    const auto v = it->is_number_unsigned() ? static_cast<std::int64_t>(it->get<std::uint64_t>())
                                            : it->get<std::int64_t>();
    if (v < lo || v > hi) throw SpecError(path, fmt::format("must be between {} and {}, got {}", lo, hi, v));
    return v;
  }
  if (!it->is_number()) throw SpecError(path, fmt::format("must be an integer, got {}", type_of(*it)));
  value = it->get<double>();
  if (!std::isfinite(value) || value != std::floor(value)) {
    throw SpecError(path, fmt::format("must be an integer, got {}", it->dump()));
  }
  if (value < static_cast<double>(lo) || value > static_cast<double>(hi)) {
    throw SpecError(path, fmt::format("must be between {} and {}, got {}", lo, hi, it->dump()));
  }
  return static_cast<std::int64_t>(value);
}

std::string get_string(const Json& obj, const std::string& key, const std::string& path,
                       std::optional<std::string> fallback) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (fallback) return *fallback;
    throw SpecError(path, "is required");
  }
  if (!it->is_string()) throw SpecError(path, fmt::format("must be a string, got {}", type_of(*it)));
  return it->get<std::string>();
}

bool get_bool(const Json& obj, const std::string& key, const std::string& path, bool fallback) {
  const auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (!it->is_boolean()) throw SpecError(path, fmt::format("must be true or false, got {}", type_of(*it)));
  return it->get<bool>();
}

// Names as Kubernetes spells them (RFC 1123 labels): they end up in metric
// labels, file names and log lines.
void check_name(const std::string& name, const std::string& path) {
  const bool ok = !name.empty() && name.size() <= 63 &&
                  std::all_of(name.begin(), name.end(),
                              [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }) &&
                  name.front() != '-' && name.back() != '-';
  if (!ok) throw SpecError(path, fmt::format("'{}' must be 1-63 characters of a-z, 0-9 and '-'", name));
}

void reject_unknown(const Json& obj, std::initializer_list<std::string_view> known, const std::string& prefix) {
  for (const auto& [key, value] : obj.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      throw SpecError(prefix + key, fmt::format("unknown field (known: {})", list));
    }
  }
}

// What Slurm can run of a spec. A serve job needs the agent's health probes
// and endpoint reports, which a batch job has no equivalent of; and Slurm
// only knows GRES counts per node, not which HAL backends a node loads, so
// the backend must be named (it becomes the GRES type: --gpus-per-task=fast:1).
void check_slurm_spec(const JobSpec& s) {
  if (s.kind == JobKind::kServe) {
    throw SpecError("executor", "slurm runs matmul and train jobs; a serve job needs the native executor "
                                "(its agent probes GET /health and reports the endpoint)");
  }
  if (s.backend == "auto") {
    throw SpecError("backend", "executor slurm needs a named backend (cpu_ref, fast, blas, opencl, cuda): "
                               "it is the GRES type the job asks Slurm for");
  }
}

}  // namespace

std::string_view kind_name(JobKind k) {
  switch (k) {
    case JobKind::kMatmul: return "matmul";
    case JobKind::kTrain: return "train";
    case JobKind::kServe: return "serve";
  }
  return "?";
}

std::string_view executor_name(Executor e) {
  return e == Executor::kSlurm ? "slurm" : "native";
}

bool kind_runs_on(JobKind kind, std::string_view backend) {
  return kind != JobKind::kServe || backend != "blas";
}

JobSpec parse_job_spec(const Json& doc) {
  if (!doc.is_object()) throw SpecError("spec", fmt::format("must be a mapping, got {}", type_of(doc)));
  reject_unknown(doc, {"name", "kind", "gpus", "gang", "tenant", "priority", "backend", "max_restarts", "executor",
                      "nodes", "params"},
                 "");
  JobSpec s;
  s.name = get_string(doc, "name", "name", std::nullopt);
  check_name(s.name, "name");
  const std::string kind = get_string(doc, "kind", "kind", std::nullopt);
  if (kind == "matmul") {
    s.kind = JobKind::kMatmul;
  } else if (kind == "train") {
    s.kind = JobKind::kTrain;
  } else if (kind == "serve") {
    s.kind = JobKind::kServe;
  } else {
    throw SpecError("kind", fmt::format("unknown kind '{}' (matmul, train, serve)", kind));
  }
  s.gpus = static_cast<int>(get_int(doc, "gpus", "gpus", 1, kMaxJobGpus, 1));
  s.gang = get_bool(doc, "gang", "gang", true);
  s.tenant = get_string(doc, "tenant", "tenant", std::string("default"));
  check_name(s.tenant, "tenant");
  s.priority = static_cast<int>(get_int(doc, "priority", "priority", -1000, 1000, 0));
  s.backend = get_string(doc, "backend", "backend", std::string("auto"));
  if (std::find(std::begin(kBackendNames), std::end(kBackendNames), s.backend) == std::end(kBackendNames)) {
    throw SpecError("backend", fmt::format("unknown backend '{}' (auto, cpu_ref, fast, blas, opencl, cuda)", s.backend));
  }
  s.max_restarts = static_cast<int>(get_int(doc, "max_restarts", "max_restarts", 0, 100, 3));
  const std::string executor = get_string(doc, "executor", "executor", std::string("native"));
  if (executor == "native") {
    s.executor = Executor::kNative;
  } else if (executor == "slurm") {
    s.executor = Executor::kSlurm;
  } else {
    throw SpecError("executor", fmt::format("unknown executor '{}' (native, slurm)", executor));
  }

  const Json empty = Json::object();
  const auto pit = doc.find("params");
  if (pit != doc.end() && !pit->is_object()) {
    throw SpecError("params", fmt::format("must be a mapping, got {}", type_of(*pit)));
  }
  const Json& params = pit == doc.end() ? empty : *pit;
  constexpr std::int64_t kMaxSeed = std::numeric_limits<std::int64_t>::max();
  switch (s.kind) {
    case JobKind::kMatmul:
      reject_unknown(params, {"n", "chain", "seed"}, "params.");
      s.matmul.n = static_cast<int>(get_int(params, "n", "params.n", 1, 4096, 256));
      s.matmul.chain = static_cast<int>(get_int(params, "chain", "params.chain", 1, 1000, 4));
      s.matmul.seed = static_cast<std::uint64_t>(get_int(params, "seed", "params.seed", 0, kMaxSeed, 1));
      break;
    case JobKind::kTrain:
      reject_unknown(params, {"steps", "seed", "checkpoint_every", "batch", "hidden"}, "params.");
      s.train.steps = static_cast<int>(get_int(params, "steps", "params.steps", 1, 1'000'000, 20));
      s.train.seed = static_cast<std::uint64_t>(get_int(params, "seed", "params.seed", 0, kMaxSeed, 7));
      s.train.checkpoint_every =
          static_cast<int>(get_int(params, "checkpoint_every", "params.checkpoint_every", 1, 1'000'000, 5));
      s.train.batch = static_cast<int>(get_int(params, "batch", "params.batch", 1, 65536, 64));
      s.train.hidden = static_cast<int>(get_int(params, "hidden", "params.hidden", 1, 4096, 64));
      if (s.train.batch % s.gpus != 0) {
        throw SpecError("params.batch", fmt::format("{} does not split evenly over gpus: {}", s.train.batch, s.gpus));
      }
      break;
    case JobKind::kServe: {
      reject_unknown(params,
                     {"model", "block_size", "kv_blocks", "max_running", "max_batched_tokens", "max_waiting",
                      "prefix_cache"},
                     "params.");
      auto& p = s.serve;
      p.model = get_string(params, "model", "params.model", p.model);
      serving::ModelConfig model;
      if (!serving::preset(p.model, model)) {
        throw SpecError("params.model", fmt::format("unknown model '{}' (small, tiny)", p.model));
      }
      p.block_size = static_cast<int>(get_int(params, "block_size", "params.block_size", 1, 1024, p.block_size));
      p.kv_blocks = static_cast<int>(get_int(params, "kv_blocks", "params.kv_blocks", 1, 1'000'000, p.kv_blocks));
      p.max_running = static_cast<int>(get_int(params, "max_running", "params.max_running", 1, 1024, p.max_running));
      p.max_batched_tokens = static_cast<int>(
          get_int(params, "max_batched_tokens", "params.max_batched_tokens", 1, 65536, p.max_batched_tokens));
      p.max_waiting = static_cast<int>(get_int(params, "max_waiting", "params.max_waiting", 1, 100'000, p.max_waiting));
      p.prefix_cache = get_bool(params, "prefix_cache", "params.prefix_cache", p.prefix_cache);
      // gpulab-serve's own rule (the pool must hold one full context), so a
      // spec the server would refuse at start is a 400 here, not a crash loop.
      serving::EngineOptions engine;
      engine.block_size = static_cast<std::size_t>(p.block_size);
      engine.kv_blocks = static_cast<std::size_t>(p.kv_blocks);
      try {
        serving::validate(engine, model);
      } catch (const std::invalid_argument& e) {
        throw SpecError("params.kv_blocks", fmt::format("gpulab-serve refuses it: {}", e.what()));
      }
      if (s.gpus != 1) throw SpecError("gpus", "a serve job is one server on one device (submit several for replicas)");
      if (!kind_runs_on(s.kind, s.backend)) {
        throw SpecError("backend", fmt::format("serve jobs need the decoder ops of HAL ABI 2.2, which {} lacks "
                                               "(auto, cpu_ref, fast, opencl, cuda)",
                                               s.backend));
      }
      break;
    }
  }
  if (s.kind == JobKind::kMatmul && s.gpus != 1) {
    throw SpecError("gpus", "a matmul job runs on one device (submit several jobs for more)");
  }
  s.nodes = static_cast<int>(get_int(doc, "nodes", "nodes", 1, kMaxJobGpus, 0));
  if (s.nodes > 0 && s.executor != Executor::kSlurm) {
    throw SpecError("nodes", "only for executor slurm (the native scheduler places ranks by topology)");
  }
  if (s.nodes > s.gpus) {
    throw SpecError("nodes", fmt::format("{} nodes for {} rank(s): every node needs a rank", s.nodes, s.gpus));
  }
  if (s.executor == Executor::kSlurm) check_slurm_spec(s);
  return s;
}

Json to_json(const JobSpec& s) {
  Json j;
  j["name"] = s.name;
  j["kind"] = kind_name(s.kind);
  j["gpus"] = s.gpus;
  j["gang"] = s.gang;
  j["tenant"] = s.tenant;
  j["priority"] = s.priority;
  j["backend"] = s.backend;
  j["max_restarts"] = s.max_restarts;
  j["executor"] = executor_name(s.executor);
  if (s.nodes > 0) j["nodes"] = s.nodes;  // absent when unset: older specs keep their JSON
  Json p = Json::object();
  if (s.kind == JobKind::kMatmul) {
    p["n"] = s.matmul.n;
    p["chain"] = s.matmul.chain;
    p["seed"] = s.matmul.seed;
  } else if (s.kind == JobKind::kTrain) {
    p["steps"] = s.train.steps;
    p["seed"] = s.train.seed;
    p["checkpoint_every"] = s.train.checkpoint_every;
    p["batch"] = s.train.batch;
    p["hidden"] = s.train.hidden;
  } else {
    p["model"] = s.serve.model;
    p["block_size"] = s.serve.block_size;
    p["kv_blocks"] = s.serve.kv_blocks;
    p["max_running"] = s.serve.max_running;
    p["max_batched_tokens"] = s.serve.max_batched_tokens;
    p["max_waiting"] = s.serve.max_waiting;
    p["prefix_cache"] = s.serve.prefix_cache;
  }
  j["params"] = p;
  return j;
}

Json parse_spec_text(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    try {
      return Json::parse(text);
    } catch (const Json::parse_error& e) {
      throw SpecError("spec", fmt::format("malformed JSON at byte {}", e.byte));
    }
  }
  auto doc = topo::yaml_to_json(std::string(text));
  if (!doc.ok()) throw SpecError("spec", fmt::format("malformed YAML: {}", doc.error().message));
  return doc.value();
}

}  // namespace platform
