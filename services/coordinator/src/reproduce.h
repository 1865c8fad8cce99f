// The commands that reproduce a result: download the very harness binary that measured it
// (by sha256, from this coordinator's artifact store), then run it on the same case with
// the same input seed and the same flags the GPU runner passed.
//
// What a result carries for this is the runner's env.reproduce: {harness, harness_sha256,
// target, check: [args...], bench: [args...]}, the arguments after the harness path that
// replay the case alone. A result without it (stored before runners recorded it) gets the
// best command its columns allow, and `missing` says what it lacks. Pure functions;
// thread-safe. Every argument is shell-quoted, since env is what a runner sent.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "kport/db/records.h"

namespace kport::coordinator {

// The coordinator URL when the caller knows none: the shell expands it where the command
// runs, with the CLI's default.
inline constexpr std::string_view k_server_placeholder = "${KPORT_SERVER:-http://127.0.0.1:8080}";

struct Reproduction {
  std::string harness;                  // kport-harness-<target>
  std::string harness_sha256;           // empty when the result names no harness
  std::string download_url;             // <server>/api/v1/artifacts/<sha256>; empty without a sha
  std::vector<std::string> check_args;  // after the harness path
  std::vector<std::string> bench_args;  // empty when the result was not timed
  std::string check, bench;             // whole commands (download, chmod, run); bench empty when not timed
  std::vector<std::string> missing;     // what keeps the commands from replaying the result exactly
  std::string env;                      // "NAME=value " words: the library's env the harness ran with
};

// `server`: the coordinator's base URL as the reader reaches it (no trailing slash), or
// k_server_placeholder.
Reproduction reproduction(const db::ResultRecord& r, std::string_view server = k_server_placeholder);

// {harness, harness_sha256, download_url, check, bench, check_args, bench_args, exact, missing}
boost::json::object to_json(const Reproduction& p);

// The check command of reproduction(r, server), or with `timing` its bench command (the
// check's when the result was not timed).
std::string reproduce_command(const db::ResultRecord& r, bool timing, std::string_view server = k_server_placeholder);

// `s` as one shell word: unchanged when it holds only characters no shell treats
// specially, else in single quotes.
std::string shell_quote(std::string_view s);

}  // namespace kport::coordinator
