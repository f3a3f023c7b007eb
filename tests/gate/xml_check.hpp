// xstage gate tests: a small XML 1.0 well-formedness check (elements, attributes, the five predefined
// entities, allowed characters) so JUnit output is tested without an XML library.
#pragma once
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

namespace xs::test {

// "" when well-formed, else what is wrong and where.
inline std::string xml_problem(const std::string& xml) {
  std::vector<std::string> open;
  std::size_t pos = 0, roots = 0;
  auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ':'; };
  auto check_text = [&](std::size_t from, std::size_t to) -> std::string {
    for (std::size_t i = from; i < to; ++i) {
      const auto c = static_cast<unsigned char>(xml[i]);
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return "control character at " + std::to_string(i);
      if (c == '<' || c == '"') return "raw < or \" in text/attribute at " + std::to_string(i);
      if (c == '&') {
        bool ok = false;
        for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"}) ok |= xml.compare(i, std::strlen(e), e) == 0;
        if (!ok) return "bad entity at " + std::to_string(i);
      }
    }
    return "";
  };
  if (xml.rfind("<?xml", 0) == 0) pos = xml.find("?>") + 2;
  while (pos < xml.size()) {
    const std::size_t lt = xml.find('<', pos);
    const std::size_t text_end = lt == std::string::npos ? xml.size() : lt;
    if (auto p = check_text(pos, text_end); !p.empty()) return p;
    if (open.empty() && xml.find_first_not_of(" \t\r\n", pos) < text_end) return "text outside the root";
    if (lt == std::string::npos) break;
    pos = lt + 1;
    const bool closing = pos < xml.size() && xml[pos] == '/';
    if (closing) ++pos;
    const std::size_t name_start = pos;
    while (pos < xml.size() && is_name(xml[pos])) ++pos;
    const std::string name = xml.substr(name_start, pos - name_start);
    if (name.empty()) return "empty tag name at " + std::to_string(name_start);
    if (closing) {
      if (open.empty() || open.back() != name) return "mismatched </" + name + ">";
      open.pop_back();
      if (pos >= xml.size() || xml[pos] != '>') return "bad closing tag " + name;
      ++pos;
      continue;
    }
    for (;;) {
      while (pos < xml.size() && std::isspace(static_cast<unsigned char>(xml[pos]))) ++pos;
      if (pos >= xml.size()) return "unterminated tag " + name;
      if (xml.compare(pos, 2, "/>") == 0 || xml[pos] == '>') break;
      const std::size_t attr = pos;
      while (pos < xml.size() && is_name(xml[pos])) ++pos;
      if (pos == attr || xml.compare(pos, 2, "=\"") != 0) return "bad attribute in " + name;
      const std::size_t value_end = xml.find('"', pos + 2);
      if (value_end == std::string::npos) return "unterminated attribute in " + name;
      if (auto p = check_text(pos + 2, value_end); !p.empty()) return p;
      pos = value_end + 1;
    }
    if (open.empty() && ++roots > 1) return "more than one root element";
    if (xml[pos] == '/') {
      pos += 2;
    } else {
      open.push_back(name);
      ++pos;
    }
  }
  return open.empty() && roots == 1 ? "" : "unclosed elements or no root";
}

}  // namespace xs::test
