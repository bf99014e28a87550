// The three outputs: the human table says what the matrix found, --json
// parses and carries the same verdicts, and the JUnit XML is valid against
// the JUnit schema (tests/p09-conformance/junit.xsd) with counts that add up.
#include "conformance/report.hpp"

#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <cstdarg>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "fake_targets.hpp"
#include "junit_schema.hpp"

namespace {

using namespace conformance;
using fake::FakeTarget;
using fake::Flaw;

Report make_report(bool with_liar, bool perf) {
  MatrixOptions o;
  o.ops = {Op::kBuffer, Op::kMatmul, Op::kSoftmax};  // what the fakes implement
  const auto cases = prepare(build_matrix(o));
  Report r;
  r.core_abi = "2.2";
  r.capabilities = capabilities_of(cases);
  r.cases_per_backend = cases.size();
  FakeTarget honest("cpu_ref", {DType::kF32, DType::kF16, DType::kBF16, DType::kFP8});
  FakeTarget limited("limited", {DType::kF32});
  FakeTarget liar("liar", {DType::kF32, DType::kF16}, Flaw::kF16AsBF16, DType::kF16);
  FakeTarget gone("cuda", {DType::kF32, DType::kF16});
  gone.mutable_info().unavailable = "no device: no CUDA-capable device is detected";
  r.backends.push_back(run_backend(honest, cases));
  r.backends.push_back(run_backend(limited, cases));
  if (with_liar) r.backends.push_back(run_backend(liar, cases));
  r.backends.push_back(run_backend(gone, cases));
  r.rejected.push_back({"stale", "ABI major 1 != core 2 <\"quoted\" & escaped>"});
  if (perf) {
    r.perf.run = true;
    r.perf.size = 256;
    r.perf.threshold = 0.5;
    r.perf.roof = {"blas F32 matmul 256x256x256", 100.0, "", true};
    r.perf.entries.resize(r.backends.size());
    r.perf.entries[0].gflops = 80.0;                  // certified
    r.perf.entries[1].gflops = 10.0;                  // supported-not-recommended
    if (with_liar) r.perf.entries[2].gflops = 500.0;  // fast, but wrong
    r.perf.entries.back().note = "no device";
    assign_tiers(r);
  }
  return r;
}

TEST(PerfTier, Classification) {
  EXPECT_EQ(classify_tier(true, 0.5, 0.5), Tier::kCertified);  // at the threshold counts
  EXPECT_EQ(classify_tier(true, 0.49, 0.5), Tier::kSupportedNotRecommended);
  EXPECT_EQ(classify_tier(false, 5.0, 0.5), Tier::kNotCertified);  // no speed makes up for wrong
  EXPECT_EQ(classify_tier(true, std::nullopt, 0.5), Tier::kNotMeasured);
  EXPECT_EQ(name_of(Tier::kSupportedNotRecommended), "supported-not-recommended");
  EXPECT_DOUBLE_EQ(matmul_gflops(100, 100, 100, 0.001), 2.0);
  EXPECT_EQ(matmul_gflops(1, 1, 1, 0), 0.0);
}

TEST(PerfTier, AssignTiersUsesTheRoof) {
  const Report r = make_report(true, true);
  EXPECT_EQ(r.perf.entries[0].tier, Tier::kCertified);
  EXPECT_DOUBLE_EQ(*r.perf.entries[0].ratio, 0.8);
  EXPECT_EQ(r.perf.entries[1].tier, Tier::kSupportedNotRecommended);
  EXPECT_EQ(r.perf.entries[2].tier, Tier::kNotCertified);
  EXPECT_EQ(r.perf.entries[3].tier, Tier::kNotMeasured);
}

TEST(PerfTier, FmaRoofIsPositive) {
  EXPECT_GT(measure_fma_roof_gflops(1, 0.01), 0.0);
}

TEST(ReportText, NamesTheLiarAndTheVerdict) {
  const std::string text = render_text(make_report(true, true));
  EXPECT_NE(text.find("FAIL liar/F16/matmul: 6 of 8 shapes wrong; first 1x1x1: "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("FAIL liar/F16/softmax: 4 of 6 shapes wrong; first 3x257: "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("FAIL: 2 declared capabilities failed: liar/F16/matmul, liar/F16/softmax\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rejected stale: ABI major 1 != core 2"), std::string::npos);
  EXPECT_NE(text.find("matmul BF16   PASS     n/a      n/a   skip"), std::string::npos) << text;
  EXPECT_NE(text.find("supported-not-recommended"), std::string::npos);
  EXPECT_NE(text.find("not certified"), std::string::npos);
}

TEST(ReportText, AnUnfairOpenblasReferenceIsALoudWarning) {
  Report r = make_report(false, true);
  r.perf.roof.peer =
      "OpenBLAS core Prescott (SSE kernels) on a CPU with AVX-512: misdetected, "
      "OPENBLAS_CORETYPE=Cooperlake gives it AVX-512 kernels";
  r.perf.roof.peer_fair = false;
  const std::string text = render_text(r);
  EXPECT_NE(text.find("\nWARNING: reference OpenBLAS core Prescott (SSE kernels) on a CPU with AVX-512: "
                      "misdetected, OPENBLAS_CORETYPE=Cooperlake gives it AVX-512 kernels; it runs below "
                      "what this CPU can do"),
            std::string::npos)
      << text;
  r.perf.roof.peer = "OpenBLAS core Cooperlake (AVX-512 kernels) on a CPU with AVX-512: fair";
  r.perf.roof.peer_fair = true;
  const std::string fair = render_text(r);
  EXPECT_EQ(fair.find("WARNING"), std::string::npos) << fair;
  EXPECT_NE(fair.find("\nreference: OpenBLAS core Cooperlake (AVX-512 kernels) on a CPU with AVX-512: fair\n"),
            std::string::npos)
      << fair;
}

TEST(ReportText, AllHonestIsPass) {
  const std::string text = render_text(make_report(false, false));
  EXPECT_EQ(text.find("FAIL"), std::string::npos) << text;
  // cpu_ref: buffer + 2 ops x 4 dtypes; limited: buffer + 2 ops x F32.
  EXPECT_NE(text.find("PASS: all 12 declared capabilities of 2 tested backends conform\n"),
            std::string::npos)
      << text;
}

TEST(ReportText, EveryFailureModeListsEachCase) {
  TextOptions o;
  o.every_failure = true;
  const std::string text = render_text(make_report(true, false), o);
  std::size_t count = 0;
  for (std::size_t pos = 0; (pos = text.find("FAIL liar/F16/matmul ", pos)) != std::string::npos;
       ++pos)
    ++count;
  EXPECT_EQ(count, 6u);  // 8 shapes; m = 0 writes nothing and k = 0 writes zeros: the liar cannot
                         // get those wrong
}

TEST(ReportJson, ParsesAndCarriesTheVerdicts) {
  const auto doc = nlohmann::json::parse(to_json(make_report(true, true)).dump());
  EXPECT_EQ(doc["verdict"], "FAIL");
  EXPECT_EQ(doc["failed_capabilities"], nlohmann::json({"liar/F16/matmul", "liar/F16/softmax"}));
  ASSERT_EQ(doc["backends"].size(), 4u);
  const auto& liar = doc["backends"][2];
  EXPECT_EQ(liar["name"], "liar");
  EXPECT_FALSE(liar["conformant"]);
  EXPECT_EQ(liar["performance"]["tier"], "not certified");
  bool found = false;
  for (const auto& c : liar["capabilities"])
    if (c["capability"] == "liar/F16/matmul") {
      found = true;
      EXPECT_EQ(c["verdict"], "FAIL");
      EXPECT_EQ(c["passed"], 2);  // m = 0 and k = 0
      EXPECT_EQ(c["total"], 8);
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(doc["backends"][3]["available"], false);
  EXPECT_EQ(doc["tolerance"]["F16"]["flush_below"], 0x1p-14);
  EXPECT_EQ(doc["performance"]["reference_gflops"], 100.0);
}

TEST(ReportJunit, EscapesEverythingXmlCannotCarryRaw) {
  EXPECT_EQ(xml_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
  EXPECT_EQ(xml_escape(std::string("bell\x07tab\t")), "bell?tab\t");
}

int int_attr(xmlNodePtr n, const char* name) {
  xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
  const int out = v ? std::stoi(reinterpret_cast<const char*>(v)) : -1;
  xmlFree(v);
  return out;
}

bool named(xmlNodePtr n, const char* name) {
  return n->type == XML_ELEMENT_NODE &&
         xmlStrcmp(n->name, reinterpret_cast<const xmlChar*>(name)) == 0;
}

TEST(ReportJunit, ValidAgainstTheSchemaAndCountsAddUp) {
  const std::string xml = to_junit_xml(make_report(true, true));
  EXPECT_EQ(junit_schema::validate(xml), "");
  xmlDocPtr doc = xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "junit.xml", nullptr,
                                XML_PARSE_NONET);
  ASSERT_NE(doc, nullptr);
  xmlNodePtr root = xmlDocGetRootElement(doc);
  int tests = 0, failures = 0, skipped = 0, suites = 0;
  for (xmlNodePtr s = root->children; s; s = s->next) {
    if (!named(s, "testsuite")) continue;
    ++suites;
    int t = 0, f = 0, k = 0;
    for (xmlNodePtr c = s->children; c; c = c->next) {
      if (!named(c, "testcase")) continue;
      ++t;
      for (xmlNodePtr x = c->children; x; x = x->next) {
        f += named(x, "failure") ? 1 : 0;
        k += named(x, "skipped") ? 1 : 0;
      }
    }
    EXPECT_EQ(int_attr(s, "tests"), t);
    EXPECT_EQ(int_attr(s, "failures"), f);
    EXPECT_EQ(int_attr(s, "skipped"), k);
    tests += t;
    failures += f;
    skipped += k;
  }
  EXPECT_EQ(suites, 4);
  EXPECT_EQ(int_attr(root, "tests"), tests);
  EXPECT_EQ(int_attr(root, "failures"), failures);
  EXPECT_EQ(int_attr(root, "skipped"), skipped);
  EXPECT_EQ(
      failures,
      6 + 4);  // liar: 6 matmul F16 shapes + 4 softmax F16 shapes (0-sized and 1x1 cannot fail)
  xmlFreeDoc(doc);
}

TEST(ReportJunit, TheSchemaRejectsWhatCiWouldReject) {
  // The validator is not a rubber stamp: a testcase without a name, a count
  // that is not a number, and a failure outside a testcase are all refused.
  EXPECT_NE(
      junit_schema::validate(
          "<testsuites><testsuite name=\"a\" tests=\"1\"><testcase/></testsuite></testsuites>"),
      "");
  EXPECT_NE(junit_schema::validate("<testsuites><testsuite name=\"a\" tests=\"x\"/></testsuites>"),
            "");
  EXPECT_NE(
      junit_schema::validate(
          "<testsuites><testsuite name=\"a\" tests=\"1\"><failure/></testsuite></testsuites>"),
      "");
  EXPECT_EQ(junit_schema::validate("<testsuites><testsuite name=\"a\" tests=\"0\"/></testsuites>"),
            "");
}

}  // namespace
