#include "kport/common/clock.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace kport {

std::int64_t now_unix_ms() noexcept {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string iso8601_utc(std::int64_t unix_ms) {
  std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  if (unix_ms < 0 || tm.tm_year + 1900 > 9999) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
    return buf;
  }
  // Written digit by digit: answers carry one per figure, and snprintf was most of it.
  std::string out(24, '0');
  auto put = [&out](std::size_t at, int value, int digits) {
    for (int i = digits - 1; i >= 0; --i, value /= 10) out[at + i] = static_cast<char>('0' + value % 10);
  };
  put(0, tm.tm_year + 1900, 4);
  out[4] = '-';
  put(5, tm.tm_mon + 1, 2);
  out[7] = '-';
  put(8, tm.tm_mday, 2);
  out[10] = 'T';
  put(11, tm.tm_hour, 2);
  out[13] = ':';
  put(14, tm.tm_min, 2);
  out[16] = ':';
  put(17, tm.tm_sec, 2);
  out[19] = '.';
  put(20, static_cast<int>(unix_ms % 1000), 3);
  out[23] = 'Z';
  return out;
}

}  // namespace kport
