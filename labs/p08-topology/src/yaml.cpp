#include "topology/yaml.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

#ifdef TOPO_HAVE_YAML
#include <yaml.h>
#endif

namespace topo {

#ifdef TOPO_HAVE_YAML

namespace {

gpulab::Json scalar(const yaml_node_t* n) {
  const std::string text(reinterpret_cast<const char*>(n->data.scalar.value), n->data.scalar.length);
  if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return text;
  if (text == "true") return true;
  if (text == "false") return false;
  if (text == "null" || text == "~" || text.empty()) return nullptr;
  char* end = nullptr;
  errno = 0;
  const long long i = std::strtoll(text.c_str(), &end, 10);
  if (errno == 0 && end != nullptr && *end == '\0') return i;
  errno = 0;
  const double d = std::strtod(text.c_str(), &end);
  if (errno == 0 && end != nullptr && *end == '\0') return d;
  return text;
}

gpulab::Json convert(yaml_document_t* doc, const yaml_node_t* n, int depth) {
  if (n == nullptr || depth > 64) throw std::invalid_argument("YAML nesting too deep or broken");
  switch (n->type) {
    case YAML_SCALAR_NODE: return scalar(n);
    case YAML_SEQUENCE_NODE: {
      gpulab::Json arr = gpulab::Json::array();
      for (auto* it = n->data.sequence.items.start; it < n->data.sequence.items.top; ++it)
        arr.push_back(convert(doc, yaml_document_get_node(doc, *it), depth + 1));
      return arr;
    }
    case YAML_MAPPING_NODE: {
      gpulab::Json obj = gpulab::Json::object();
      for (auto* p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; ++p) {
        const yaml_node_t* key = yaml_document_get_node(doc, p->key);
        if (key == nullptr || key->type != YAML_SCALAR_NODE) throw std::invalid_argument("YAML mapping keys must be plain text");
        obj[std::string(reinterpret_cast<const char*>(key->data.scalar.value), key->data.scalar.length)] =
            convert(doc, yaml_document_get_node(doc, p->value), depth + 1);
      }
      return obj;
    }
    default: throw std::invalid_argument("empty YAML node");
  }
}

}  // namespace

bool yaml_supported() { return true; }

gpulab::Expected<gpulab::Json> yaml_to_json(const std::string& text) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return gpulab::Error{"libyaml: cannot initialise the parser"};
  const std::unique_ptr<yaml_parser_t, decltype(&yaml_parser_delete)> parser_guard(&parser, yaml_parser_delete);
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  yaml_document_t doc;
  if (!yaml_parser_load(&parser, &doc))
    return gpulab::Error{fmt::format("not valid YAML (line {}: {})", parser.problem_mark.line + 1,
                                     parser.problem != nullptr ? parser.problem : "parse error")};
  const std::unique_ptr<yaml_document_t, decltype(&yaml_document_delete)> doc_guard(&doc, yaml_document_delete);
  const yaml_node_t* root = yaml_document_get_root_node(&doc);
  if (root == nullptr) return gpulab::Error{"empty YAML document"};
  try {
    return convert(&doc, root, 0);
  } catch (const std::exception& e) {
    return gpulab::Error{e.what()};
  }
}

#else

bool yaml_supported() { return false; }

gpulab::Expected<gpulab::Json> yaml_to_json(const std::string&) {
  return gpulab::Error{"this topo-sim was built without libyaml; use the JSON form (or install libyaml-dev)"};
}

#endif

}  // namespace topo
