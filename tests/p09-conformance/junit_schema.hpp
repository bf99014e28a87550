// Validates a JUnit XML document against tests/p09-conformance/junit.xsd with
// libxml2; returns "" when valid, else libxml2's complaints.
#pragma once

#include <libxml/parser.h>
#include <libxml/xmlschemas.h>

#include <cstdarg>
#include <cstdio>
#include <string>

namespace junit_schema {

inline void collect(void* ctx, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  *static_cast<std::string*>(ctx) += buf;
}

inline std::string validate(const std::string& xml) {
  std::string errors;
  xmlSchemaParserCtxtPtr pctx = xmlSchemaNewParserCtxt(GPULAB_TEST_DIR "/junit.xsd");
  xmlSchemaPtr schema = xmlSchemaParse(pctx);
  if (!schema) {
    xmlSchemaFreeParserCtxt(pctx);
    return "cannot parse junit.xsd";
  }
  xmlDocPtr doc = xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "junit.xml", nullptr,
                                XML_PARSE_NONET);
  if (!doc) errors = "not well-formed XML";
  if (doc) {
    xmlSchemaValidCtxtPtr vctx = xmlSchemaNewValidCtxt(schema);
    xmlSchemaSetValidErrors(vctx, collect, collect, &errors);
    if (xmlSchemaValidateDoc(vctx, doc) != 0 && errors.empty()) errors = "invalid";
    xmlSchemaFreeValidCtxt(vctx);
    xmlFreeDoc(doc);
  }
  xmlSchemaFree(schema);
  xmlSchemaFreeParserCtxt(pctx);
  return errors;
}

}  // namespace junit_schema
