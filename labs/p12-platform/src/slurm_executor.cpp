#include "platform/slurm_executor.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"
#include "gpulab/output_file.hpp"
#include "gpulab/text.hpp"
#include "platform/command.hpp"
#include "platform/slurm_script.hpp"
#include "platform/task_process.hpp"

namespace platform {
namespace {

constexpr std::size_t kMaxRankLogBytes = 1 << 20;

std::filesystem::path self_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(".") : exe.parent_path();
}

void write_or_throw(const std::filesystem::path& p, const std::string& text) {
  if (auto r = gpulab::write_file(p, text); !r) throw gpulab::RunError(r.error().message);
}

}  // namespace

SlurmExecutor::SlurmExecutor(SlurmOptions options, std::filesystem::path state_dir)
    : options_(std::move(options)), state_dir_(std::move(state_dir)) {
  if (options_.task_program.empty()) options_.task_program = self_dir() / "gpulab-task";
}

std::string SlurmExecutor::unavailable() const {
  for (const auto* p : {&options_.sbatch, &options_.scontrol, &options_.scancel}) {
    if (!find_on_path(*p)) {
      return fmt::format(
          "slurm needs {} on the control plane's PATH (Debian: apt-get install slurm-client); not "
          "found",
          *p);
    }
  }
  if (::access(options_.task_program.c_str(), X_OK) != 0) {
    return fmt::format("slurm: no task program at '{}' (gpulabd control --slurm-task-program)",
                       options_.task_program.string());
  }
  return {};
}

std::filesystem::path SlurmExecutor::attempt_dir(const std::string& job_id, int attempt) const {
  return state_dir_ / "slurm" / job_id / fmt::format("attempt-{}", attempt);
}

std::string SlurmExecutor::test_only(const JobSpec& spec) const {
  SlurmScriptInputs in{"test-only",
                       1,
                       spec,
                       options_.task_program,
                       state_dir_ / "slurm",
                       state_dir_ / "checkpoints",
                       options_.address};
  const auto r = run_command({options_.sbatch, "--test-only"}, render_batch_script(in),
                             options_.command_timeout);
  // sbatch --test-only reports success on stderr too ("Job 3 to start at ..."), with status 0.
  return r.exit_code == 0 ? std::string() : first_error_line(r);
}

std::string SlurmExecutor::submit(const std::string& job_id, int attempt,
                                  const JobSpec& spec) const {
  const auto dir = attempt_dir(job_id, attempt);
  std::error_code ec;
  std::filesystem::remove_all(dir,
                              ec);  // a resubmission of an attempt starts clean (fresh rendezvous)
  std::filesystem::create_directories(dir, ec);
  if (ec) throw gpulab::RunError(fmt::format("{}: {}", dir.string(), ec.message()));
  const SlurmScriptInputs in{job_id,
                             attempt,
                             spec,
                             options_.task_program,
                             dir,
                             state_dir_ / "checkpoints" / job_id,
                             options_.address};
  const std::string script = render_batch_script(in);
  write_or_throw(dir / "batch.sh", script);
  const auto r = run_command({options_.sbatch, "--parsable", (dir / "batch.sh").string()}, "",
                             options_.command_timeout);
  if (r.exit_code != 0)
    throw gpulab::RunError(fmt::format("sbatch refused it: {}", first_error_line(r)));
  // --parsable prints "ID" or "ID;CLUSTER".
  const auto id = std::string(gpulab::trim(r.out.substr(0, r.out.find_first_of(";\n"))));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    throw gpulab::RunError(fmt::format("sbatch printed no job id: '{}'", gpulab::trim(r.out)));
  }
  write_or_throw(dir / "slurm_job_id", id + "\n");
  return id;
}

SlurmAttempt SlurmExecutor::attempt(const std::string& job_id, int attempt) const {
  SlurmAttempt a;
  const auto dir = attempt_dir(job_id, attempt);
  if (auto id = gpulab::read_text_file((dir / "slurm_job_id").string(), 64); id.ok()) {
    a.slurm_id = std::string(gpulab::trim(id.value()));
  }
  std::error_code ec;
  a.ended = std::filesystem::exists(dir / "ended", ec);
  a.cancel_sent = std::filesystem::exists(dir / "cancel_sent", ec);
  return a;
}

void SlurmExecutor::mark_ended(const std::string& job_id, int attempt) const {
  write_or_throw(attempt_dir(job_id, attempt) / "ended", "");
}

std::string SlurmExecutor::cancel(const std::string& job_id, int attempt) const {
  const auto a = this->attempt(job_id, attempt);
  if (a.slurm_id.empty()) return {};
  const auto r = run_command({options_.scancel, a.slurm_id}, "", options_.command_timeout);
  if (r.exit_code != 0) return first_error_line(r);
  write_or_throw(attempt_dir(job_id, attempt) / "cancel_sent", "");
  return {};
}

std::map<std::string, SlurmJobStatus> SlurmExecutor::poll() const {
  const auto r =
      run_command({options_.scontrol, "show", "job", "-o"}, "", options_.command_timeout);
  if (r.exit_code != 0)
    throw gpulab::RunError(fmt::format("scontrol show job: {}", first_error_line(r)));
  return parse_scontrol_jobs(r.out);
}

std::string SlurmExecutor::logs(const std::string& job_id, int attempt, int ranks) const {
  const auto dir = attempt_dir(job_id, attempt);
  const auto a = this->attempt(job_id, attempt);
  std::string out;
  const auto add = [&](const std::string& header, const std::filesystem::path& file) {
    out += fmt::format("==> {} <==\n", header);
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
      out += "(no output yet)\n";
      return;
    }
    out += read_tail(file, kMaxRankLogBytes);
    if (!out.empty() && out.back() != '\n') out += '\n';
  };
  add(fmt::format("{} attempt {}: slurm job {} batch script", job_id, attempt,
                  a.slurm_id.empty() ? "-" : a.slurm_id),
      dir / "batch.out");
  for (int r = 0; r < ranks; ++r)
    add(fmt::format("{}.{}.{} (rank {} under srun)", job_id, attempt, r, r),
        dir / fmt::format("rank-{}.out", r));
  return out;
}

gpulab::Json SlurmExecutor::result(const std::string& job_id, int attempt) const {
  return done_line(read_tail(attempt_dir(job_id, attempt) / "rank-0.out", kMaxRankLogBytes));
}

}  // namespace platform
