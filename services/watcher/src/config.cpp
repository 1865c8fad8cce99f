#include <algorithm>
#include <cctype>

#include "kport/common/install_paths.h"
#include "kport/common/log_options.h"
#include "kport/common/options.h"
#include "kport/watcher/watcher.h"

namespace kport::watcher {

Result<std::vector<WatchedRepo>> parse_repos(std::string_view text) {
  std::vector<WatchedRepo> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t end = i;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    if (end == i) break;
    std::string_view entry = text.substr(i, end - i);
    i = end;
    auto eq = entry.find('='), hash = entry.rfind('#');
    if (eq == std::string_view::npos || eq == 0 || hash == std::string_view::npos || hash < eq + 2 ||
        hash + 1 == entry.size())
      return make_error(Errc::invalid_argument,
                        "--repos: '" + std::string(entry) +
                            "' must read NAME=URL#BRANCH[,BRANCH], e.g. kernels=/srv/git/kernels.git#main");
    WatchedRepo r{std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1, hash - eq - 1)), {}};
    std::string_view branches = entry.substr(hash + 1);
    while (!branches.empty()) {
      auto comma = branches.find(',');
      std::string_view b = branches.substr(0, comma);
      if (b.empty())
        return make_error(Errc::invalid_argument, "--repos: '" + std::string(entry) + "' names an empty branch");
      r.branches.emplace_back(b);
      branches = comma == std::string_view::npos ? std::string_view{} : branches.substr(comma + 1);
    }
    out.push_back(std::move(r));
  }
  return out;
}

Result<Config> parse_config(int argc, const char* const* argv, bool& help, std::string& help_text) {
  Options o("kport-watcher",
            "Watches the CUDA toolkit, the GPU fleet and git branches, and asks a kport coordinator to validate what "
            "is new.");
  o.add("server", "KPORT_SERVER", "", "coordinator URL, e.g. http://127.0.0.1:8080")
      .add("token", "KPORT_TOKEN", "", "the coordinator's admin token")
      .add("ca-file", "KPORT_CA_FILE", "",
           "https: PEM CA certificate(s) the coordinator's certificate must chain to (default: the system trust store)")
      .add("interval", "KPORT_WATCH_INTERVAL", "60", "seconds between rounds")
      .add("watch", "KPORT_WATCH", "toolkit,fleet,git", "which watches run (comma-separated)")
      .add("nvcc", "KPORT_NVCC", "nvcc", "the CUDA compiler whose targets the toolkit watch reads")
      .add("catalog", "KPORT_CATALOG",
           kport::install::data_path_or_default("catalog/targets.json", KPORT_CATALOG_DEFAULT),
           "targets.json with the features of known targets")
      .add("repos", "KPORT_WATCH_REPOS", "", "watched branches: NAME=URL#BRANCH[,BRANCH] separated by spaces")
      .add("toolkit-repo", "KPORT_TOOLKIT_REPO", "",
           "repository whose first branch a new target is built at (default: the first)")
      .add("workdir", "KPORT_WORKDIR", "var/watcher", "libgit2 workspaces of the watched repositories")
      .add_flag("once", "", false, "run one round of every watch and exit (non-zero if a watch failed)");
  log::add_options(o);
  KPORT_TRY(o.parse(argc, argv));
  help = o.help_requested() || o.version_requested();
  help_text = o.version_requested() ? o.version_text() : o.help_text();
  Config c;
  if (help) return c;
  if (!o.positional().empty())
    return make_error(Errc::invalid_argument, "unexpected argument '" + o.positional().front() + "'; see --help");
  c.server = o.get("server");
  c.token = o.get("token");
  c.ca_file = o.get("ca-file");
  if (c.server.empty()) return make_error(Errc::invalid_argument, "--server URL is required");
  if (c.token.empty()) return make_error(Errc::invalid_argument, "--token is required (the coordinator's admin token)");
  auto interval = o.integer("interval", 1, 86'400);
  if (!interval.ok()) return interval.error();
  c.interval = std::chrono::seconds(*interval);
  c.toolkit = c.fleet = c.git = false;
  std::string_view watch = o.get("watch");
  while (!watch.empty()) {
    auto comma = watch.find(',');
    std::string_view w = watch.substr(0, comma);
    if (w == "toolkit")
      c.toolkit = true;
    else if (w == "fleet")
      c.fleet = true;
    else if (w == "git")
      c.git = true;
    else
      return make_error(Errc::invalid_argument, "--watch: '" + std::string(w) + "' is not toolkit, fleet or git");
    watch = comma == std::string_view::npos ? std::string_view{} : watch.substr(comma + 1);
  }
  c.nvcc = o.get("nvcc");
  c.catalog = o.get("catalog");
  auto repos = parse_repos(o.get("repos"));
  if (!repos.ok()) return repos.error();
  c.repos = std::move(*repos);
  c.toolkit_repo = o.get("toolkit-repo");
  if (c.toolkit_repo.empty() && !c.repos.empty()) c.toolkit_repo = c.repos.front().name;
  if (!c.toolkit_repo.empty() &&
      std::none_of(c.repos.begin(), c.repos.end(), [&](const WatchedRepo& r) { return r.name == c.toolkit_repo; }))
    return make_error(Errc::invalid_argument, "--toolkit-repo '" + c.toolkit_repo + "' is not one of --repos");
  c.workdir = o.get("workdir");
  c.once = o.flag("once");
  auto log = log::read_options(o);
  if (!log) return log.error();
  c.log = *log;
  return c;
}

}  // namespace kport::watcher
