// The JSON text of a best-kernel answer: the one home of how a porting::Selection is
// written, straight into a string, member by member. /api/v1/best writes every answer with
// it: an exact one from members serialized once per shape (best_index.h), one from
// another shape from text serialized once per shape by the same writer (moved_text.h).
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kport/porting/selection.h"

namespace kport::coordinator {

// Appends JSON tokens to a string exactly as boost::json::serialize writes the same
// values (numbers, escapes), so text written piece by piece equals a serialized tree.
class JsonText {
 public:
  explicit JsonText(std::string& out) : m_out(out) {}
  JsonText(const JsonText&) = delete;
  JsonText& operator=(const JsonText&) = delete;

  JsonText& raw(std::string_view text) {
    m_out += text;
    return *this;
  }
  JsonText& raw(char c) {
    m_out += c;
    return *this;
  }
  // `"name":`; `name` is a member name of the API's own (plain ASCII, nothing to escape).
  JsonText& key(std::string_view name);
  // `,"name":`.
  JsonText& next(std::string_view name) { return raw(',').key(name); }
  JsonText& str(std::string_view s);
  // What str(s) writes between its quotes: a part of a string whose other parts are
  // written alike (escaping is character by character).
  JsonText& chars(std::string_view s);
  JsonText& num(double d);
  JsonText& num(std::int64_t i);
  JsonText& num(int i) { return num(static_cast<std::int64_t>(i)); }
  JsonText& boolean(bool b) { return raw(b ? std::string_view("true") : std::string_view("false")); }
  JsonText& null() { return raw(std::string_view("null")); }
  // An ISO 8601 UTC time, null for unset (0), as every answer writes times.
  JsonText& time(std::int64_t unix_ms);
  JsonText& strings(const std::vector<std::string>& v);
  std::string& out() { return m_out; }

 private:
  void drain();
  std::string& m_out;
  boost::json::serializer m_sr;
};

// to_json(Selection)'s members in their order.
inline constexpr std::string_view k_selection_members[] = {
    "kind",          "provisional", "confidence",      "best",          "tied",        "reason",
    "notes",         "ranked_by",   "candidates_from", "matched_shape", "exact_shape", "evidence_gpu_model",
    "evidence_arch", "evidence",    "ranking",         "excluded"};

// Every member, `"kind":...,"excluded":[...]`, without the braces. With `excluded`, the
// excluded member's value is that text (written ahead of time from the same exclusions).
void write_members(JsonText& w, const porting::Selection& s, const std::string* excluded = nullptr);
// The excluded member's value alone.
void write_excluded(JsonText& w, const porting::Selection& s);
// A measurement as every answer names its evidence.
void write_evidence(JsonText& w, const porting::Measurement& m);

}  // namespace kport::coordinator
