// The coordinator's operations as its OpenAPI document lists them (openapi.cpp builds
// the document from this table and openapi_schemas.h): path, method, operationId, who
// may call, typed query parameters, the request body and every answer a handler gives
// with its status. Pure; the table is built on each call.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <vector>

namespace kport::coordinator::openapi {

// Who may call an operation, as the handler checks it (auth.cpp).
enum class Auth {
  none,          // no check at all
  read,          // anyone while --open-reads (the default), else any valid token
  admin,         // the admin token
  runner,        // a runner token
  admin_runner,  // either
  registration,  // the registration token
  signature,     // a push webhook's signature or token against the hook secret
};

struct Answer {
  int status;
  const char* description;
  boost::json::object content;  // media type -> {schema}; empty: no body
};

struct Op {
  const char* method;
  const char* path;
  const char* id;  // operationId
  const char* summary;
  Auth auth;
  std::vector<boost::json::object> query;  // query parameter objects
  boost::json::object request;             // content of the request body; empty: none
  std::vector<Answer> answers;
  bool request_optional = false;
};

// The parameter object of a path parameter, typed by its name ({id}: a positive
// integer, {sha256}: 64 hex digits, {target}: sm_...).
boost::json::object path_parameter(const std::string& name);

// An answer carrying the Error body.
Answer error_answer(int status, const char* description);

// Every operation the coordinator serves, in the order of the route files.
std::vector<Op> operations();

}  // namespace kport::coordinator::openapi
