#include "exporter/textfile_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>
#include <vector>

#include "gpulab/file.hpp"

namespace exporter {

namespace prom = gpulab::prom;
namespace fs = std::filesystem;

TextfileSource::TextfileSource(fs::path dir) : dir_(std::move(dir)) {}

namespace {

// Why `file` cannot join `merged`, or "" if it can.
std::string clash(const prom::Exposition& merged, const prom::Exposition& file) {
  for (const auto& name : file.names()) {
    const prom::Family* mine = merged.find(name);
    if (mine == nullptr) continue;
    const prom::Family* theirs = file.find(name);
    if (mine->type() != theirs->type() || mine->upper_bounds() != theirs->upper_bounds()) {
      return fmt::format("{} is a {} in an earlier file, a {} here", name,
                         prom::type_name(mine->type()), prom::type_name(theirs->type()));
    }
    for (const auto& [labels, s] : theirs->series()) {
      if (mine->find(labels) != nullptr) {
        return fmt::format("{} repeats a series an earlier file has", name);
      }
    }
  }
  return "";
}

}  // namespace

Availability TextfileSource::collect(prom::Exposition& out) {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) {
    return unavailable(fmt::format("{}: not a directory{}", dir_.string(),
                                   ec ? fmt::format(" ({})", ec.message()) : ""));
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() == ".prom" && p.filename().string().front() != '.') files.push_back(p);
  }
  if (ec) return unavailable(fmt::format("{}: {}", dir_.string(), ec.message()));
  std::sort(files.begin(), files.end());

  Availability a{true, "", {}};
  prom::Exposition merged;
  for (const auto& p : files) {
    const std::string name = p.filename().string();
    std::error_code sec;
    if (!fs::is_regular_file(p, sec)) {
      a.warnings.push_back(fmt::format("skipping {}: not a regular file", name));
      continue;
    }
    // A file that grows past the cap while being read is still cut off there.
    auto text = gpulab::read_text_file(p.string(), kMaxFileBytes);
    if (!text) {
      a.warnings.push_back(fmt::format("skipping {}: {}", name, text.error().message));
      continue;
    }
    auto parsed = prom::parse(text.value());
    if (!parsed) {
      a.warnings.push_back(fmt::format("skipping {}: {}", name, parsed.error().message));
      continue;
    }
    if (const std::string why = clash(merged, parsed.value()); !why.empty()) {
      a.warnings.push_back(fmt::format("skipping {}: {}", name, why));
      continue;
    }
    merged.merge(parsed.value());
  }
  out.merge(merged);
  out.gauge("gpu_exporter_textfile_scrape_error",
            "1 if a textfile was skipped in the last collection (see the exporter's log).")
      .set({}, a.warnings.empty() ? 0 : 1);
  return a;
}

}  // namespace exporter
