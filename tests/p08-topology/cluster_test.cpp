#include "topology/cluster.hpp"

#include <gtest/gtest.h>

namespace {

const char* kGood = R"({
  "name": "test", "nodes": 2, "gpus_per_node": 4, "nodes_per_island": 2,
  "links": {"nvlink": {"bandwidth_GBps": 450, "latency_us": 1},
            "infiniband": {"bandwidth_GBps": 25, "latency_us": 5},
            "pcie": {"bandwidth_GBps": 32, "latency_us": 1}},
  "hbm_bandwidth_GBps": 2000, "gpudirect_rdma": false })";

TEST(ClusterJson, ParsesEveryField) {
  const auto c = topo::parse_cluster_json(kGood);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c.value().gpus(), 8);
  EXPECT_EQ(c.value().nodes_per_island, 2);
  EXPECT_DOUBLE_EQ(c.value().nvlink.bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(c.value().infiniband.latency, 5e-6);
  EXPECT_DOUBLE_EQ(c.value().hbm_bandwidth, 2e12);
  EXPECT_FALSE(c.value().gpudirect_rdma);
  // One island of two nodes: even GPUs on different nodes talk over NVLink.
  EXPECT_EQ(c.value().link_between(0, 7).name, "NVLink");
}

TEST(ClusterJson, TheShippedFilesParseAndTheCurriculumFileIsTheDefault) {
  const auto file = topo::load_cluster(std::string(GPULAB_LAB_DIR) + "/topologies/curriculum.json");
  ASSERT_TRUE(file) << file.error().message;
  const auto def = topo::curriculum_cluster();
  EXPECT_EQ(file.value().gpus(), def.gpus());
  EXPECT_DOUBLE_EQ(file.value().infiniband.bandwidth, def.infiniband.bandwidth);
  EXPECT_DOUBLE_EQ(file.value().nvlink.latency, def.nvlink.latency);
  EXPECT_TRUE(topo::load_cluster(std::string(GPULAB_LAB_DIR) + "/topologies/nvl72.json"));
}

TEST(ClusterJson, ErrorsNameTheProblem) {
  const auto expect_error = [](const std::string& text, const std::string& needle) {
    const auto c = topo::parse_cluster_json(text);
    ASSERT_FALSE(c) << text;
    EXPECT_NE(c.error().message.find(needle), std::string::npos) << c.error().message;
  };
  expect_error("{", "not valid JSON");
  expect_error("[1, 2]", "JSON object");
  std::string s = kGood;
  expect_error(std::string(kGood).replace(s.find("\"nodes\": 2"), 10, "\"nodes\": 0"), "nodes: must be > 0");
  expect_error(std::string(kGood).replace(s.find("\"nodes\": 2"), 10, "\"nodes\": \"2\""), "expected a number");
  expect_error(std::string(kGood).replace(s.find("\"nodes\": 2"), 10, "\"nodes\": 2.5"), "whole number");
  expect_error(std::string(kGood).replace(s.find("\"nodes\": 2"), 10, "\"nodes\": 3"), "multiple of nodes_per_island");
  expect_error(std::string(kGood).replace(s.find("\"pcie\""), 6, "\"pcix\""), "missing \"pcie\"");
  expect_error(std::string(kGood).replace(s.find("\"latency_us\": 5"), 15, "\"latency_us\": -5"), "infiniband.latency_us");
  expect_error(std::string(kGood).replace(s.find("\"name\""), 6, "\"nmae\""), "unknown field \"nmae\"");
  expect_error(std::string(kGood).replace(s.find("false"), 5, "\"no\""), "gpudirect_rdma");
  const auto missing = topo::load_cluster("/nonexistent/cluster.json");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("cannot open"), std::string::npos);
}

}  // namespace

#include "topology/yaml.hpp"

namespace {

TEST(ClusterYaml, TheShippedYamlEqualsTheJsonAndTheDefault) {
  if (!topo::yaml_supported()) GTEST_SKIP() << "built without libyaml (apt-get install libyaml-dev)";
  const auto y = topo::load_cluster(std::string(GPULAB_LAB_DIR) + "/topologies/curriculum.yaml");
  ASSERT_TRUE(y) << y.error().message;
  const auto def = topo::curriculum_cluster();
  EXPECT_EQ(y.value().name, def.name);
  EXPECT_EQ(y.value().gpus(), def.gpus());
  EXPECT_DOUBLE_EQ(y.value().nvlink.bandwidth, def.nvlink.bandwidth);
  EXPECT_DOUBLE_EQ(y.value().infiniband.latency, def.infiniband.latency);
  EXPECT_TRUE(y.value().gpudirect_rdma);
}

TEST(ClusterYaml, ErrorsComeFromTheSameChecksAsJson) {
  if (!topo::yaml_supported()) GTEST_SKIP() << "built without libyaml (apt-get install libyaml-dev)";
  auto c = topo::parse_cluster_yaml("nodes: [1, 2\n");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("not valid YAML (line"), std::string::npos) << c.error().message;
  c = topo::parse_cluster_yaml("nodes: \"4\"\ngpus_per_node: 8\n");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("nodes: expected a number"), std::string::npos) << c.error().message;
  c = topo::parse_cluster_yaml("- 1\n- 2\n");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("JSON object"), std::string::npos) << c.error().message;
}

}  // namespace
