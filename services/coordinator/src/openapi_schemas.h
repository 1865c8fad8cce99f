// The schemas of the OpenAPI document (components/schemas): every body the coordinator
// accepts or answers, field for field as codec.cpp and the route handlers write them.
//
// A response object lists each field it always carries as required and admits no other
// (additionalProperties: false), so a field a handler adds, drops or retypes without the
// document following fails the document test (tests/integration/openapi_conformance_test).
// Request bodies list what the handler reads; unknown fields are ignored there, so they
// stay open. Pure; built once.
#pragma once

#include <boost/json.hpp>

namespace kport::coordinator {

boost::json::object openapi_schemas();

}  // namespace kport::coordinator
