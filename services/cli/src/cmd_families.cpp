// `kport families`: the op families the coordinator knows (GET /api/v1/families): kport's
// own and every library's a build reported, with their shapes' dimensions, dtypes, what
// bounds them and who declared them; what `kport best --op` takes.
#include <ostream>

#include "commands.h"
#include "kport/api/families.h"
#include "kport/cli/cli.h"

namespace kport::cli {

namespace {

// "b,h,l,d,causal=0": the dims in the harness's order, an optional one with its default (in
// brackets, "[valid]", one left out of a shape's text at its default).
std::string dims_text(const api::Family& f) {
  std::string out;
  for (const auto& d : f.dims) {
    if (!out.empty()) out += ",";
    if (d.omit_default) {
      out += "[" + d.name + "]";
      continue;
    }
    out += d.name;
    if (d.default_value) out += "=" + std::to_string(*d.default_value);
  }
  return out;
}

int run_families(Context& ctx) {
  if (!check_args(ctx, families_command, 0, 0)) return k_exit_usage;
  auto r = ctx.api.call("GET", "/api/v1/families");
  if (!r.error.empty()) return report(ctx.err, "families", "cannot list the op families", r);
  auto list = read_answer(r, api::read_family_list);
  if (!list.ok()) return unreadable(ctx.err, "families", "GET /api/v1/families", list.error());
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  std::vector<std::vector<std::string>> rows;
  for (const api::Family& f : list->families) {
    std::string dtypes;
    for (const auto& d : f.dtypes) dtypes += (dtypes.empty() ? "" : ",") + d;
    rows.push_back({f.name, dims_text(f), dtypes, f.bound.empty() ? "-" : f.bound,
                    f.library + (f.repo.empty() ? " (kport's own)" : " (" + f.repo + ")")});
  }
  ctx.out << format_table({"family", "dims", "dtypes", "bound", "library"}, rows);
  const std::size_t n = list->families.size();
  ctx.out << n << " op famil" << (n == 1 ? "y" : "ies") << "\n";
  return k_exit_ok;
}

}  // namespace

extern const Command families_command = {
    "families", "", "list the op families the coordinator knows: dims, dtypes, bound, library", nullptr, run_families};

}  // namespace kport::cli
