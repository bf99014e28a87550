#include "topology/yaml.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <vector>

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

// Aliases let a few hundred bytes name billions of nodes ("billion laughs"):
// libyaml keeps an alias as a reference, and turning the document into JSON
// expands it. So the expansion is counted as it happens and stops at caps no
// real topology reaches (the shipped ones have under 100 nodes and no alias).
constexpr int kMaxYamlDepth = 64;
constexpr std::size_t kMaxYamlNodes = 1'000'000;    // nodes produced in all
constexpr std::size_t kMaxYamlAliasNodes = 10'000;  // nodes produced again through an alias

class Converter {
 public:
  explicit Converter(yaml_document_t* doc)
      : doc_(doc), seen_(static_cast<std::size_t>(doc->nodes.top - doc->nodes.start), false) {}

  gpulab::Json convert(const yaml_node_t* n, int depth) {
    if (n == nullptr) throw std::invalid_argument("broken YAML node");
    const std::size_t line = n->start_mark.line + 1;
    if (depth > kMaxYamlDepth)
      throw std::invalid_argument(
          fmt::format("line {}: YAML nested deeper than {} levels", line, kMaxYamlDepth));
    const auto index = static_cast<std::size_t>(n - doc_->nodes.start);
    if (seen_[index] && ++alias_nodes_ > kMaxYamlAliasNodes)
      throw std::invalid_argument(
          fmt::format("line {}: YAML aliases expand to more than {} nodes (an alias bomb?)", line,
                      kMaxYamlAliasNodes));
    seen_[index] = true;
    if (++nodes_ > kMaxYamlNodes)
      throw std::invalid_argument(
          fmt::format("line {}: YAML document has more than {} nodes", line, kMaxYamlNodes));
    switch (n->type) {
      case YAML_SCALAR_NODE:
        return scalar(n);
      case YAML_SEQUENCE_NODE: {
        gpulab::Json arr = gpulab::Json::array();
        for (auto* it = n->data.sequence.items.start; it < n->data.sequence.items.top; ++it)
          arr.push_back(convert(yaml_document_get_node(doc_, *it), depth + 1));
        return arr;
      }
      case YAML_MAPPING_NODE: {
        gpulab::Json obj = gpulab::Json::object();
        for (auto* p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; ++p) {
          const yaml_node_t* key = yaml_document_get_node(doc_, p->key);
          if (key == nullptr || key->type != YAML_SCALAR_NODE)
            throw std::invalid_argument("YAML mapping keys must be plain text");
          obj[std::string(reinterpret_cast<const char*>(key->data.scalar.value),
                          key->data.scalar.length)] =
              convert(yaml_document_get_node(doc_, p->value), depth + 1);
        }
        return obj;
      }
      default:
        throw std::invalid_argument("empty YAML node");
    }
  }

 private:
  yaml_document_t* doc_;
  std::vector<bool> seen_;  // by node index: produced once already
  std::size_t nodes_ = 0;
  std::size_t alias_nodes_ = 0;
};

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
    return Converter(&doc).convert(root, 0);
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
