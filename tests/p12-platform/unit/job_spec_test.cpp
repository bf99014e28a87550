#include "platform/job_spec.hpp"

#include <gtest/gtest.h>

namespace {

using gpulab::Json;
using platform::parse_job_spec;
using platform::parse_spec_text;
using platform::SpecError;

std::string field_of(const Json& doc) {
  try {
    parse_job_spec(doc);
  } catch (const SpecError& e) {
    return e.field();
  }
  return "(accepted)";
}

TEST(JobSpec, TheIssueExampleParsesFromYaml) {
  const auto doc = parse_spec_text(
      "name: mlp-demo\nkind: train\ngpus: 2\ngang: true\ntenant: team-a\npriority: 10\nbackend: auto\n"
      "params: {steps: 20, seed: 7, checkpoint_every: 5}\n");
  const auto s = parse_job_spec(doc);
  EXPECT_EQ(s.name, "mlp-demo");
  EXPECT_EQ(s.kind, platform::JobKind::kTrain);
  EXPECT_EQ(s.gpus, 2);
  EXPECT_EQ(s.tenant, "team-a");
  EXPECT_EQ(s.priority, 10);
  EXPECT_EQ(s.train.steps, 20);
  EXPECT_EQ(s.train.seed, 7U);
  EXPECT_EQ(s.train.checkpoint_every, 5);
}

TEST(JobSpec, JsonRoundTripIsStable) {
  const auto s = parse_job_spec(Json{{"name", "m"}, {"kind", "matmul"}, {"params", Json{{"n", 128}}}});
  const auto again = parse_job_spec(platform::to_json(s));
  EXPECT_EQ(platform::to_json(again), platform::to_json(s));
  EXPECT_EQ(again.matmul.n, 128);
}

TEST(JobSpec, EveryBadFieldIsNamed) {
  EXPECT_EQ(field_of(Json{{"kind", "train"}}), "name");
  EXPECT_EQ(field_of(Json{{"name", "x"}}), "kind");
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "dance"}}), "kind");
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "train"}, {"gpus", 0}}), "gpus");
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "train"}, {"gpus", 100000}}), "gpus");
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "train"}, {"gpus", 1.5}}), "gpus");
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "train"}, {"gpus", "two"}}), "gpus");
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "train"}, {"backend", "tpu"}}), "backend");
  EXPECT_EQ(field_of(Json{{"name", "X Y"}, {"kind", "train"}}), "name");
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "train"}, {"gpu", 2}}), "gpu");  // a typo is not ignored
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "train"}, {"params", Json{{"steps", -1}}}}), "params.steps");
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "train"}, {"params", Json{{"stepz", 1}}}}), "params.stepz");
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "train"}, {"params", 3}}), "params");
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "matmul"}, {"gpus", 2}}), "gpus");
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "train"}, {"gpus", 3}, {"params", Json{{"batch", 64}}}}),
            "params.batch");
  EXPECT_EQ(field_of(Json::array()), "spec");
}

TEST(JobSpec, HugeNumbersAreRangeErrorsNotWraparound) {
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "train"}, {"gpus", 18446744073709551615ULL}}), "gpus");
  EXPECT_EQ(field_of(Json{{"name", "x"}, {"kind", "train"}, {"priority", 1e300}}), "priority");
}

TEST(JobSpec, MalformedTextNamesTheSpec) {
  try {
    parse_spec_text("{\"name\": ");
    FAIL() << "accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "spec");
  }
  try {
    parse_spec_text("name: [unclosed\n");
    FAIL() << "accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "spec");
    EXPECT_NE(std::string(e.what()).find("YAML"), std::string::npos);
  }
}

}  // namespace

namespace {

TEST(JobSpec, AServeJobTakesTheServersFlagsWithItsDefaults) {
  const auto s = parse_job_spec(parse_spec_text("name: chat\nkind: serve\nbackend: fast\nparams: {model: tiny}\n"));
  EXPECT_EQ(s.kind, platform::JobKind::kServe);
  EXPECT_EQ(s.serve.model, "tiny");
  EXPECT_EQ(s.serve.block_size, 16);
  EXPECT_EQ(s.serve.kv_blocks, 1024);
  EXPECT_TRUE(s.serve.prefix_cache);
  const auto again = parse_job_spec(platform::to_json(s));
  EXPECT_EQ(platform::to_json(again), platform::to_json(s));
  EXPECT_EQ(platform::to_json(s).at("params").at("max_waiting"), 64);
}

TEST(JobSpec, AServeJobsBadFieldsAreNamed) {
  const Json base{{"name", "x"}, {"kind", "serve"}};
  auto with = [&](const char* key, Json value) {
    Json d = base;
    d[key] = std::move(value);
    return d;
  };
  EXPECT_EQ(field_of(with("params", Json{{"model", "huge"}})), "params.model");
  EXPECT_EQ(field_of(with("params", Json{{"modle", "tiny"}})), "params.modle");
  EXPECT_EQ(field_of(with("params", Json{{"max_running", 0}})), "params.max_running");
  EXPECT_EQ(field_of(with("params", Json{{"prefix_cache", "no"}})), "params.prefix_cache");
  EXPECT_EQ(field_of(with("gpus", 2)), "gpus");
  EXPECT_EQ(field_of(with("backend", "blas")), "backend");
  // The pool must hold one full context: gpulab-serve's own rule, refused before it would crash-loop.
  try {
    parse_job_spec(with("params", Json{{"model", "tiny"}, {"kv_blocks", 3}}));
    FAIL() << "accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "params.kv_blocks");
    EXPECT_NE(std::string(e.what()).find("must hold one full context of 256 tokens"), std::string::npos) << e.what();
  }
  EXPECT_EQ(field_of(with("params", Json{{"model", "tiny"}, {"kv_blocks", 16}})), "(accepted)");
  EXPECT_TRUE(platform::kind_runs_on(platform::JobKind::kTrain, "blas"));
  EXPECT_FALSE(platform::kind_runs_on(platform::JobKind::kServe, "blas"));
  EXPECT_TRUE(platform::kind_runs_on(platform::JobKind::kServe, "fast"));
}

}  // namespace
