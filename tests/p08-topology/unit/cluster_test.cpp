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

// Nine levels of nine aliases name 9^9 scalars in a few hundred bytes; the
// conversion stops at the alias cap and says where.
TEST(ClusterYaml, AliasBombDepthAndSizeAreCapped) {
  if (!topo::yaml_supported()) GTEST_SKIP() << "built without libyaml (apt-get install libyaml-dev)";
  std::string bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) bomb += std::string(i ? ", *" : "*") + static_cast<char>(c - 1);
    bomb += "]\n";
  }
  auto r = topo::yaml_to_json(bomb);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("YAML aliases expand to more than 10000 nodes (an alias bomb?)"),
            std::string::npos)
      << r.error().message;
  EXPECT_EQ(r.error().message.rfind("line ", 0), 0U) << r.error().message;

  // A few aliases of a small map are fine.
  const auto ok = topo::yaml_to_json("l: &l {bandwidth_GBps: 50, latency_us: 2}\nib: *l\npcie: *l\n");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok.value()["pcie"]["bandwidth_GBps"], 50);

  r = topo::yaml_to_json(std::string(70, '[') + std::string(70, ']'));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("YAML nested deeper than 64 levels"), std::string::npos)
      << r.error().message;

  std::string wide = "[";
  for (int i = 0; i < 1'000'001; ++i) wide += "1,";
  wide += "1]";
  r = topo::yaml_to_json(wide);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("YAML document has more than 1000000 nodes"), std::string::npos)
      << r.error().message;
}

TEST(Cluster, UnreadableFilesAreRefusedByName) {
  auto r = topo::load_cluster("/");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "'/' is a directory, not a file");
  r = topo::load_cluster("/dev/zero");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "'/dev/zero' is a device, not a file");
}

}  // namespace
