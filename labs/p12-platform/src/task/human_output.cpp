#include "platform/task/human_output.hpp"

#include <fmt/format.h>

#include <string>

#include "gpulab/table.hpp"

namespace gpulab::platform::task {

namespace {

std::string ratio_text(const gpulab::Json& v) {
  return v.is_number() ? fmt::format("{:.3f}", v.get<double>()) : v.get<std::string>();
}

}  // namespace

void print_json_line(std::FILE* out, const gpulab::Json& event) {
  fmt::print(out, "{}\n", event.dump());
  std::fflush(out);
}

void HumanPrinter::print(const gpulab::Json& e) {
  const std::string kind = e.value("event", "");
  if (kind == "matmul") {
    if (!header_done_)
      fmt::print(out_, "{:>5}  {:>10}  {:>9}  {:>16}  {:>12}  {}\n", "link", "ms", "GFLOP/s", "sum",
                 "err/tol", "result");
    header_done_ = true;
    const double ms = e["ms"].get<double>();
    fmt::print(out_, "{:>5}  {:>10.3f}  {:>9.2f}  {:>16.6g}  {:>12}  {}\n",
               e["i"].get<std::uint64_t>(), ms, e.value("gflops", 0.0),
               e["checksum"]["sum"].get<double>(), ratio_text(e["worst_error_ratio"]),
               e["pass"].get<bool>() ? "PASS" : "FAIL");
  } else if (kind == "step") {
    if (!header_done_) fmt::print(out_, "{:>8}  {:>12}  {:>8}\n", "step", "loss", "accuracy");
    header_done_ = true;
    fmt::print(out_, "{:>8}  {:>12.6f}  {:>8.3f}\n", e["step"].get<std::uint64_t>(),
               e["loss"].get<double>(), e["accuracy"].get<double>());
  } else if (kind == "checkpoint") {
    fmt::print(out_, "  checkpoint after step {} -> {}\n", e["step"].get<std::uint64_t>(),
               e["path"].get<std::string>());
  } else if (kind == "done") {
    gpulab::Table t;
    t.column("summary", gpulab::Table::Align::kLeft).column("value", gpulab::Table::Align::kLeft);
    for (const auto& [key, value] : e.items()) {
      if (key == "event") continue;
      t.row({key, value.is_string() ? value.get<std::string>() : value.dump()});
    }
    fmt::print(out_, "\n{}", t.render());
  }
  std::fflush(out_);
}

}  // namespace gpulab::platform::task
