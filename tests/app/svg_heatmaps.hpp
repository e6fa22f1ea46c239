// Reads an exported SVG with libxml2 (a real XML parser: no regular expression over the whole
// file, whose backtracking overflowed the stack on n 512 exports) and lists its heatmap groups.
#pragma once

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <cstring>
#include <string>
#include <vector>

namespace maskscope::test {

struct SvgHeatmap {
  int n = 0;  // data-n
  std::size_t rects = 0;
};

struct SvgSummary {
  bool well_formed = false;
  std::vector<SvgHeatmap> heatmaps;
  std::size_t texts = 0;
};

inline void walk_svg(xmlNode* node, SvgSummary& out) {
  for (xmlNode* cur = node; cur; cur = cur->next) {
    if (cur->type != XML_ELEMENT_NODE) continue;
    const char* name = reinterpret_cast<const char*>(cur->name);
    if (std::strcmp(name, "text") == 0) ++out.texts;
    if (std::strcmp(name, "g") == 0) {
      xmlChar* cls = xmlGetProp(cur, reinterpret_cast<const xmlChar*>("class"));
      const bool heatmap = cls && std::strcmp(reinterpret_cast<const char*>(cls), "heatmap") == 0;
      xmlFree(cls);
      if (heatmap) {
        SvgHeatmap h;
        xmlChar* n = xmlGetProp(cur, reinterpret_cast<const xmlChar*>("data-n"));
        if (n) h.n = std::atoi(reinterpret_cast<const char*>(n));
        xmlFree(n);
        for (xmlNode* c = cur->children; c; c = c->next)
          if (c->type == XML_ELEMENT_NODE && std::strcmp(reinterpret_cast<const char*>(c->name), "rect") == 0)
            ++h.rects;
        out.heatmaps.push_back(h);
        continue;
      }
    }
    walk_svg(cur->children, out);
  }
}

inline SvgSummary read_svg(const std::string& text) {
  SvgSummary out;
  xmlDoc* doc = xmlReadMemory(text.data(), int(text.size()), "figure.svg", nullptr,
                              XML_PARSE_NONET | XML_PARSE_HUGE | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc) return out;
  out.well_formed = true;
  walk_svg(xmlDocGetRootElement(doc), out);
  xmlFreeDoc(doc);
  return out;
}

}  // namespace maskscope::test
