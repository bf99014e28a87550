#include "platform/ctl_render.hpp"

#include <gtest/gtest.h>

#include "platform/inventory.hpp"

namespace {

using gpulab::Json;

Json job() {
  return Json::parse(R"({"id":"j-000001","name":"mlp","state":"running","reason":"placed","attempt":2,"restarts":1,
    "placement":[{"rank":0,"node":"a","device":"fast:0","backend":"fast"}],"result":{},
    "spec":{"name":"mlp","kind":"train","gpus":1,"gang":true,"tenant":"team-a","priority":0,"backend":"fast",
            "max_restarts":3,"params":{}},
    "tasks":[{"id":"j-000001.2.0","job":"j-000001","attempt":2,"rank":0,"world":1,"node":"a","device":"fast:0",
              "backend":"fast","state":"running","exit_code":-1,"message":"","isolation":"process"}]})");
}

TEST(CtlRender, JobsTableShowsStateAndReason) {
  const auto text = platform::render_jobs(Json::array({job()}));
  EXPECT_EQ(text,
            "JOB       NAME  KIND   GPUS  TENANT  STATE    REASON\n"
            "j-000001  mlp   train     1  team-a  running  placed\n");
}

TEST(CtlRender, DescribeShowsPlacementAndTasks) {
  const auto text = platform::render_job(job());
  EXPECT_NE(text.find("placement rank 0 → a fast:0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("attempt   2 (1 restarts)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("j-000001.2.0  a     fast:0  running     -  process"), std::string::npos) << text;
}

TEST(CtlRender, DescribeShowsTheTopologyEstimateOfAGang) {
  auto j = job();
  EXPECT_EQ(platform::render_job(j).find("topology"), std::string::npos);  // one rank: no ring, no line
  j["topology"] = Json{{"ranks", 2},       {"bytes", 22032.0},  {"allreduce_s", 4.1e-5}, {"bottleneck", "nvlink"},
                       {"nodes", 1},       {"islands", 1},      {"considered", 2},       {"next_best_s", 3.6e-3},
                       {"reason", "cheapest ring of 2 placements: 1 node, 1 island, over nvlink; the next best 3.60 ms"}};
  const auto text = platform::render_job(j);
  EXPECT_NE(text.find("topology  ring all-reduce of 22032 bytes: est. 41.0 us over nvlink; cheapest ring of 2 "
                      "placements: 1 node, 1 island, over nvlink; the next best 3.60 ms\n"),
            std::string::npos)
      << text;
}

TEST(CtlRender, NodesTableNamesUnhealthyAndUncertifiedDevices) {
  platform::Node n;
  n.name = "a";
  n.last_heartbeat = 100;
  n.devices = platform::parse_device_spec("cpu_ref:1,opencl:1");
  n.devices[0].health = gpulab::inventory::Health::unhealthy("Xid 79");
  n.devices[0].dtypes = {"f32"};
  const auto nodes = Json::array({platform::to_json(n, 100.25)});
  const auto text = platform::render_nodes(nodes);
  EXPECT_NE(text.find("cpu_ref:1,opencl:1"), std::string::npos) << text;
  EXPECT_NE(text.find("cpu_ref:0 (Xid 79), opencl:0 (not certified)"), std::string::npos) << text;
  EXPECT_NE(text.find("0.2s ago"), std::string::npos) << text;
}

TEST(CtlRender, TopCountsDevicesAndLicence) {
  const auto nodes = Json::parse(R"([{"name":"a","state":"ready","devices":[
      {"id":"fast:0","health":{"healthy":true}},{"id":"fast:1","health":{"healthy":false,"reason":"Xid 48"}}]}])");
  const auto lic = Json::parse(R"({"state":"GRACE","max_devices":4,"days_left":3})");
  const auto text = platform::render_top(Json::array({job()}), nodes, lic);
  EXPECT_EQ(text,
            "jobs      0 pending, 1 running, 0 succeeded, 0 failed, 0 cancelled\n"
            "nodes     1 of 1 up\n"
            "devices   1 allocated, 0 idle, 1 unavailable (of 2)\n"
            "licence   GRACE, at most 4 devices in use, 3 days left\n");
}

}  // namespace

namespace {

TEST(CtlRender, DescribeOfASlurmJobSaysSlurmPlacedIt) {
  auto j = job();
  j["placement"] = Json::array();
  j["tasks"] = Json::array();
  j["reason"] = "Slurm job 4 RUNNING on gpulab-n1, 2 task(s)";
  j["spec"]["executor"] = "slurm";
  const auto text = platform::render_job(j);
  EXPECT_NE(text.find("placement by Slurm (executor: slurm)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("state     running: Slurm job 4 RUNNING on gpulab-n1, 2 task(s)\n"), std::string::npos) << text;
  j["spec"].erase("executor");
  EXPECT_NE(platform::render_job(j).find("placement -\n"), std::string::npos);
}

}  // namespace
