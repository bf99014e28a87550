// The OpenAPI document against the server's real answers: every documented
// operation is called on a real HTTP server over a real ControlPlane, each
// answer's status must be documented for that operation and its JSON must
// match the documented schema (types, required fields, enums, ranges), and
// every documented operation must have been exercised.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include "gpulab/file.hpp"
#include "platform/control_server.hpp"
#include "platform/inventory.hpp"
#include "topology/yaml.hpp"

namespace {

using gpulab::Json;
using namespace platform;

class SchemaChecker {
 public:
  explicit SchemaChecker(Json doc) : doc_(std::move(doc)) {}

  // Empty when `v` matches `schema`; else the first mismatch with its path.
  std::string check(const Json& schema, const Json& v, const std::string& path) const {
    if (schema.contains("$ref")) {
      const auto ref = schema.at("$ref").get<std::string>();
      const auto name = ref.substr(ref.rfind('/') + 1);
      return check(doc_.at("components").at("schemas").at(name), v, path);
    }
    if (schema.contains("allOf")) {
      for (const auto& s : schema.at("allOf")) {
        if (auto e = check(s, v, path); !e.empty()) return e;
      }
      return {};
    }
    if (schema.contains("type")) {
      const auto t = schema.at("type").get<std::string>();
      const bool ok = (t == "object" && v.is_object()) || (t == "array" && v.is_array()) ||
                      (t == "string" && v.is_string()) || (t == "boolean" && v.is_boolean()) ||
                      (t == "integer" && (v.is_number_integer() || v.is_number_unsigned())) ||
                      (t == "number" && v.is_number());
      if (!ok) return path + ": expected " + t + ", got " + v.dump();
    }
    if (schema.contains("enum")) {
      bool found = false;
      for (const auto& e : schema.at("enum")) found = found || e == v;
      if (!found) return path + ": " + v.dump() + " is not in the enum";
    }
    if (v.is_number() && schema.contains("minimum") && v.get<double>() < schema.at("minimum").get<double>()) {
      return path + ": below minimum";
    }
    if (v.is_number() && schema.contains("maximum") && v.get<double>() > schema.at("maximum").get<double>()) {
      return path + ": above maximum";
    }
    if (v.is_object()) {
      const Json required = schema.value("required", Json::array());
      const Json properties = schema.value("properties", Json::object());
      for (const auto& r : required) {
        if (!v.contains(r.get<std::string>())) return path + ": missing required '" + r.get<std::string>() + "'";
      }
      for (const auto& [k, s] : properties.items()) {
        if (v.contains(k)) {
          if (auto e = check(s, v.at(k), path + "." + k); !e.empty()) return e;
        }
      }
    }
    if (v.is_array() && schema.contains("items")) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (auto e = check(schema.at("items"), v.at(i), path + "[" + std::to_string(i) + "]"); !e.empty()) return e;
      }
    }
    return {};
  }

 private:
  Json doc_;
};

class OpenApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto text = gpulab::read_text_file(std::string(GPULAB_LAB_DIR) + "/api/openapi.yaml", 1 << 20);
    ASSERT_TRUE(text.ok());
    auto doc = topo::yaml_to_json(text.value());
    ASSERT_TRUE(doc.ok()) << doc.error().message;
    doc_ = doc.value();
    char tmpl[] = "/tmp/gpulab-openapi-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ControlOptions o;
    o.state_dir = dir_;
    o.public_url = "http://127.0.0.1:1";
    cp_ = std::make_unique<ControlPlane>(o);
    add_control_routes(http_, *cp_);
    port_ = http_.bind("127.0.0.1:0");
    server_ = std::thread([this] { http_.listen_after_bind(); });
    while (!http_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  }
  void TearDown() override {
    http_.stop();
    server_.join();
    cp_.reset();
    std::filesystem::remove_all(dir_);
  }

  // The documented operation for a concrete path, e.g. /v1/jobs/j-1 -> /v1/jobs/{id}.
  std::string template_of(const std::string& path) const {
    for (const auto& [tmpl, op] : doc_.at("paths").items()) {
      const std::string re = std::regex_replace(tmpl, std::regex(R"(\{[^}]+\})"), "[^/]+");
      if (std::regex_match(path, std::regex(re))) return tmpl;
    }
    return {};
  }

  // Calls and checks one answer against the document; returns it.
  httplib::Result call(const std::string& method, const std::string& path, const std::string& body = "",
                       const httplib::Headers& headers = {}) {
    const std::string clean = path.substr(0, path.find('?'));
    httplib::Result res = method == "get" ? client_->Get(path, headers) : client_->Post(path, headers, body, "application/json");
    EXPECT_TRUE(res) << method << " " << path;
    if (!res) return res;
    const auto tmpl = template_of(clean);
    EXPECT_FALSE(tmpl.empty()) << clean << " is not documented";
    if (tmpl.empty()) return res;
    const auto& op = doc_.at("paths").at(tmpl);
    EXPECT_TRUE(op.contains(method)) << method << " " << tmpl << " is not documented";
    if (!op.contains(method)) return res;
    called_.insert(method + " " + tmpl);
    const auto& responses = op.at(method).at("responses");
    const auto status = std::to_string(res->status);
    EXPECT_TRUE(responses.contains(status)) << method << " " << path << " answered undocumented " << status << ": "
                                            << res->body;
    if (!responses.contains(status)) return res;
    const auto& content = responses.at(status).at("content");
    if (content.contains("application/json")) {
      EXPECT_NE(res->get_header_value("Content-Type").find("application/json"), std::string::npos);
      Json body_json;
      try {
        body_json = Json::parse(res->body);
      } catch (const std::exception&) {
        ADD_FAILURE() << method << " " << path << ": not JSON: " << res->body;
        return res;
      }
      const auto err = SchemaChecker(doc_).check(content.at("application/json").at("schema"), body_json, "body");
      EXPECT_EQ(err, "") << method << " " << path << " -> " << status << ": " << res->body;
    } else {
      EXPECT_NE(res->get_header_value("Content-Type").find("text/plain"), std::string::npos);
    }
    return res;
  }

  Json doc_;
  std::filesystem::path dir_;
  std::unique_ptr<ControlPlane> cp_;
  HttpService http_;
  int port_ = 0;
  std::thread server_;
  std::unique_ptr<httplib::Client> client_;
  std::set<std::string> called_;
};

TEST_F(OpenApiTest, EveryDocumentedOperationAnswersAsDocumented) {
  call("get", "/healthz");
  call("get", "/v1/version");
  call("get", "/v1/licence");
  // The devices as an agent reports them: inventory accelerators plus dtypes.
  Json devices = Json::array();
  for (auto d : parse_device_spec("cpu_ref:2")) {
    d.dtypes = {"f32"};
    devices.push_back(to_json(d));
  }
  Json reg{{"name", "a"}, {"address", "http://127.0.0.1:9"}, {"protocol", kProtocolVersion}, {"devices", devices}};
  EXPECT_EQ(call("post", "/v1/nodes/register", reg.dump())->status, 200);
  EXPECT_EQ(call("post", "/v1/nodes/register", Json{{"name", "b"}}.dump())->status, 400);
  Json bad = reg;
  bad["name"] = "b";
  bad["devices"][1]["links"][0]["peer"] = "cpu_ref:7";
  const auto refused = call("post", "/v1/nodes/register", bad.dump());
  EXPECT_EQ(refused->status, 400);
  EXPECT_NE(refused->body.find("devices[1].links[0].peer: no accelerator 'cpu_ref:7'"), std::string::npos)
      << refused->body;
  // Two protocols back: outside the window of one (protocol_version_test.cpp has the N-1 agent).
  Json old = Json{{"name", "b"},
                  {"address", "http://127.0.0.1:9"},
                  {"protocol", kProtocolVersion - 2},
                  {"devices", Json::array({Json{{"backend", "cpu_ref"}, {"index", 0}}})}};
  const auto v0 = call("post", "/v1/nodes/register", old.dump());
  EXPECT_EQ(v0->status, 400);
  EXPECT_NE(v0->body.find(fmt::format("agent speaks version {}", kProtocolVersion - 2)),
            std::string::npos)
      << v0->body;
  const std::string yaml = "name: t\nkind: train\ngpus: 2\nbackend: cpu_ref\n";
  const auto created = call("post", "/v1/jobs", yaml, {{"Idempotency-Key", "k"}});
  EXPECT_EQ(created->status, 201);
  const auto id = Json::parse(created->body).at("id").get<std::string>();
  EXPECT_EQ(call("post", "/v1/jobs", yaml, {{"Idempotency-Key", "k"}})->status, 200);
  EXPECT_EQ(call("post", "/v1/jobs", "name: t\nkind: train\ngpus: 0\n")->status, 400);
  EXPECT_EQ(call("post", "/v1/jobs", "{not json")->status, 400);
  call("get", "/v1/jobs");
  cp_->tick();
  const auto hb = call("post", "/v1/nodes/a/heartbeat?wait_ms=0", Json{{"tasks", Json::array()}}.dump());
  const auto tasks = Json::parse(hb->body).at("tasks");
  ASSERT_EQ(tasks.size(), 2U);
  EXPECT_EQ(call("post", "/v1/nodes/zz/heartbeat", "{}")->status, 404);
  EXPECT_EQ(call("post", "/v1/jobs/" + id + "/rendezvous",
                 Json{{"attempt", 1}, {"rank", 0}, {"world", 2}, {"address", "127.0.0.1"}, {"port", 5000}}.dump())
                ->status,
            200);
  EXPECT_EQ(call("post", "/v1/jobs/" + id + "/rendezvous",
                 Json{{"attempt", 1}, {"rank", 5}, {"world", 2}, {"address", "127.0.0.1"}, {"port", 5000}}.dump())
                ->status,
            400);
  EXPECT_EQ(call("post", "/v1/jobs/" + id + "/rendezvous",
                 Json{{"attempt", 9}, {"rank", 0}, {"world", 2}, {"address", "127.0.0.1"}, {"port", 5000}}.dump())
                ->status,
            409);
  const auto rv = Json::parse(call("get", "/v1/jobs/" + id + "/rendezvous?attempt=1")->body);
  EXPECT_EQ(rv.at("endpoints").size(), 1U);
  const auto task0 = tasks.at(0).at("id").get<std::string>();
  EXPECT_EQ(call("post", "/v1/tasks/" + task0 + "/status",
                 Json{{"id", task0}, {"node", "a"}, {"state", "succeeded"}, {"exit_code", 0}, {"log", "hello\n"}}.dump())
                ->status,
            200);
  EXPECT_EQ(call("post", "/v1/tasks/" + task0 + "/status", Json{{"id", task0}, {"state", "exploded"}}.dump())->status,
            400);
  const auto detail = Json::parse(call("get", "/v1/jobs/" + id)->body);
  EXPECT_EQ(detail.at("topology").value("bottleneck", ""), "nvlink") << detail.dump();  // both ranks on node a
  EXPECT_EQ(call("get", "/v1/jobs/j-999999")->status, 404);
  call("get", "/v1/jobs/" + id + "/logs");
  EXPECT_EQ(call("get", "/v1/jobs/nope/logs")->status, 404);
  call("get", "/v1/nodes");
  EXPECT_EQ(call("post", "/v1/nodes/a/drain")->status, 200);
  EXPECT_EQ(call("post", "/v1/nodes/zz/drain")->status, 404);
  EXPECT_EQ(call("post", "/v1/jobs/" + id + "/cancel")->status, 200);
  EXPECT_EQ(call("post", "/v1/jobs/" + id + "/cancel")->status, 409);
  EXPECT_EQ(call("post", "/v1/jobs/nope/cancel")->status, 404);
  call("get", "/metrics");
  const auto targets = Json::parse(call("get", "/v1/targets")->body);
  ASSERT_EQ(targets.size(), 1U) << targets.dump();  // node a's agent; no serve job
  EXPECT_EQ(targets.at(0).at("labels").at("job"), "gpulabd-agent");

  for (const auto& [tmpl, op] : doc_.at("paths").items()) {
    for (const auto& [method, spec] : op.items()) {
      if (method == "parameters") continue;
      EXPECT_TRUE(called_.count(method + " " + tmpl)) << method << " " << tmpl << " is documented but never exercised";
    }
  }
}

TEST_F(OpenApiTest, OversizedBodiesAreRefused) {
  const std::string big(2 << 20, 'x');
  const auto res = client_->Post("/v1/jobs", big, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
}

}  // namespace
