#include "exporter/json_output.hpp"

#include <cmath>

namespace exporter {

namespace prom = gpulab::prom;

namespace {

gpulab::Json number(double v) {
  if (std::isfinite(v)) return v;
  return prom::format_value(v);
}

}  // namespace

gpulab::Json exposition_json(const prom::Exposition& e,
                             const std::map<std::string, bool>& sources) {
  gpulab::Json doc;
  doc["sources"] = gpulab::Json::object();
  for (const auto& [name, up] : sources) doc["sources"][name] = up;
  doc["families"] = gpulab::Json::array();
  for (const auto& name : e.names()) {
    const prom::Family& f = *e.find(name);
    gpulab::Json jf;
    jf["name"] = name;
    jf["type"] = prom::type_name(f.type());
    jf["help"] = f.help();
    jf["series"] = gpulab::Json::array();
    for (const auto& [labels, s] : f.series()) {
      gpulab::Json js;
      js["labels"] = gpulab::Json::object();
      for (const auto& [k, v] : labels) js["labels"][k] = v;
      if (f.type() == prom::MetricType::kHistogram) {
        js["buckets"] = gpulab::Json::array();
        for (std::size_t i = 0; i < s.cumulative.size(); ++i) {
          gpulab::Json b;
          b["le"] =
              i < f.upper_bounds().size() ? number(f.upper_bounds()[i]) : gpulab::Json("+Inf");
          b["count"] = number(s.cumulative[i]);
          js["buckets"].push_back(b);
        }
        js["sum"] = number(s.sum);
        js["count"] = number(s.cumulative.back());
      } else {
        js["value"] = number(s.value);
      }
      jf["series"].push_back(js);
    }
    doc["families"].push_back(jf);
  }
  return doc;
}

}  // namespace exporter
