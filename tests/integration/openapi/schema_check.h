// Validates JSON values against the Schema Objects of an OpenAPI 3.0 document, and
// finds the schema an operation documents for an answer. Enough of the dialect for
// kport's own document: $ref (local), type, nullable, enum, properties, required,
// additionalProperties, items, allOf, anyOf, oneOf, minimum, maximum, pattern and
// format date-time; a keyword it does not know is itself an error, so the document
// cannot say something this check silently ignores. Not thread-safe; one per document.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <vector>

namespace kport::testing {

class SchemaCheck {
 public:
  explicit SchemaCheck(boost::json::value document);

  // Problems of `value` against `schema`, each "PATH: what" (empty: valid).
  std::vector<std::string> validate(const boost::json::value& value, const boost::json::value& schema) const;
  std::vector<std::string> validate_ref(const boost::json::value& value, const std::string& name) const;

  // The schema of the answer `status` with `media_type` (parameters ignored) of
  // `method path`, falling back to its "default" answer; null with `why` set when the
  // operation, the answer or the media type is not documented.
  const boost::json::value* answer_schema(const std::string& method, const std::string& path, int status,
                                          const std::string& media_type, std::string& why) const;

  const boost::json::value& document() const { return m_doc; }

 private:
  void check(const boost::json::value& v, const boost::json::value& schema, const std::string& at,
             std::vector<std::string>& out, int depth) const;
  const boost::json::value* resolve(const std::string& ref) const;

  boost::json::value m_doc;
};

}  // namespace kport::testing
