#include "schema_check.h"

#include <cmath>
#include <regex>
#include <set>

namespace kport::testing {
namespace json = boost::json;

namespace {

const std::set<std::string> k_known = {
    "$ref",  "type",  "nullable", "enum",    "properties", "required", "additionalProperties", "items", "allOf",
    "anyOf", "oneOf", "minimum",  "maximum", "pattern",    "format",   "description"};

std::string type_of(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "boolean";
    case json::kind::int64:
    case json::kind::uint64: return "integer";
    case json::kind::double_: return "number";
    case json::kind::string: return "string";
    case json::kind::array: return "array";
    case json::kind::object: return "object";
  }
  return "?";
}

bool has_type(const json::value& v, std::string_view type) {
  const std::string t = type_of(v);
  if (type == "number") return t == "number" || t == "integer";
  if (type == "integer" && t == "number") {
    const double d = v.as_double();
    return std::isfinite(d) && d == std::floor(d);
  }
  return t == type;
}

double as_number(const json::value& v) {
  if (v.is_int64()) return static_cast<double>(v.as_int64());
  if (v.is_uint64()) return static_cast<double>(v.as_uint64());
  return v.as_double();
}

}  // namespace

SchemaCheck::SchemaCheck(json::value document) : m_doc(std::move(document)) {}

const json::value* SchemaCheck::resolve(const std::string& ref) const {
  if (ref.rfind("#/", 0) != 0) return nullptr;
  const json::value* at = &m_doc;
  std::size_t start = 2;
  while (start <= ref.size()) {
    auto slash = ref.find('/', start);
    std::string key = ref.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!at->is_object() || !at->as_object().contains(key)) return nullptr;
    at = &at->as_object().at(key);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return at;
}

std::vector<std::string> SchemaCheck::validate(const json::value& value, const json::value& schema) const {
  std::vector<std::string> out;
  check(value, schema, "$", out, 0);
  return out;
}

std::vector<std::string> SchemaCheck::validate_ref(const json::value& value, const std::string& name) const {
  return validate(value, json::object{{"$ref", "#/components/schemas/" + name}});
}

void SchemaCheck::check(const json::value& v, const json::value& schema_value, const std::string& at,
                        std::vector<std::string>& out, int depth) const {
  if (depth > 64) return out.push_back(at + ": schema nests too deep (a $ref cycle?)");
  if (!schema_value.is_object()) return out.push_back(at + ": schema is not an object");
  const auto& s = schema_value.as_object();
  for (const auto& [k, ignored] : s)
    if (!k_known.count(std::string(k))) out.push_back(at + ": schema keyword '" + std::string(k) + "' is not checked");
  if (const auto* r = s.if_contains("$ref")) {
    const auto* target = resolve(std::string(r->as_string()));
    if (!target) return out.push_back(at + ": unresolved $ref " + std::string(r->as_string()));
    return check(v, *target, at, out, depth + 1);
  }
  const bool nullable = s.contains("nullable") && s.at("nullable").as_bool();
  if (v.is_null() && nullable) return;
  auto sub = [&](const json::value& schema, std::vector<std::string>& into) { check(v, schema, at, into, depth + 1); };
  if (const auto* all = s.if_contains("allOf"))
    for (const auto& one : all->as_array()) sub(one, out);
  if (const auto* any = s.if_contains("anyOf")) {
    bool matched = false;
    std::vector<std::string> why;
    for (const auto& one : any->as_array()) {
      std::vector<std::string> e;
      sub(one, e);
      matched = matched || e.empty();
      why.insert(why.end(), e.begin(), e.end());
    }
    if (!matched) out.push_back(at + ": matches none of anyOf (" + (why.empty() ? "" : why.front()) + ")");
  }
  if (const auto* one_of = s.if_contains("oneOf")) {
    int matched = 0;
    std::string first;
    for (const auto& one : one_of->as_array()) {
      std::vector<std::string> e;
      sub(one, e);
      matched += e.empty();
      if (!e.empty() && first.empty()) first = e.front();
    }
    if (matched != 1)
      out.push_back(at + ": matches " + std::to_string(matched) + " of oneOf, not exactly one (" + first + ")");
  }
  if (const auto* t = s.if_contains("type")) {
    const std::string type(t->as_string());
    if (!has_type(v, type)) return out.push_back(at + ": is " + type_of(v) + ", documented as " + type);
  }
  if (const auto* e = s.if_contains("enum")) {
    bool found = false;
    for (const auto& x : e->as_array())
      found = found || x == v || (x.is_number() && v.is_number() && as_number(x) == as_number(v));
    if (!found) out.push_back(at + ": " + json::serialize(v) + " is not one of " + json::serialize(*e));
  }
  if (v.is_number()) {
    if (const auto* m = s.if_contains("minimum"); m && as_number(v) < as_number(*m))
      out.push_back(at + ": " + json::serialize(v) + " is below the minimum " + json::serialize(*m));
    if (const auto* m = s.if_contains("maximum"); m && as_number(v) > as_number(*m))
      out.push_back(at + ": " + json::serialize(v) + " is above the maximum " + json::serialize(*m));
  }
  if (v.is_string()) {
    const std::string text(v.as_string());
    if (const auto* p = s.if_contains("pattern");
        p && !std::regex_search(text, std::regex(std::string(p->as_string()))))
      out.push_back(at + ": '" + text + "' does not match " + std::string(p->as_string()));
    static const std::regex k_date_time(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$)");
    if (const auto* f = s.if_contains("format");
        f && f->as_string() == "date-time" && !std::regex_match(text, k_date_time))
      out.push_back(at + ": '" + text + "' is not an RFC 3339 date-time");
  }
  if (v.is_array())
    if (const auto* items = s.if_contains("items"))
      for (std::size_t i = 0; i < v.as_array().size(); ++i)
        check(v.as_array()[i], *items, at + "[" + std::to_string(i) + "]", out, depth + 1);
  if (v.is_object()) {
    const auto& o = v.as_object();
    const json::object* props = s.contains("properties") ? &s.at("properties").as_object() : nullptr;
    if (const auto* req = s.if_contains("required"))
      for (const auto& name : req->as_array())
        if (!o.contains(name.as_string()))
          out.push_back(at + ": lacks the required field '" + std::string(name.as_string()) + "'");
    const json::value* extra = s.if_contains("additionalProperties");
    for (const auto& [k, field] : o) {
      const std::string where = at + "." + std::string(k);
      if (props && props->contains(k)) {
        check(field, props->at(k), where, out, depth + 1);
      } else if (extra && extra->is_bool()) {
        if (!extra->as_bool()) out.push_back(where + ": is not a documented field");
      } else if (extra) {
        check(field, *extra, where, out, depth + 1);
      }
    }
  }
}

const json::value* SchemaCheck::answer_schema(const std::string& method, const std::string& path, int status,
                                              const std::string& media_type, std::string& why) const {
  const auto* item = m_doc.at("paths").as_object().if_contains(path);
  if (!item || !item->as_object().contains(method)) {
    why = method + " " + path + " is not documented";
    return nullptr;
  }
  const auto& responses = item->as_object().at(method).at("responses").as_object();
  const json::value* answer = responses.if_contains(std::to_string(status));
  if (!answer) answer = responses.if_contains("default");
  if (!answer) {
    why = method + " " + path + " documents no " + std::to_string(status) + " answer and no default";
    return nullptr;
  }
  const std::string media = media_type.substr(0, media_type.find(';'));
  const auto* content = answer->as_object().if_contains("content");
  const json::value* entry = content ? content->as_object().if_contains(media) : nullptr;
  if (!entry) {
    why = method + " " + path + " " + std::to_string(status) + " does not document " + media +
          " (answered: " + media_type + ")";
    return nullptr;
  }
  return &entry->at("schema");
}

}  // namespace kport::testing
