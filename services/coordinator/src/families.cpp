#include "families.h"

#include <algorithm>

#include "kport/common/log.h"
#include "kport/porting/manifest.h"

namespace kport::coordinator {
namespace json = boost::json;

void fill_throughput(const porting::FamilySet& known, api::ResultUpload& r) {
  if (!r.median_us || !(*r.median_us > 0) || (r.tflops && r.gbps)) return;
  const porting::OpFamily* f = known.find(r.family);
  if (!f) return;
  auto shape = porting::Shape::parse(r.shape);
  if (!shape.ok()) return;
  const double seconds = *r.median_us * 1e-6;
  if (!r.tflops)
    if (auto flops = f->flops_at(*shape, r.dtype); flops && *flops > 0) r.tflops = *flops / seconds / 1e12;
  if (!r.gbps)
    if (auto bytes = f->bytes_at(*shape, r.dtype); bytes && *bytes > 0) r.gbps = *bytes / seconds / 1e9;
}

namespace {

// The family of that name that `families` holds first, if any.
const porting::OpFamily* owner_of(const std::vector<porting::OpFamily>& families, const std::string& name) {
  for (const auto& f : families)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace

Families::Families(std::vector<porting::OpFamily> builtin)
    : m_builtin(std::move(builtin)), m_set(std::make_shared<const porting::FamilySet>(m_builtin)) {}

Result<std::vector<porting::OpFamily>> Families::load_builtin(const std::string& manifest_file) {
  auto m = porting::load_manifest(manifest_file);
  if (!m.ok())
    return make_error(m.error().code, "kport's own op families (" + manifest_file + "): " + m.error().message);
  return porting::op_families_of(*m);
}

std::shared_ptr<const porting::FamilySet> Families::current() const {
  std::lock_guard lock(m_mu);
  return m_set;
}

Status Families::reload(db::Store& store) {
  auto rows = store.list_families();
  if (!rows.ok()) return std::move(rows).error();
  std::vector<porting::OpFamily> all = m_builtin;
  // Oldest first, so that a newer declaration of a name replaces an older one.
  for (const db::FamilyRecord& row : *rows) {
    boost::system::error_code ec;
    auto doc = json::parse(row.definition_json, ec);
    Result<api::Family> f = make_error(Errc::invalid_argument, "the stored definition is not a JSON object");
    if (!ec && doc.is_object()) f = api::parse_with(doc.as_object(), "", api::read_family);
    if (f.ok()) {
      f->library = row.library;
      f->repo = row.repo;
      porting::OpFamily of = to_op_family(*f);
      if (const porting::OpFamily* held = owner_of(all, of.name); held && held->library != of.library) {
        // learn() refuses these; a row from before that rule stays out rather than take a
        // family from the library that declared it first.
        f = make_error(Errc::conflict, "family '" + of.name + "' is " + held->library + "'s");
      } else if (auto st = porting::check_family(of); st.ok()) {
        all.push_back(std::move(of));
        continue;
      } else {
        f = st.error();
      }
    }
    log::warn("a stored op family does not read; left out",
              {{"family", row.name}, {"library", row.library}, {"repo", row.repo}, {"error", f.error().message}});
  }
  auto set = std::make_shared<const porting::FamilySet>(std::move(all));
  std::lock_guard lock(m_mu);
  m_set = std::move(set);
  return {};
}

Status Families::learn(db::Store& store, const std::string& repo, const api::LibraryFamilies& declared) {
  std::vector<db::FamilyRecord> records;
  for (std::size_t i = 0; i < declared.families.size(); ++i) {
    const api::Family& f = declared.families[i];
    const std::string at = "library.families[" + std::to_string(i) + "]";
    if (auto st = porting::check_family(to_op_family(f)); !st.ok())
      return make_error(Errc::invalid_argument,
                        "field '" + at + "' of library " + declared.library + ": " + st.error().message);
    if (!f.bound.empty() && !porting::parse_bound(f.bound))
      return make_error(Errc::invalid_argument,
                        "field '" + at + ".bound' must be \"memory\" or \"compute\", not \"" + f.bound + "\"");
    for (std::size_t j = 0; j < i; ++j)
      if (declared.families[j].name == f.name)
        return make_error(Errc::invalid_argument, "field '" + at + "': family '" + f.name + "' is declared twice");
    // A family belongs to the library that declared it first (kport's own before any): a
    // library may not redefine another's, which would change how every library's shapes
    // of it are read and answered.
    if (const porting::OpFamily* held = current()->find(f.name); held && held->library != declared.library)
      return make_error(Errc::invalid_argument,
                        "field '" + at + "': family '" + f.name + "' is declared by library " + held->library +
                            (held->repo.empty() ? std::string(" (kport's own)") : " (repository " + held->repo + ")") +
                            "; a library declares only families of its own: give " + declared.library +
                            "'s another name");
    records.push_back(db::FamilyRecord{repo, declared.library, f.name, json::serialize(api::to_json(f, false)), 0});
  }
  KPORT_TRY(store.put_families(repo, declared.library, records));
  return reload(store);
}

}  // namespace kport::coordinator
