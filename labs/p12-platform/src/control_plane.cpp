#include "platform/control_plane.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "gpulab/file.hpp"
#include "gpulab/output_file.hpp"
#include "gpulab/prom_text.hpp"
#include "platform/scheduler.hpp"

namespace platform {
namespace {

using gpulab::Json;

double system_clock_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Bounds of the placement latency histogram (seconds from queued to placed).
const std::vector<double> kPlacementBuckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30};
const char* const kPlacementMetric = "gpulab_platform_placement_latency_seconds";

// Logs a finished task sends are kept up to this size (the tail).
constexpr std::size_t kMaxLogBytes = 1 << 20;

}  // namespace

ControlPlane::ControlPlane(ControlOptions options)
    : options_(std::move(options)),
      store_(options_.state_dir, options_.durability),
      licence_([this] {
        if (!options_.clock) options_.clock = system_clock_seconds;
        LicenceOptions l = options_.licence;
        if (!l.license_file.empty() && l.state_file.empty()) l.state_file = options_.state_dir / "licence.state";
        if (!l.clock) l.clock = [this] { return static_cast<std::int64_t>(options_.clock()); };
        return l;
      }()) {
  std::filesystem::create_directories(options_.state_dir / "logs");
  std::filesystem::create_directories(options_.state_dir / "checkpoints");
  placement_.histogram(kPlacementMetric, "Seconds from a job entering the queue to its placement.", kPlacementBuckets);
  const double t = now();
  last_licence_refresh_ = t;
  // Recover everything: jobs and tasks as they were, nodes given one timeout
  // from now to heartbeat again before they count as lost.
  for (auto& job : store_.load_jobs()) {
    if (!job.idempotency_key.empty()) idempotency_[job.idempotency_key] = job.id;
    if (job.state == JobState::kPending) queued_since_[job.id] = t;
    const std::string id = job.id;
    track_job_locked(jobs_.emplace(id, std::move(job)).first->second);
  }
  for (auto& task : store_.load_tasks()) {
    const std::string id = task.id;
    track_task_locked(tasks_.emplace(id, std::move(task)).first->second);
  }
  for (auto& node : store_.load_nodes()) {
    node.last_heartbeat = t;
    nodes_.emplace(node.name, std::move(node));
  }
  next_seq_ = store_.max_job_seq() + 1;
  slurm_ = std::make_unique<SlurmExecutor>(options_.slurm, options_.state_dir);
  recover_slurm_locked();
}

ControlPlane::~ControlPlane() { stop(); }

void ControlPlane::save_job(const Job& job) {
  store_.put_job(job);
  // A job being submitted is saved before it joins jobs_; submit() tracks it then.
  if (const auto it = jobs_.find(job.id); it != jobs_.end()) track_job_locked(it->second);
}

void ControlPlane::save_task(const Task& task) {
  store_.put_task(task);
  track_task_locked(task);
}

void ControlPlane::track_job_locked(Job& job) {
  const bool live = job.spec.executor != Executor::kSlurm &&  // Slurm places those (sync_slurm)
                    (job.state == JobState::kPending || job.state == JobState::kRunning);
  if (live) {
    live_jobs_[job.seq] = &job;
  } else {
    live_jobs_.erase(job.seq);
  }
}

void ControlPlane::track_task_locked(const Task& task) {
  const auto it = tasks_.find(task.id);
  if (it == tasks_.end()) return;
  Task& t = it->second;
  if (t.state == TaskState::kAssigned || t.state == TaskState::kRunning) {
    live_tasks_[t.id] = &t;
  } else {
    live_tasks_.erase(t.id);
  }
}

template <typename Keep>
std::vector<Task*> ControlPlane::live_tasks_where(Keep keep) {
  std::vector<Task*> out;
  for (const auto& [id, t] : live_tasks_) {
    if (keep(*t)) out.push_back(t);
  }
  return out;
}

std::filesystem::path ControlPlane::log_path(const std::string& task_id) const {
  return options_.state_dir / "logs" / (task_id + ".log");
}

std::pair<Job, bool> ControlPlane::submit(const Json& spec_doc, const std::string& idempotency_key) {
  if (idempotency_key.size() > 128) throw ApiError(400, "idempotency_key: at most 128 characters");
  JobSpec spec;
  try {
    spec = parse_job_spec(spec_doc);
  } catch (const SpecError& e) {
    throw ApiError(400, e.what());
  }
  if (spec.executor == Executor::kSlurm) check_slurm_submission(spec);
  std::lock_guard lock(mu_);
  if (!idempotency_key.empty()) {
    if (const auto it = idempotency_.find(idempotency_key); it != idempotency_.end()) {
      return {jobs_.at(it->second), false};
    }
  }
  if (const auto refusal = licence_.admission_refusal(spec.kind); !refusal.empty()) throw ApiError(403, refusal);
  Job job;
  job.seq = next_seq_;
  job.id = fmt::format("j-{:06d}", job.seq);
  job.spec = std::move(spec);
  job.idempotency_key = idempotency_key;
  job.submitted_at = now();
  job.reason = "queued";
  save_job(job);  // committed before the API answers: it survives a kill -9 from here on
  ++next_seq_;
  ++submitted_total_;
  if (!idempotency_key.empty()) idempotency_[idempotency_key] = job.id;
  queued_since_[job.id] = job.submitted_at;
  track_job_locked(jobs_.emplace(job.id, job).first->second);
  dirty_ = true;
  tick_cv_.notify_all();
  return {job, true};
}

Job ControlPlane::get_job(const std::string& id) const {
  std::lock_guard lock(mu_);
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) throw ApiError(404, fmt::format("no job '{}'", id));
  return it->second;
}

std::vector<Job> ControlPlane::list_jobs() const {
  std::lock_guard lock(mu_);
  std::vector<Job> out;
  out.reserve(jobs_.size());
  for (const auto& [id, j] : jobs_) out.push_back(j);
  return out;
}

std::vector<Task> ControlPlane::tasks_of(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  std::vector<Task> out;
  for (const auto& [id, t] : tasks_) {
    if (t.job == job_id) out.push_back(t);
  }
  std::sort(out.begin(), out.end(),
            [](const Task& a, const Task& b) { return std::tie(a.attempt, a.rank) < std::tie(b.attempt, b.rank); });
  return out;
}

std::string ControlPlane::logs(const std::string& job_id) const {
  const Job job = get_job(job_id);
  if (job.spec.executor == Executor::kSlurm) return slurm_->logs(job.id, job.attempt, job.spec.gpus);
  std::string out;
  for (const auto& t : tasks_of(job_id)) {
    if (t.attempt != job.attempt) continue;
    out += fmt::format("==> {} (rank {} on {} {}, {}) <==\n", t.id, t.rank, t.node, t.device,
                       task_state_name(t.state));
    auto text = gpulab::read_text_file(log_path(t.id).string(), kMaxLogBytes + 4096);
    if (text.ok()) {
      out += text.value();
    } else {
      out += is_terminal(job.state) || t.state != TaskState::kRunning ? "(no log was received)\n"
                                                                       : "(running: the log arrives when it ends)\n";
    }
  }
  return out;
}

Job ControlPlane::cancel(const std::string& id) {
  std::lock_guard lock(mu_);
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) throw ApiError(404, fmt::format("no job '{}'", id));
  Job& job = it->second;
  if (is_terminal(job.state)) {
    throw ApiError(409, fmt::format("job {} is already {}", id, state_name(job.state)));
  }
  job.state = JobState::kCancelled;
  job.reason = "cancelled by the user";
  job.endpoint.clear();
  job.finished_at = now();
  queued_since_.erase(id);
  if (job.spec.executor == Executor::kSlurm && job.attempt > 0) {
    slurm_cancel_.insert(id);  // scancel runs on the next tick, outside this lock
    slurm_dirty_ = true;
  }
  store_.transaction([&] {
    for (Task* t : live_tasks_where([&](const Task& x) { return x.job == id; })) {
      t->state = TaskState::kCancelled;
      t->message = "cancelled";
      save_task(*t);
      wake_node(t->node);
    }
    save_job(job);
  });
  dirty_ = true;
  tick_cv_.notify_all();
  return job;
}

void ControlPlane::register_node(const Node& in) {
  if (in.protocol < kOldestAgentProtocol || in.protocol > kProtocolVersion) {
    throw ApiError(400, fmt::format("protocol: agent speaks version {}, this control plane version {} (accepts agents "
                                    "of versions {} to {})",
                                    in.protocol, kProtocolVersion, kOldestAgentProtocol, kProtocolVersion));
  }
  std::lock_guard lock(mu_);
  Node node = in;
  if (const auto it = nodes_.find(in.name); it != nodes_.end()) node.draining = it->second.draining;
  node.state = node.draining ? NodeState::kDraining : NodeState::kReady;
  node.last_heartbeat = now();
  store_.put_node(node);
  nodes_[node.name] = node;
  dirty_ = true;
  tick_cv_.notify_all();
}

Node ControlPlane::drain(const std::string& name) {
  std::lock_guard lock(mu_);
  const auto it = nodes_.find(name);
  if (it == nodes_.end()) throw ApiError(404, fmt::format("no node '{}'", name));
  it->second.draining = true;
  if (it->second.state == NodeState::kReady) it->second.state = NodeState::kDraining;
  store_.put_node(it->second);
  return it->second;
}

std::vector<Node> ControlPlane::list_nodes() const {
  std::lock_guard lock(mu_);
  std::vector<Node> out;
  for (const auto& [n, node] : nodes_) out.push_back(node);
  return out;
}

int ControlPlane::node_protocol(const std::string& name) const {
  std::lock_guard lock(mu_);
  const auto it = nodes_.find(name);
  return it == nodes_.end() ? kProtocolVersion : it->second.protocol;
}

void ControlPlane::wake_node(const std::string& node) {
  ++node_generation_[node];
  changed_.notify_all();
}

Assignment ControlPlane::assignment_for(const Task& t, const Job& j) const {
  Assignment a;
  a.task = t;
  const auto& s = j.spec;
  const auto str = [](auto v) { return fmt::format("{}", v); };
  if (s.kind == JobKind::kServe) {
    a.program = std::string(kServeProgram);
    const auto& p = s.serve;
    a.argv = {"--model",       p.model,        "--backend",     t.backend,
              "--block-size",  str(p.block_size),  "--kv-blocks",     str(p.kv_blocks),
              "--max-running", str(p.max_running), "--max-batched-tokens", str(p.max_batched_tokens),
              "--max-waiting", str(p.max_waiting)};
    if (!p.prefix_cache) a.argv.emplace_back("--no-prefix-cache");
  } else if (s.kind == JobKind::kMatmul) {
    a.argv = {"matmul", "--backend", t.backend,          "--n", str(s.matmul.n), "--chain", str(s.matmul.chain),
              "--seed", str(s.matmul.seed), "--json"};
  } else {
    a.argv = {"train",
              "--backend", t.backend,
              "--rank", str(t.rank),
              "--world", str(t.world),
              "--steps", str(s.train.steps),
              "--seed", str(s.train.seed),
              "--checkpoint-dir", (options_.state_dir / "checkpoints" / j.id).string(),
              "--checkpoint-every", str(s.train.checkpoint_every),
              "--batch", str(s.train.batch),
              "--hidden", str(s.train.hidden),
              "--rendezvous", options_.public_url,
              "--job", j.id,
              "--attempt", str(t.attempt),
              "--json"};
  }
  return a;
}

std::vector<Assignment> ControlPlane::assignments_locked(const std::string& node) const {
  std::vector<Assignment> out;
  for (const auto& [id, t] : live_tasks_) {
    if (t->node == node) out.push_back(assignment_for(*t, jobs_.at(t->job)));
  }
  return out;
}

std::vector<Assignment> ControlPlane::heartbeat(const Heartbeat& hb, std::chrono::milliseconds wait) {
  std::unique_lock lock(mu_);
  const auto it = nodes_.find(hb.node);
  if (it == nodes_.end()) throw ApiError(404, fmt::format("no node '{}': register first", hb.node));
  Node& node = it->second;
  const bool was_lost = node.state == NodeState::kLost;
  node.last_heartbeat = now();
  bool health_changed = false;
  for (const auto& d : hb.devices) {
    for (auto& mine : node.devices) {
      if (mine.id == d.id && mine.health != d.health) {
        mine.health = d.health;
        health_changed = true;
      }
    }
  }
  if (was_lost) node.state = node.draining ? NodeState::kDraining : NodeState::kReady;
  if (health_changed || was_lost) {
    store_.put_node(node);
    dirty_ = true;
  }
  // Tasks the agent reports; a running task it no longer knows is lost (the
  // agent restarted), unless it was only just assigned.
  std::set<std::string> known;
  for (const auto& r : hb.tasks) {
    known.insert(r.id);
    apply_report_locked(hb.node, r);
  }
  for (const Task* t : live_tasks_where([&](const Task& x) {
         return x.node == hb.node && x.state == TaskState::kRunning && known.count(x.id) == 0;
       })) {
    apply_report_locked(hb.node, TaskReport{t->id, TaskState::kLost, -1, "the agent no longer runs it", {}, {}, {}});
  }
  if (dirty_) tick_cv_.notify_all();
  // Long poll: answer at once if the reports changed anything for this node,
  // else wait for a placement or cancel to reach it.
  const std::uint64_t gen = node_generation_[hb.node];
  auto current = assignments_locked(hb.node);
  bool all_known = std::all_of(current.begin(), current.end(), [&](const Assignment& a) { return known.count(a.task.id) > 0; });
  bool stale_known = false;
  for (const auto& id : known) {
    const auto t = tasks_.find(id);
    if (t == tasks_.end() || (t->second.state != TaskState::kAssigned && t->second.state != TaskState::kRunning)) {
      stale_known = true;
    }
  }
  if (all_known && !stale_known && wait.count() > 0) {
    changed_.wait_for(lock, wait, [&] { return stopping_ || node_generation_[hb.node] != gen; });
    current = assignments_locked(hb.node);
  }
  return current;
}

void ControlPlane::report_task(const std::string& node, const TaskReport& report) {
  std::lock_guard lock(mu_);
  apply_report_locked(node, report);
  if (dirty_) tick_cv_.notify_all();
}

void ControlPlane::apply_report_locked(const std::string& node, const TaskReport& r) {
  const auto it = tasks_.find(r.id);
  if (it == tasks_.end()) return;  // a task from before a wipe: the agent will be told to drop it
  Task& t = it->second;
  if (t.node != node) return;
  if (!r.isolation.empty()) {
    t.isolation = r.isolation;
    t.device_nodes = r.device_nodes;
  }
  Job& job = jobs_.at(t.job);
  if ((t.state == TaskState::kAssigned || t.state == TaskState::kRunning) && r.state == TaskState::kRunning) {
    const bool started = t.state == TaskState::kAssigned;
    const bool endpoint_changed = !r.endpoint.empty() && r.endpoint != t.endpoint;
    if (!started && !endpoint_changed) return;
    t.state = TaskState::kRunning;
    if (endpoint_changed) t.endpoint = r.endpoint;
    store_.transaction([&] {
      save_task(t);
      if (endpoint_changed && job.state == JobState::kRunning && t.attempt == job.attempt) {
        // The server answered its health check: this is where clients go now.
        job.endpoint = t.endpoint;
        job.reason = fmt::format("serving at {} ({} {})", job.endpoint, t.node, t.device);
        save_job(job);
      }
    });
    return;
  }
  if (t.state != TaskState::kAssigned && t.state != TaskState::kRunning) return;  // already final
  if (r.state != TaskState::kSucceeded && r.state != TaskState::kFailed && r.state != TaskState::kLost) return;
  t.state = r.state;
  t.exit_code = r.exit_code;
  t.message = r.message;
  if (job.spec.kind == JobKind::kServe && t.state == TaskState::kSucceeded) {
    // A service runs until cancelled: a server that exits, even with 0, has
    // stopped serving and is restarted like a crashed rank.
    t.state = TaskState::kFailed;
    t.message = fmt::format("the server exited {}: a serve job runs until cancelled", t.exit_code);
  }
  if (!r.log.empty()) {
    const std::string_view log = r.log.size() > kMaxLogBytes ? std::string_view(r.log).substr(r.log.size() - kMaxLogBytes)
                                                             : std::string_view(r.log);
    // A log that cannot be kept (full disk) costs the log, not the report.
    if (auto w = gpulab::write_file(log_path(t.id), log); !w) t.message += " (log not kept: " + w.error().message + ")";
  }
  store_.transaction([&] {
    save_task(t);
    if (job.state != JobState::kRunning || t.attempt != job.attempt) return;
    if (t.rank == 0 && r.result.is_object()) job.result = r.result;
    if (t.state == TaskState::kSucceeded) {
      finish_job_if_done_locked(job);
    } else {
      const std::string why = t.state == TaskState::kLost
                                  ? fmt::format("rank {} on {} was lost: {}", t.rank, t.node, t.message)
                                  : fmt::format("rank {} on {} exited {}: {}", t.rank, t.node, t.exit_code, t.message);
      restart_or_fail_locked(job, why, t.exit_code == 2);
    }
  });
  dirty_ = true;
}

void ControlPlane::finish_job_if_done_locked(Job& job) {
  for (const auto& [id, t] : tasks_) {
    if (t.job == job.id && t.attempt == job.attempt && t.state != TaskState::kSucceeded) return;
  }
  job.state = JobState::kSucceeded;
  job.reason = "every rank exited 0";
  job.finished_at = now();
  save_job(job);
}

void ControlPlane::restart_or_fail_locked(Job& job, const std::string& why, bool bad_input) {
  // The rest of the gang stops: a data-parallel job cannot go on without a rank.
  for (Task* t : live_tasks_where([&](const Task& x) { return x.job == job.id && x.attempt == job.attempt; })) {
    t->state = TaskState::kCancelled;
    t->message = "stopped: another rank of the gang failed";
    save_task(*t);
    wake_node(t->node);
  }
  job.placement.clear();
  job.topology = {};
  job.endpoint.clear();
  if (bad_input || job.restarts >= job.spec.max_restarts) {
    job.state = JobState::kFailed;
    job.reason = bad_input ? why : fmt::format("{} (after {} restarts)", why, job.restarts);
    job.finished_at = now();
    queued_since_.erase(job.id);
  } else {
    ++job.restarts;
    ++task_restarts_total_;
    job.state = JobState::kPending;
    job.requeued_because = fmt::format("restarting: {}", why);
    job.reason = job.requeued_because + " — waiting for the next scheduling pass";
    queued_since_[job.id] = now();
  }
  save_job(job);
}

void ControlPlane::mark_node_lost_locked(Node& node) {
  node.state = NodeState::kLost;
  ++nodes_lost_total_;
  store_.put_node(node);
  const double age = now() - node.last_heartbeat;
  for (const Task* t : live_tasks_where([&](const Task& x) { return x.node == node.name; })) {
    apply_report_locked(node.name, TaskReport{t->id, TaskState::kLost, -1,
                                              fmt::format("node {} lost (no heartbeat for {:.1f} s)", node.name, age),
                                              {}, {}, {}});
  }
}

Plan ControlPlane::plan_pass() {
  std::lock_guard lock(mu_);
  std::vector<Job*> queued;
  return plan_locked(queued);
}

// Nothing here copies a node or builds a key: the scheduler gets pointers to
// the live jobs and nodes and views of the held devices' names.
Plan ControlPlane::plan_locked(std::vector<Job*>& queued) {
  std::vector<const Job*> queue;
  SchedulerInput in;
  queued.clear();
  queued.reserve(live_jobs_.size());
  queue.reserve(live_jobs_.size());
  for (const auto& [seq, j] : live_jobs_) {
    if (j->state == JobState::kPending) {
      queued.push_back(j);
      queue.push_back(j);
    } else {
      in.running.push_back(j);
    }
  }
  in.nodes.reserve(nodes_.size());
  for (const auto& [n, node] : nodes_) in.nodes.push_back(&node);
  in.allocated.reserve(live_tasks_.size());
  for (const auto& [id, t] : live_tasks_) in.allocated.push_back(DeviceRef{t->node, t->device});
  in.device_cap = licence_.status().max_devices;
  in.external_in_use = slurm_devices_held_locked();  // the cap is one count across executors
  in.preempt = options_.preempt;
  in.order = options_.queue_order;
  return scheduler_.pass(in, queue);
}

void ControlPlane::schedule_locked() {
  std::vector<Job*> queued;  // the plan's decisions are for these, in this order
  const auto plan = plan_locked(queued);
  const double t_now = now();
  store_.transaction([&] {
    // Evicted jobs first: their devices are what the preemptors were placed on.
    for (const auto& p : plan.preempted) {
      Job& victim = jobs_.at(p.job);
      const Job& by = jobs_.at(p.by);
      const std::string why = fmt::format("preempted by {} (priority {} > {})", by.id, by.spec.priority,
                                          victim.spec.priority);
      for (Task* t : live_tasks_where([&](const Task& x) { return x.job == victim.id && x.attempt == victim.attempt; })) {
        t->state = TaskState::kCancelled;
        t->message = why;
        save_task(*t);
        wake_node(t->node);
      }
      victim.state = JobState::kPending;
      victim.placement.clear();
      victim.topology = {};
      victim.endpoint.clear();
      ++victim.preemptions;
      ++preemptions_total_;
      victim.requeued_because = why;
      victim.reason = why + " — waiting for the next scheduling pass";
      queued_since_[victim.id] = t_now;
      save_job(victim);
      dirty_ = true;  // the next pass places it again
    }
    for (std::size_t k = 0; k < plan.decisions.size(); ++k) {
      const Decision& d = plan.decisions[k];
      Job& job = *queued[k];
      if (!d.placement) {
        // Recomputed every pass, so it always says what holds the job now
        // (compared in place: most passes change no pending job's reason).
        constexpr std::string_view kJoin = " — ";
        const std::string_view why = job.requeued_because;
        const bool same = why.empty() ? job.reason == d.reason
                                      : job.reason.size() == why.size() + kJoin.size() + d.reason.size() &&
                                            job.reason.starts_with(why) &&
                                            std::string_view(job.reason).substr(why.size()).starts_with(kJoin) &&
                                            job.reason.ends_with(d.reason);
        if (!same) {
          job.reason = why.empty() ? d.reason : fmt::format("{}{}{}", why, kJoin, d.reason);
          save_job(job);
        }
        continue;
      }
      ++job.attempt;
      job.state = JobState::kRunning;
      job.placement = *d.placement;
      job.topology = d.topology;
      job.reason = job.restarts > 0 || job.preemptions > 0
                       ? fmt::format("placed (attempt {}: {} restarts, {} preemptions)", job.attempt, job.restarts,
                                     job.preemptions)
                       : "placed";
      if (job.spec.kind == JobKind::kServe) job.reason += "; the server starts, waiting for its GET /health";
      job.requeued_because.clear();
      job.started_at = t_now;
      for (const auto& slot : job.placement) {
        Task t;
        t.id = fmt::format("{}.{}.{}", job.id, job.attempt, slot.rank);
        t.job = job.id;
        t.attempt = job.attempt;
        t.rank = slot.rank;
        t.world = static_cast<int>(job.placement.size());
        t.node = slot.node;
        t.device = slot.device;
        t.backend = slot.backend;
        const std::string tid = t.id;
        save_task(tasks_[tid] = std::move(t));
        wake_node(slot.node);
      }
      save_job(job);
      if (const auto q = queued_since_.find(job.id); q != queued_since_.end()) {
        placement_.histogram(kPlacementMetric, "", kPlacementBuckets).observe({}, std::max(0.0, t_now - q->second));
        queued_since_.erase(q);
      }
    }
  });
}

void ControlPlane::tick() {
  tick_native();
  sync_slurm();
}

void ControlPlane::tick_native() {
  std::lock_guard lock(mu_);
  const double t = now();
  const double timeout = std::chrono::duration<double>(options_.node_timeout).count();
  for (auto& [name, node] : nodes_) {
    if (node.state != NodeState::kLost && t - node.last_heartbeat > timeout) {
      mark_node_lost_locked(node);
      dirty_ = true;
    }
  }
  if (t - last_licence_refresh_ >= 60) {
    last_licence_refresh_ = t;
    licence_.refresh();
    dirty_ = true;
  }
  if (dirty_) {
    dirty_ = false;
    schedule_locked();
  }
}

void ControlPlane::start() {
  thread_ = std::make_unique<std::thread>([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      tick_cv_.wait_for(lock, std::chrono::milliseconds(200), [&] { return stopping_ || dirty_ || slurm_dirty_; });
      if (stopping_) break;
      lock.unlock();
      tick();
      lock.lock();
    }
  });
}

void ControlPlane::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  tick_cv_.notify_all();
  changed_.notify_all();
  if (thread_ && thread_->joinable()) thread_->join();
  thread_.reset();
}

void ControlPlane::rendezvous_publish(const std::string& job, int attempt, int rank, int world,
                                      const std::string& address, int port) {
  std::lock_guard lock(mu_);
  const auto it = jobs_.find(job);
  if (it == jobs_.end()) throw ApiError(404, fmt::format("no job '{}'", job));
  if (attempt != it->second.attempt) {
    throw ApiError(409, fmt::format("attempt: job {} is at attempt {}, not {}", job, it->second.attempt, attempt));
  }
  const int expected = static_cast<int>(it->second.placement.size());
  if (world != expected) throw ApiError(400, fmt::format("world: job {} has {} ranks, not {}", job, expected, world));
  if (rank < 0 || rank >= world) throw ApiError(400, fmt::format("rank: must be 0..{}", world - 1));
  if (port <= 0 || port > 65535) throw ApiError(400, "port: must be 1..65535");
  rendezvous_[{job, attempt}][rank] = Json{{"rank", rank}, {"address", address}, {"port", port}};
}

Json ControlPlane::rendezvous_get(const std::string& job, int attempt) const {
  std::lock_guard lock(mu_);
  const auto it = jobs_.find(job);
  if (it == jobs_.end()) throw ApiError(404, fmt::format("no job '{}'", job));
  Json eps = Json::array();
  if (const auto r = rendezvous_.find({job, attempt}); r != rendezvous_.end()) {
    for (const auto& [rank, ep] : r->second) eps.push_back(ep);
  }
  return Json{{"attempt", attempt}, {"world", it->second.placement.size()}, {"endpoints", eps}};
}

LicenceStatus ControlPlane::licence() const {
  std::lock_guard lock(mu_);
  return licence_.status();
}

std::string ControlPlane::metrics() const {
  std::lock_guard lock(mu_);
  namespace prom = gpulab::prom;
  prom::Exposition e;
  e.merge(placement_);
  const double t = now();
  auto& jobs = e.gauge("gpulab_platform_jobs", "Jobs by state.");
  std::map<std::string, int> by_state;
  for (auto st : {JobState::kPending, JobState::kRunning, JobState::kSucceeded, JobState::kFailed, JobState::kCancelled}) {
    by_state[std::string(state_name(st))] = 0;
  }
  int pending = 0;
  for (const auto& [id, j] : jobs_) {
    ++by_state[std::string(state_name(j.state))];
    pending += j.state == JobState::kPending ? 1 : 0;
  }
  for (const auto& [st, n] : by_state) jobs.set({{"state", st}}, n);
  e.gauge("gpulab_platform_queue_depth", "Jobs waiting for placement.").set({}, pending);
  int allocated = 0;
  int idle = 0;
  int unhealthy = 0;
  std::set<std::pair<std::string_view, std::string_view>> held;
  for (const auto& [id, task] : live_tasks_) held.emplace(task->node, task->device);
  for (const auto& [name, n] : nodes_) {
    for (const auto& d : n.devices) {
      if (held.count({name, d.id}) != 0) {
        ++allocated;
      } else if (!d.health.healthy || n.state == NodeState::kLost) {
        ++unhealthy;
      } else {
        ++idle;
      }
    }
  }
  auto& gpus = e.gauge("gpulab_platform_devices", "Devices by use: allocated, idle, unavailable (unhealthy or lost).");
  gpus.set({{"state", "allocated"}}, allocated);
  gpus.set({{"state", "idle"}}, idle);
  gpus.set({{"state", "unavailable"}}, unhealthy);
  // Stranded: idle devices while jobs wait — capacity the queue cannot use
  // (wrong backend, too few on one node for a gang, or over the licence cap).
  e.gauge("gpulab_platform_stranded_devices", "Idle devices while at least one job waits for placement.")
      .set({}, pending > 0 ? idle : 0);
  e.counter("gpulab_platform_jobs_submitted_total", "Jobs accepted by the API.").set({}, static_cast<double>(submitted_total_));
  e.counter("gpulab_platform_task_restarts_total", "Gang restarts after a failed or lost rank.")
      .set({}, static_cast<double>(task_restarts_total_));
  e.counter("gpulab_platform_preemptions_total", "Running jobs evicted for a higher-priority job.")
      .set({}, static_cast<double>(preemptions_total_));
  e.counter("gpulab_platform_nodes_lost_total", "Nodes declared lost after missing heartbeats.")
      .set({}, static_cast<double>(nodes_lost_total_));
  auto& age = e.gauge("gpulab_platform_node_heartbeat_age_seconds", "Seconds since each node's last heartbeat.");
  auto& up = e.gauge("gpulab_platform_node_up", "1 when the node is ready or draining, 0 when lost.");
  for (const auto& [name, n] : nodes_) {
    age.set({{"node", name}}, std::max(0.0, t - n.last_heartbeat));
    up.set({{"node", name}}, n.state == NodeState::kLost ? 0 : 1);
  }
  const auto& lic = licence_.status();
  e.gauge("gpulab_platform_license_state", "The licence state (1 for the current one).").set({{"state", lic.state}}, 1);
  if (lic.days_left >= 0) {
    e.gauge("gpulab_platform_license_days_left", "Days until the licence (or its grace period) ends.")
        .set({}, static_cast<double>(lic.days_left));
  }
  e.gauge("gpulab_platform_license_max_devices", "Devices the licence allows in use at once.").set({}, lic.max_devices);
  return e.render();
}

}  // namespace platform
