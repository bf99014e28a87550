// The labs' own metrics, the node-exporter textfile-collector way: each lab
// program run with `--metrics-out DIR/<lab>.prom` writes its families
// atomically (gpulab::prom::write_file_atomic); this source re-exposes every
// DIR/*.prom. A file that does not parse, clashes with a family of another
// file (other type or bounds) or repeats a series another file has is skipped
// whole, with a warning naming the file and the reason;
// gpu_exporter_textfile_scrape_error is 1 while any file is skipped.
#pragma once

#include <cstddef>
#include <filesystem>

#include "exporter/source.hpp"

namespace exporter {

class TextfileSource : public Source {
 public:
  static constexpr std::size_t kMaxFileBytes = 4U << 20;
  explicit TextfileSource(std::filesystem::path dir);
  [[nodiscard]] std::string_view name() const override { return "textfile"; }
  Availability collect(gpulab::prom::Exposition& out) override;

 private:
  std::filesystem::path dir_;
};

}  // namespace exporter
