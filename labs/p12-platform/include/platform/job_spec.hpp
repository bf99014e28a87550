// A job as a user writes it (YAML or JSON) and its validation. Every error
// names the field, so the API can answer HTTP 400 "gpus: ..." and gpulabctl
// can print one line.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "gpulab/json.hpp"

namespace platform {

enum class JobKind { kMatmul, kTrain, kServe };
std::string_view kind_name(JobKind k);

// Who runs the job's ranks: the platform's own agents, or a Slurm cluster the
// control plane submits to (sbatch + srun; slurm_executor.hpp).
enum class Executor { kNative, kSlurm };
std::string_view executor_name(Executor e);

// Backends a job may ask for; "auto" lets the scheduler pick.
inline constexpr std::string_view kBackendNames[] = {"auto", "cpu_ref", "fast", "blas", "opencl", "cuda"};

inline constexpr int kMaxJobGpus = 256;

struct MatmulParams {
  int n = 256;
  int chain = 4;
  std::uint64_t seed = 1;
};

struct TrainParams {
  int steps = 20;
  std::uint64_t seed = 7;
  int checkpoint_every = 5;
  int batch = 64;
  int hidden = 64;
};

// A serve job: one gpulab-serve (labs/p12-serving) on one device, kept
// running until cancelled. The engine flags, with gpulab-serve's defaults; the
// model is a preset (a file would have to exist on whichever node it lands).
struct ServeParams {
  std::string model = "small";
  int block_size = 16;
  int kv_blocks = 1024;
  int max_running = 32;
  int max_batched_tokens = 256;
  int max_waiting = 64;
  bool prefix_cache = true;
};

struct JobSpec {
  std::string name;
  JobKind kind = JobKind::kMatmul;
  int gpus = 1;
  bool gang = true;
  std::string tenant = "default";
  int priority = 0;
  std::string backend = "auto";
  int max_restarts = 3;
  Executor executor = Executor::kNative;
  // executor slurm only: spread the ranks over exactly this many Slurm nodes
  // (sbatch --nodes); 0 lets Slurm pack them. The native scheduler places
  // ranks by topology itself.
  int nodes = 0;
  MatmulParams matmul;
  TrainParams train;
  ServeParams serve;
};

// Whether a job of this kind can run on a backend: serve needs the decoder ops
// of HAL ABI 2.2 (rmsnorm, rope, silu_mul, paged attention), which blas lacks.
// The scheduler skips such backends for `backend: auto`; naming one is a 400.
bool kind_runs_on(JobKind kind, std::string_view backend);

// A field that is missing, of the wrong type or out of range. what() is
// "FIELD: reason", field() the dotted path ("params.steps").
class SpecError : public std::runtime_error {
 public:
  SpecError(std::string field, const std::string& reason)
      : std::runtime_error(field + ": " + reason), field_(std::move(field)) {}
  [[nodiscard]] const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// Validates a job document (already parsed from JSON or YAML). Unknown fields
// are errors too: a typo ("gpu: 2") must not silently run on one device.
JobSpec parse_job_spec(const gpulab::Json& doc);
// The canonical JSON of a spec (what the store keeps and the API returns).
gpulab::Json to_json(const JobSpec& spec);

// YAML or JSON text → the document parse_job_spec takes. Throws SpecError
// with field "spec" and the parser's line for malformed text.
gpulab::Json parse_spec_text(std::string_view text);

}  // namespace platform
