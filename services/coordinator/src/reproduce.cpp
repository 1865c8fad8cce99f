#include "reproduce.h"

#include "kport/common/crypto.h"

namespace kport::coordinator {
namespace json = boost::json;

namespace {

constexpr std::size_t k_max_args = 64, k_max_arg = 1024;

bool plain_word(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-' || c == '=' || c == ',' || c == ':' || c == '/' || c == '+' || c == '@' ||
                    c == '%';
    if (!ok) return false;
  }
  return true;
}

bool harness_name(std::string_view s) {
  return s.size() > 14 && s.size() < 128 && s.substr(0, 14) == "kport-harness-" &&
         s.find('/') == std::string_view::npos && plain_word(s);
}

// env.reproduce of a result, when its text is an object that holds one.
json::object recorded(const std::string& env_json) {
  if (env_json.empty()) return {};
  boost::system::error_code ec;
  auto v = json::parse(env_json, ec);
  if (ec || !v.is_object()) return {};
  const auto* r = v.as_object().if_contains("reproduce");
  return r && r->is_object() ? r->as_object() : json::object{};
}

std::string text_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

// The arguments recorded under `key` when they are a well-formed `command` line.
std::vector<std::string> args_at(const json::object& o, std::string_view key, std::string_view command,
                                 bool& malformed) {
  const auto* v = o.if_contains(key);
  if (!v) return {};
  std::vector<std::string> out;
  const auto* a = v->if_array();
  if (!a || a->empty() || a->size() > k_max_args || !(*a)[0].is_string() || (*a)[0].as_string() != command) {
    malformed = true;
    return {};
  }
  for (const auto& x : *a) {
    if (!x.is_string() || x.as_string().size() > k_max_arg || x.as_string().find('\0') != json::string::npos) {
      malformed = true;
      return {};
    }
    out.emplace_back(x.as_string());
  }
  return out;
}

std::vector<std::string> from_columns(const db::ResultRecord& r, const char* command) {
  return {command, "--instance", r.instance, "--dtype", r.dtype, "--shape", r.shape};
}

std::string join(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) out += " " + shell_quote(a);
  return out;
}

// The library's environment the runner started the harness with (env.reproduce.env, its
// kport.json `env` as the runner expanded it), as NAME=value words before the command;
// entries that are not a variable name and a plain string are left out.
std::string env_words(const json::object& rec) {
  const auto* e = rec.if_contains("env");
  if (!e || !e->is_object()) return {};
  std::string out;
  for (const auto& [name, value] : e->as_object()) {
    bool ok = !name.empty() && name.size() <= 128 && !(name[0] >= '0' && name[0] <= '9');
    for (char c : name)
      ok = ok && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
    if (!ok || !value.is_string() || value.as_string().size() > k_max_arg) continue;
    out += std::string(name) + "=" + shell_quote(value.as_string()) + " ";
  }
  return out;
}

std::string command_line(const Reproduction& p, const std::vector<std::string>& args, std::string_view server) {
  if (p.harness_sha256.empty()) return p.env + p.harness + join(args);
  const std::string path = "/api/v1/artifacts/" + p.harness_sha256;
  // The placeholder must stay expandable, so it goes in double quotes, not through shell_quote.
  const std::string url =
      server == k_server_placeholder ? "\"" + std::string(server) + path + "\"" : shell_quote(p.download_url);
  return "curl -fsSLo " + p.harness + " " + url + " && chmod +x " + p.harness + " && " + p.env + "./" + p.harness +
         join(args);
}

}  // namespace

std::string shell_quote(std::string_view s) {
  if (plain_word(s)) return std::string(s);
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Reproduction reproduction(const db::ResultRecord& r, std::string_view server) {
  Reproduction p;
  const json::object rec = recorded(r.env_json);
  std::string target = text_at(rec, "target");
  if (!plain_word(target)) target = r.target;
  p.harness = text_at(rec, "harness");
  if (!harness_name(p.harness)) p.harness = "kport-harness-" + (plain_word(target) ? target : std::string("TARGET"));
  p.harness_sha256 = text_at(rec, "harness_sha256");
  p.env = env_words(rec);
  if (!crypto::is_sha256_hex(p.harness_sha256)) {
    p.harness_sha256.clear();
    p.missing.push_back(
        "harness_sha256: the result does not name the harness binary; build kport-harness for its commit and target");
  } else {
    p.download_url = std::string(server) + "/api/v1/artifacts/" + p.harness_sha256;
  }
  bool malformed = false;
  p.check_args = args_at(rec, "check", "check", malformed);
  const bool timed = r.median_us.has_value();
  if (timed) p.bench_args = args_at(rec, "bench", "bench", malformed);
  if (malformed) p.missing.push_back("arguments: the recorded arguments are not a well-formed harness command line");
  if (p.check_args.empty()) {
    p.check_args = from_columns(r, "check");
    if (r.seed) {
      p.check_args.push_back("--seed");
      p.check_args.push_back(std::to_string(static_cast<std::uint64_t>(*r.seed)));
    } else {
      p.missing.push_back("seed: the result records no input seed");
    }
    p.missing.push_back("check flags: the runner recorded no arguments for this result");
  }
  if (timed && p.bench_args.empty()) {
    p.bench_args = from_columns(r, "bench");
    p.missing.push_back(
        "bench seed and sampling flags: the runner recorded no arguments, so the harness's defaults apply");
  }
  p.check = command_line(p, p.check_args, server);
  if (timed) p.bench = command_line(p, p.bench_args, server);
  return p;
}

json::object to_json(const Reproduction& p) {
  auto arr = [](const std::vector<std::string>& v) -> json::value {
    if (v.empty()) return nullptr;
    json::array a;
    for (const auto& s : v) a.emplace_back(s);
    return a;
  };
  json::array missing;
  for (const auto& m : p.missing) missing.emplace_back(m);
  return json::object{
      {"harness", p.harness},
      {"harness_sha256", p.harness_sha256.empty() ? json::value(nullptr) : json::value(p.harness_sha256)},
      {"download_url", p.download_url.empty() ? json::value(nullptr) : json::value(p.download_url)},
      {"check", p.check},
      {"bench", p.bench.empty() ? json::value(nullptr) : json::value(p.bench)},
      {"check_args", arr(p.check_args)},
      {"bench_args", arr(p.bench_args)},
      {"exact", p.missing.empty()},
      {"missing", std::move(missing)}};
}

std::string reproduce_command(const db::ResultRecord& r, bool timing, std::string_view server) {
  Reproduction p = reproduction(r, server);
  if (!timing || p.bench.empty()) return p.check;
  return p.bench;
}

}  // namespace kport::coordinator
