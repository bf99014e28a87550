#include "serving/server_metrics.hpp"

namespace serving {

gpulab::prom::Exposition server_metrics(const EngineLoop::Snapshot& s, const std::string& model_name) {
  gpulab::prom::Exposition e;
  const EngineStats& st = s.stats;
  const auto d = [](auto v) { return static_cast<double>(v); };
  e.gauge("serving_model_info", "The served model (value 1).").set({{"model", model_name}}, 1);
  e.gauge("serving_requests_running", "Sequences in the running batch.").set({}, d(st.running));
  e.gauge("serving_requests_waiting", "Requests queued for admission (the queue depth).").set({}, d(st.waiting));
  e.gauge("serving_queue_capacity", "Queued requests beyond which a new one gets HTTP 429.")
      .set({}, d(s.options.max_waiting));
  e.gauge("serving_kv_blocks_used", "KV-cache blocks held by sequences.").set({}, d(st.kv_blocks_used));
  e.gauge("serving_kv_blocks_free", "KV-cache blocks free (cached prefix blocks included: they are reclaimable).")
      .set({}, d(st.kv_blocks_free));
  e.counter("serving_prefix_cache_lookups_total", "Full prompt blocks looked up in the prefix cache.")
      .set({}, d(st.prefix_lookups));
  e.counter("serving_prefix_cache_hits_total", "Full prompt blocks found in the prefix cache.")
      .set({}, d(st.prefix_hits));
  e.gauge("serving_prefix_cache_hit_ratio", "Prefix-cache hits over lookups (0 before any lookup).")
      .set({}, st.prefix_lookups ? d(st.prefix_hits) / d(st.prefix_lookups) : 0.0);
  e.counter("serving_prefix_cache_skipped_tokens_total", "Prompt tokens whose prefill the prefix cache skipped.")
      .set({}, d(st.prefix_tokens_skipped));
  e.counter("serving_preemptions_total", "Sequences preempted (blocks released, recomputed later).")
      .set({}, d(st.preemptions));
  e.counter("serving_engine_steps_total", "Batches run.").set({}, d(st.steps));
  e.counter("serving_prefill_tokens_total", "Prompt and recomputed tokens run through the model.")
      .set({}, d(st.prefill_tokens));
  e.counter("serving_generation_tokens_total", "Tokens generated.").set({}, d(st.generated_tokens));
  e.counter("serving_requests_finished_total", "Requests finished (any reason).").set({}, d(st.finished));
  e.counter("serving_engine_busy_seconds_total", "Time spent running batches.").set({}, s.busy_seconds);
  e.gauge("serving_generation_tokens_per_second", "Generated tokens per second of engine busy time.")
      .set({}, s.busy_seconds > 0 ? d(st.generated_tokens) / s.busy_seconds : 0.0);
  e.counter("serving_matmul_flops_total", "Floating-point operations issued to HAL matmuls.")
      .set({}, st.matmul_flops);
  e.merge(s.latency);
  return e;
}

}  // namespace serving
