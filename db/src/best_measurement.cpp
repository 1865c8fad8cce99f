#include "kport/db/best_measurement.h"

namespace kport::db {

porting::Measurement to_measurement(const BestCandidate& c) {
  porting::Measurement m;
  m.result_id = c.result_id;
  m.instance = c.instance;
  m.variant = c.variant;
  m.target = c.target;
  m.gpu_model = c.gpu_model;
  m.arch = c.arch;
  m.driver = c.driver;
  m.commit = c.commit_sha;
  m.commit_ms = c.commit_ms;
  m.status = std::string(to_string(c.status));
  if (auto s = porting::Shape::parse(c.shape); s.ok()) m.shape = *s;
  m.median_us = c.median_us.value_or(0);
  m.stddev_us = c.stddev_us.value_or(0);
  m.samples = c.samples.value_or(0);
  m.ratio = c.ratio;
  m.unstable = c.unstable;
  m.runs = c.results_count;
  m.measured_at_ms = c.measured_ms;
  m.gpu_uuid = c.gpu_uuid;
  m.sm_clock_mhz = c.sm_clock_mhz.value_or(0);
  return m;
}

}  // namespace kport::db
