// The control plane's hook for `executor: slurm`: where such a job goes
// instead of the scheduler's pass. The gpulab job stays the record users see
// (gpulabctl jobs / describe / logs / cancel); Slurm runs it. Each tick:
//
//   pending, not yet in Slurm    -> over the licence's device cap: stays pending, the
//                                   native scheduler's reason; else attempt+1 saved,
//                                   then sbatch (slurm_executor.hpp)
//   cancelled with a Slurm job   -> scancel
//   in Slurm and not ended       -> one scontrol poll for all, states mirrored:
//                                   PENDING keeps it pending (Slurm's reason shown),
//                                   RUNNING running, COMPLETED succeeded with rank
//                                   0's result, FAILED & co. restart under
//                                   max_restarts (resuming from the checkpoint)
//                                   or fail, CANCELLED outside gpulab cancelled.
//
// Slurm's commands run without mu_, so the API never waits on slurmctld; what
// they return is applied under mu_ to whatever the job has become meanwhile.
//
// The licence's device cap is one count across both executors
// (devices_in_use_locked): a Slurm job's ranks count from the moment its
// attempt is saved for sbatch until Slurm reports it ended, and the native
// scheduler's pass sees them as devices held outside its agents; a Slurm job
// that ends sets dirty_ so a native job it held back is placed at once.
#include <fmt/format.h>

#include "gpulab/errors.hpp"
#include "platform/control_plane.hpp"
#include "platform/licence_policy.hpp"

namespace platform {

void ControlPlane::check_slurm_submission(const JobSpec& spec) const {
  if (const auto why = slurm_->unavailable(); !why.empty()) throw ApiError(400, "executor: " + why);
  // Refused now, with Slurm's own words, rather than a job that fails later.
  if (const auto why = slurm_->test_only(spec); !why.empty()) {
    if (spec.nodes > 0) {  // the node count is what the user added to a shape Slurm may run otherwise
      throw ApiError(400,
                     fmt::format("nodes: Slurm cannot run {} task(s) on {} node(s) with one gpu:{} each: {}",
                                 spec.gpus, spec.nodes, spec.backend, why));
    }
    throw ApiError(400, fmt::format("gpus: Slurm cannot run {} task(s) with one gpu:{} each: {}",
                                    spec.gpus, spec.backend, why));
  }
}

int ControlPlane::slurm_devices_held_locked() const {
  int held = 0;
  // A cancelled job's ranks stop counting at once, as a cancelled native
  // job's tasks do (scancel and the agents' kills follow within a tick).
  for (const auto& [id, ranks] : slurm_live_) {
    if (!is_terminal(jobs_.at(id).state)) held += ranks;
  }
  return held;
}

ControlPlane::DevicesInUse ControlPlane::devices_in_use_locked() const {
  DevicesInUse use;
  for (const auto& [tid, task] : tasks_) {
    if (task.state == TaskState::kAssigned || task.state == TaskState::kRunning) ++use.native;
  }
  use.slurm = slurm_devices_held_locked();
  return use;
}

void ControlPlane::recover_slurm_locked() {
  for (const auto& [id, job] : jobs_) {
    if (job.spec.executor != Executor::kSlurm || job.attempt == 0) continue;
    const auto a = slurm_->attempt(id, job.attempt);
    // Submitted and not seen to end: it holds devices until the poll says otherwise.
    if (!is_terminal(job.state) && !a.slurm_id.empty() && !a.ended) slurm_live_[id] = job.spec.gpus;
    if (job.state != JobState::kCancelled) continue;
    if (!a.slurm_id.empty() && !a.ended && !a.cancel_sent) slurm_cancel_.insert(id);
  }
  slurm_dirty_ = !slurm_cancel_.empty();
}

void ControlPlane::slurm_attempt_ended_locked(const std::string& job_id, int attempt) {
  slurm_->mark_ended(job_id, attempt);
  if (slurm_live_.erase(job_id) != 0) dirty_ = true;  // its devices are free for native jobs too
}

void ControlPlane::sync_slurm() {
  struct Submit {
    std::string job;
    int attempt;
    JobSpec spec;
  };
  struct Track {
    std::string job;
    int attempt;
    std::string slurm_id;
  };
  std::vector<Submit> to_submit;
  std::vector<std::pair<std::string, int>> to_cancel;
  std::vector<Track> tracked;
  {
    std::lock_guard lock(mu_);
    const double t = now();
    const double interval = std::chrono::duration<double>(slurm_->options().poll_interval).count();
    if (!slurm_dirty_ && t - last_slurm_poll_ < interval) return;
    slurm_dirty_ = false;
    last_slurm_poll_ = t;
    // Cancelled jobs' entries go (they stopped counting when cancelled).
    std::erase_if(slurm_live_, [&](const auto& kv) { return is_terminal(jobs_.at(kv.first).state); });
    // A job that would pass the licence's cap is not submitted: it waits,
    // with the native executor's reason.
    const int cap = licence_.status().max_devices;
    int in_use = devices_in_use_locked().total();
    for (auto& [id, job] : jobs_) {
      if (job.spec.executor != Executor::kSlurm) continue;
      if (job.state == JobState::kCancelled && slurm_cancel_.count(id) != 0) {
        to_cancel.emplace_back(id, job.attempt);
        continue;
      }
      if (is_terminal(job.state)) continue;
      const auto a = job.attempt > 0 ? slurm_->attempt(id, job.attempt) : SlurmAttempt{};
      if (job.state == JobState::kPending && (a.slurm_id.empty() || a.ended)) {
        if (const auto why = device_cap_refusal(cap, in_use, job.spec.gpus); !why.empty()) {
          if (job.reason != why) {
            job.reason = why;
            save_job(job);
          }
          continue;
        }
        in_use += job.spec.gpus;
        slurm_live_[id] = job.spec.gpus;  // held from now: Slurm may start it at once
        // A new attempt is saved before sbatch, so a control plane killed in
        // between resubmits this attempt instead of starting a second one.
        if (job.attempt == 0 || a.ended) ++job.attempt;
        job.reason = fmt::format("submitting attempt {} to Slurm (sbatch)", job.attempt);
        // requeued_because stays until Slurm runs the attempt: while it waits
        // in Slurm's queue the reason says why it is there again.
        queued_since_.erase(id);  // Slurm's queue from here on, not the placement histogram's
        save_job(job);
        to_submit.push_back({id, job.attempt, job.spec});
      } else if (!a.slurm_id.empty()) {
        tracked.push_back({id, job.attempt, a.slurm_id});
      }
    }
  }

  // Slurm's commands, without the lock.
  std::map<std::string, std::string> submitted, submit_errors, cancel_errors;
  for (const auto& s : to_submit) {
    try {
      submitted[s.job] = slurm_->submit(s.job, s.attempt, s.spec);
    } catch (const std::exception& e) {
      submit_errors[s.job] = e.what();
    }
  }
  for (const auto& [job, attempt] : to_cancel) cancel_errors[job] = slurm_->cancel(job, attempt);
  std::map<std::string, SlurmJobStatus> status;
  std::string poll_error;
  if (!tracked.empty()) {
    try {
      status = slurm_->poll();
    } catch (const std::exception& e) {
      poll_error = e.what();
    }
  }

  std::lock_guard lock(mu_);
  const double t = now();
  store_.transaction([&] {
    for (const auto& [id, why] : cancel_errors) {
      if (why.empty()) {
        slurm_cancel_.erase(id);
        Job& job = jobs_.at(id);
        // No Slurm id yet: cancelled before sbatch answered; the submission's
        // own step below sends the scancel once the id is known.
        if (const auto sid = slurm_->attempt(id, job.attempt).slurm_id; !sid.empty()) {
          job.reason = fmt::format("cancelled by the user (scancel {})", sid);
          save_job(job);
        }
      }
      // Else: retried next tick (slurmctld down, say); the job is cancelled already.
    }
    for (const auto& s : to_submit) {
      Job& job = jobs_.at(s.job);
      if (const auto e = submit_errors.find(s.job); e != submit_errors.end()) {
        if (job.state == JobState::kPending && job.attempt == s.attempt) {
          if (slurm_live_.erase(s.job) != 0) dirty_ = true;  // sbatch refused: nothing held
          job.state = JobState::kFailed;
          job.reason = e->second;
          job.finished_at = t;
          save_job(job);
        }
        continue;
      }
      const std::string& slurm_id = submitted.at(s.job);
      if (job.state == JobState::kCancelled) {  // cancelled while sbatch ran
        slurm_cancel_.insert(s.job);
        slurm_dirty_ = true;
        continue;
      }
      job.reason = fmt::format("submitted to Slurm as job {}", slurm_id);
      save_job(job);
      slurm_dirty_ = true;  // poll it at once
    }
    if (!poll_error.empty()) {
      for (const auto& tr : tracked) {
        Job& job = jobs_.at(tr.job);
        if (!is_terminal(job.state)) {
          job.reason =
              fmt::format("Slurm job {}: cannot ask Slurm ({}); retrying", tr.slurm_id, poll_error);
          save_job(job);
        }
      }
      return;
    }
    for (const auto& tr : tracked) {
      Job& job = jobs_.at(tr.job);
      if (is_terminal(job.state) || job.attempt != tr.attempt) continue;
      const auto it = status.find(tr.slurm_id);
      if (it == status.end()) {
        // slurmctld forgets a job MinJobAge after it ends; one we never saw
        // end is lost to us, and its attempt is retried like a lost node's.
        slurm_attempt_ended_locked(job.id, tr.attempt);
        restart_or_fail_locked(job, fmt::format("Slurm no longer knows job {}", tr.slurm_id),
                               false);
        continue;
      }
      const auto& st = it->second;
      const auto mirrored = mirror_state(st.state);
      const std::string where = st.nodes.empty() || st.nodes == "(null)" ? "" : " on " + st.nodes;
      if (!mirrored) {
        job.reason = fmt::format("Slurm job {} is {}{} (a state gpulab does not map)", st.id,
                                 st.state, where);
      } else if (*mirrored == JobState::kPending) {
        job.reason = fmt::format("{}Slurm job {} pending: {}",
                                 job.requeued_because.empty() ? "" : job.requeued_because + " — ", st.id,
                                 st.reason);
      } else if (*mirrored == JobState::kRunning) {
        if (job.state != JobState::kRunning) job.started_at = t;
        job.state = JobState::kRunning;
        job.requeued_because.clear();
        job.reason =
            fmt::format("Slurm job {} {}{}, {} task(s)", st.id, st.state, where, job.spec.gpus);
      } else {
        slurm_attempt_ended_locked(job.id, tr.attempt);
        if (*mirrored == JobState::kSucceeded) {
          job.state = JobState::kSucceeded;
          job.result = slurm_->result(job.id, tr.attempt);
          if (!job.result.is_object()) job.result = gpulab::Json::object();
          job.reason = fmt::format("Slurm job {} COMPLETED{}: every rank exited 0", st.id, where);
          job.finished_at = t;
        } else if (*mirrored == JobState::kCancelled) {
          job.state = JobState::kCancelled;
          job.reason = fmt::format("Slurm job {} was cancelled outside gpulab", st.id);
          job.finished_at = t;
        } else {
          const std::string why =
              fmt::format("Slurm job {} {} (exit {}{}, {})", st.id, st.state, st.exit_code,
                          st.signal != 0 ? fmt::format(", signal {}", st.signal) : "", st.reason);
          // Exit 2 is gpulab-task's bad input: a restart would fail the same way.
          restart_or_fail_locked(job, why, st.exit_code == 2);
          if (job.state == JobState::kPending) slurm_dirty_ = true;
          continue;
        }
      }
      save_job(job);
    }
  });
  if (slurm_dirty_ || dirty_) tick_cv_.notify_all();
}

}  // namespace platform
