// The validator the document tests rely on: the document test is only as strict as this.
#include <gtest/gtest.h>

#include "schema_check.h"

namespace kport::testing {
namespace json = boost::json;
namespace {

TEST(SchemaCheckTest, RefusesUndocumentedMissingRetypedAndNullFields) {
  json::value doc = json::parse(R"({"components":{"schemas":{
    "Thing":{"type":"object","required":["id","name"],"additionalProperties":false,
             "properties":{"id":{"type":"integer"},"name":{"type":"string"},
                           "parent":{"allOf":[{"$ref":"#/components/schemas/Thing"}],"nullable":true},
                           "kind":{"type":"string","enum":["a","b"]}}}}}})");
  SchemaCheck check(doc);
  EXPECT_TRUE(check.validate_ref(json::parse(R"({"id":1,"name":"x","parent":null})"), "Thing").empty());
  EXPECT_TRUE(check.validate_ref(json::parse(R"({"id":1,"name":"x","parent":{"id":2,"name":"y"}})"), "Thing").empty());
  EXPECT_EQ(check.validate_ref(json::parse(R"({"id":1,"name":"x","extra":1})"), "Thing").size(), 1u);
  EXPECT_EQ(check.validate_ref(json::parse(R"({"id":1})"), "Thing").size(), 1u);
  EXPECT_EQ(check.validate_ref(json::parse(R"({"id":"1","name":"x"})"), "Thing").size(), 1u);
  EXPECT_EQ(check.validate_ref(json::parse(R"({"id":1,"name":null})"), "Thing").size(), 1u);
  EXPECT_EQ(check.validate_ref(json::parse(R"({"id":1,"name":"x","kind":"c"})"), "Thing").size(), 1u);
  EXPECT_EQ(check.validate_ref(json::parse(R"({"id":1,"name":"x","parent":{"id":2}})"), "Thing").size(), 1u);
  EXPECT_EQ(check.validate(json::parse("1"), json::parse(R"({"type":"integer","exclusiveMinimum":true})")).size(), 1u)
      << "a keyword the check does not know is an error, never ignored";
}

}  // namespace
}  // namespace kport::testing
