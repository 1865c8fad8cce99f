// Records of measure requests and of questions /api/v1/best answered without a
// measurement (migrations 0010, 0023, 0025). Conventions as in records.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kport/db/records.h"

namespace kport::db {

// What was asked: a GPU model, an op family, a dtype and a shape in canonical form
// (porting::Shape::canonical(), keys sorted).
struct BestKey {
  std::string gpu_model, family, dtype, shape;
};

// A request to measure one key in one library, and the check job it queued. The key and
// the library together name a request (migration 0023): two libraries asking for one key
// are two requests.
struct BestRequest {
  std::int64_t id = 0;
  BestKey key;
  std::string repo = {};  // the library (repository) measured; "" for a request of no library
  std::int64_t job_id = 0;
  std::int64_t requests = 1;  // how many times it was requested while open
  std::int64_t asked = 0;     // /api/v1/best answers of the key without a measurement (flushed)
  std::int64_t created_ms = 0, updated_ms = 0;
  Job job;  // as list_jobs reports it (awaiting_runner derived)
};

struct BestRequestOpened {
  BestRequest request;
  bool created = false;  // false: an open request of the key answered, nothing queued
};

// How often /api/v1/best answered a key without a measurement, from one library's
// evidence (migration 0025): the library that would measure it.
struct BestAsk {
  BestKey key;
  std::int64_t asks = 0;
  std::int64_t first_ms = 0, last_ms = 0;
  std::string repo = {};  // the library (repository) the answers were of; "" for none
};

struct BestRequestFilter {
  std::optional<std::string> gpu_model;
  int limit = 100;
  std::optional<std::int64_t> before_id;           // newest first
  std::optional<std::string> repo = std::nullopt;  // "" selects the requests of no library
};

}  // namespace kport::db
