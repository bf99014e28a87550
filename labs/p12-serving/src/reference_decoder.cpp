#include "serving/reference_decoder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "serving/layer_ops.hpp"

namespace serving {

ReferenceDecoder::ReferenceDecoder(const Model& model) : model_(&model), ws_(model.backend()) {
  const auto& c = model.config();
  k_.assign(c.layers, std::vector<float>(c.max_context * c.kv_dim()));
  v_.assign(c.layers, std::vector<float>(c.max_context * c.kv_dim()));
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
  const std::size_t d = c.d_model, hd = c.head_dim(), kvd = c.kv_dim(), group = c.heads / c.kv_heads;
  const auto emb = m.embedding(token);
  std::copy(emb.begin(), emb.end(), x_.begin());
  for (std::size_t l = 0; l < c.layers; ++l) {
    rms_norm(x_.data(), m.attn_norm(l), c.norm_eps, h_.data());
    m.matmul(ws_, Weight::kQkv, l, h_.data(), 1, qkv_.data());
    float* q = qkv_.data();
    float* k = q + d;
    float* v = k + kvd;
    apply_rope(q, c.heads, hd, m.rope_cos(pos), m.rope_sin(pos));
    apply_rope(k, c.kv_heads, hd, m.rope_cos(pos), m.rope_sin(pos));
    std::copy_n(k, kvd, k_[l].data() + pos * kvd);
    std::copy_n(v, kvd, v_[l].data() + pos * kvd);
    for (std::size_t h = 0; h < c.heads; ++h) {
      const std::size_t off = (h / group) * hd;
      const float* keys = k_[l].data() + off;
      const float* values = v_[l].data() + off;
      attend(
          q + h * hd, pos + 1, hd, [&](std::size_t t) { return keys + t * kvd; },
          [&](std::size_t t) { return values + t * kvd; }, attn_.data() + h * hd, scores_);
    }
    m.matmul(ws_, Weight::kOut, l, attn_.data(), 1, proj_.data());
    add_into(x_.data(), proj_.data(), d);
    rms_norm(x_.data(), m.mlp_norm(l), c.norm_eps, h_.data());
    m.matmul(ws_, Weight::kGateUp, l, h_.data(), 1, gate_up_.data());
    silu_mul(gate_up_.data(), c.ffn, act_.data());
    m.matmul(ws_, Weight::kDown, l, act_.data(), 1, proj_.data());
    add_into(x_.data(), proj_.data(), d);
  }
  rms_norm(x_.data(), m.final_norm(), c.norm_eps, h_.data());
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
