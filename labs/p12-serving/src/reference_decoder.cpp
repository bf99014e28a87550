#include "serving/reference_decoder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "serving/layer_ops.hpp"

namespace serving {

ReferenceDecoder::ReferenceDecoder(const Model& model)
    : model_(&model),
      ws_(model.backend()),
      ops_(model.backend()),
      kv_(model.backend(), model.config().layers, 1, model.config().max_context, model.config().kv_dim()) {
  const auto& c = model.config();
  x_.resize(c.d_model);
  h_.resize(c.d_model);
  qkv_.resize(c.qkv_dim());
  attn_.resize(c.d_model);
  proj_.resize(c.d_model);
  gate_up_.resize(2 * c.ffn);
  act_.resize(c.ffn);
  logits_.resize(c.vocab);
}

const std::vector<float>& ReferenceDecoder::step(TokenId token, std::size_t pos) {
  const Model& m = *model_;
  const auto& c = m.config();
  const std::size_t d = c.d_model;
  const std::vector<std::int32_t> position{static_cast<std::int32_t>(pos)}, table{0};
  const auto emb = m.embedding(token);
  std::copy(emb.begin(), emb.end(), x_.begin());
  for (std::size_t l = 0; l < c.layers; ++l) {
    ops_.rms_norm(x_.data(), 1, d, m.attn_norm_buffer(l), c.norm_eps, h_.data());
    m.matmul(ws_, Weight::kQkv, l, h_.data(), 1, qkv_.data());
    ops_.attention(qkv_.data(), 1, c, position, table, 1, l, kv_, m.rope_cos_table(), m.rope_sin_table(),
                   attn_.data());
    m.matmul(ws_, Weight::kOut, l, attn_.data(), 1, proj_.data());
    add_into(x_.data(), proj_.data(), d);
    ops_.rms_norm(x_.data(), 1, d, m.mlp_norm_buffer(l), c.norm_eps, h_.data());
    m.matmul(ws_, Weight::kGateUp, l, h_.data(), 1, gate_up_.data());
    ops_.silu_mul(gate_up_.data(), 1, c.ffn, act_.data());
    m.matmul(ws_, Weight::kDown, l, act_.data(), 1, proj_.data());
    add_into(x_.data(), proj_.data(), d);
  }
  ops_.rms_norm(x_.data(), 1, d, m.final_norm_buffer(), c.norm_eps, h_.data());
  m.matmul(ws_, Weight::kHead, 0, h_.data(), 1, logits_.data());
  return logits_;
}

Generation ReferenceDecoder::generate(const std::vector<TokenId>& prompt, const SamplingParams& params) {
  const std::size_t ctx = model_->config().max_context;
  if (prompt.empty()) throw std::invalid_argument("prompt is empty");
  if (prompt.size() >= ctx)
    throw std::invalid_argument(fmt::format("prompt of {} tokens leaves no room in a context of {}", prompt.size(), ctx));
  gpulab::Rng rng(params.seed);
  Generation g;
  std::vector<TokenId> seq = prompt;
  for (std::size_t pos = 0;; ++pos) {
    const auto& logits = step(seq[pos], pos);
    if (pos + 1 < seq.size()) continue;  // still in the prompt
    const TokenId next = sample(logits, params.temperature, params.top_p, rng);
    seq.push_back(next);
    g.tokens.push_back(next);
    if (auto done = finished_after(next, g.tokens.size(), seq.size(), params, ctx)) {
      g.finish = *done;
      return g;
    }
  }
}

}  // namespace serving
