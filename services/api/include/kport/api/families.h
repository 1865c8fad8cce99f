// The op families a library declares (its kport.json `families`, docs/MANIFEST.md) as
// they travel: `LibraryFamilies`, what a build runner reports with the kernel catalog
// (PUT /api/v1/kernels, `library`), and `FamilyList`, what GET /api/v1/families answers
// (each family with the library and repository that declared it). The wire forms are
// the OpenAPI document's `Family`, `LibraryFamilies` and `FamilyList`.
//
// Reading checks the form (names and lengths, integers, arrays of strings); what a
// family means (its dimensions, dtypes, work expressions) is checked where it is used
// (porting::check_family). Values; no thread affinity.
#pragma once

#include <boost/json.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kport/api/fields.h"

namespace kport::api {

// An alignment of a dimension: one value a multiple of `multiple` and the other not
// adds `penalty` to their distance.
struct FamilyAlignment {
  std::int64_t multiple = 0;
  double penalty = 0;
};

struct FamilyDim {
  std::string name;
  std::optional<std::int64_t> default_value;  // wire: "default"
  std::int64_t min = 1, max = std::int64_t{1} << 30;
  // Its distance rule (porting::Shape::DimRule); written only where not plain.
  bool exact = false;
  double weight = 1.0;
  std::vector<FamilyAlignment> align = {};
  bool omit_default = false;  // a shape's canonical text leaves it out at its default; written only when true
  std::string full_at = {};   // the dimension whose value means the default (porting::OpDim); written only when set
};

// One dimension of a family's `geometry`: the instance config keys of each role, each
// role's keys alternatives in order (porting::DimKeys).
struct FamilyGeometryDim {
  std::string dim;
  std::vector<std::string> tile, step, split, max_bytes, align_bytes;
  std::vector<std::string> max = {}, run_min_bytes = {}, run_max_bytes = {}, run_align_bytes = {};
  std::vector<std::string> run_multiple = {};
};

// A value `dim` must be a multiple of for any instance to run a shape, when the dims of
// `when` have those values (porting::ShapeRequirement); wire: an element of `requires`.
struct FamilyRequirement {
  std::string dim;
  std::int64_t multiple = 0;
  std::vector<std::pair<std::string, std::int64_t>> when = {};  // wire: an object, dim to value
  std::string why = {};
};

// The roles in their wire order, with their place in a FamilyGeometryDim.
inline constexpr std::pair<const char*, std::vector<std::string> FamilyGeometryDim::*> k_geometry_roles[] = {
    {"tile", &FamilyGeometryDim::tile},
    {"step", &FamilyGeometryDim::step},
    {"split", &FamilyGeometryDim::split},
    {"max_bytes", &FamilyGeometryDim::max_bytes},
    {"align_bytes", &FamilyGeometryDim::align_bytes},
    {"max", &FamilyGeometryDim::max},
    {"run_min_bytes", &FamilyGeometryDim::run_min_bytes},
    {"run_max_bytes", &FamilyGeometryDim::run_max_bytes},
    {"run_align_bytes", &FamilyGeometryDim::run_align_bytes},
    {"run_multiple", &FamilyGeometryDim::run_multiple}};

struct Family {
  std::string name, description;
  std::vector<FamilyDim> dims;
  std::vector<std::string> dtypes;
  std::optional<std::string> flops, bytes;      // work expressions over the dims
  std::string bound;                            // "compute" or "memory"; a report may leave it out
  std::optional<std::string> example;           // a shape to offer a user
  std::vector<FamilyGeometryDim> geometry;      // wire: an object keyed by dimension; empty: not declared
  std::vector<FamilyRequirement> requirements;  // wire: "requires"; written only when some
  std::string library, repo;                    // answers only: who declared it ("" repo: built in)
};

// What a build reports: the manifest's name, the job whose build read it (the
// coordinator takes the repository from its pipeline), and its families in order.
struct LibraryFamilies {
  std::string library;
  std::int64_t job = 0;
  std::vector<Family> families;
};

struct FamilyList {
  std::vector<Family> families;
};

inline boost::json::object to_json(const FamilyDim& d) {
  boost::json::object o{{"name", d.name}, {"min", d.min}, {"max", d.max}};
  if (d.default_value) o["default"] = *d.default_value;
  if (d.exact) o["exact"] = true;
  if (d.weight != 1.0) o["weight"] = d.weight;
  if (!d.align.empty()) {
    boost::json::array a;
    for (const auto& x : d.align) a.push_back(boost::json::object{{"multiple", x.multiple}, {"penalty", x.penalty}});
    o["align"] = std::move(a);
  }
  if (d.omit_default) o["omit_default"] = true;
  if (!d.full_at.empty()) o["full_at"] = d.full_at;
  return o;
}

// {"m": {"tile": "bm"}, ...}: a role of one key as a string, of several as an array.
inline boost::json::object to_json(const std::vector<FamilyGeometryDim>& geometry) {
  boost::json::object o;
  for (const auto& d : geometry) {
    boost::json::object roles;
    for (const auto& [role, slot] : k_geometry_roles) {
      const auto& keys = d.*slot;
      if (keys.size() == 1) roles[role] = keys.front();
      if (keys.size() > 1) {
        boost::json::array a;
        for (const auto& k : keys) a.emplace_back(k);
        roles[role] = std::move(a);
      }
    }
    o[d.dim] = std::move(roles);
  }
  return o;
}

// `library` and `repo` are written when `with_origin` (an answer), not in a report.
inline boost::json::object to_json(const Family& f, bool with_origin = true) {
  boost::json::array dtypes;
  for (const auto& d : f.dtypes) dtypes.emplace_back(d);
  boost::json::object o{{"name", f.name},
                        {"description", f.description},
                        {"dims", write_list(f.dims, [](const FamilyDim& d) { return to_json(d); })},
                        {"dtypes", std::move(dtypes)}};
  if (f.flops) o["flops"] = *f.flops;
  if (f.bytes) o["bytes"] = *f.bytes;
  if (!f.bound.empty()) o["bound"] = f.bound;
  if (f.example) o["example"] = *f.example;
  if (!f.geometry.empty()) o["geometry"] = to_json(f.geometry);
  if (!f.requirements.empty())
    o["requires"] = write_list(f.requirements, [](const FamilyRequirement& r) {
      boost::json::object req{{"dim", r.dim}, {"multiple", r.multiple}};
      if (!r.when.empty()) {
        boost::json::object when;
        for (const auto& [dim, value] : r.when) when[dim] = value;
        req["when"] = std::move(when);
      }
      if (!r.why.empty()) req["why"] = r.why;
      return req;
    });
  if (with_origin) {
    o["library"] = f.library;
    o["repo"] = f.repo;
  }
  return o;
}

inline boost::json::object to_json(const LibraryFamilies& l) {
  return boost::json::object{{"library", l.library},
                             {"job", l.job},
                             {"families", write_list(l.families, [](const Family& f) { return to_json(f, false); })}};
}

inline boost::json::object to_json(const FamilyList& l) {
  return boost::json::object{{"families", write_list(l.families, [](const Family& f) { return to_json(f); })}};
}

inline FamilyDim read_family_dim(Fields& f) {
  FamilyDim d;
  d.name = f.str("name", 64);
  d.default_value = f.opt_int("default", 0, std::int64_t{1} << 30);
  d.min = f.opt_int("min", 0, std::int64_t{1} << 30).value_or(1);
  d.max = f.opt_int("max", 0, std::int64_t{1} << 30).value_or(std::int64_t{1} << 30);
  d.exact = f.boolean("exact", false);
  d.weight = f.opt_num("weight").value_or(1.0);
  d.align = read_list(f, "align", [](Fields& a) {
    FamilyAlignment x;
    x.multiple = a.opt_int("multiple", 0, std::int64_t{1} << 30).value_or(0);
    x.penalty = a.opt_num("penalty").value_or(-1);
    return x;
  });
  d.omit_default = f.boolean("omit_default", false);
  d.full_at = f.opt_str("full_at", 64).value_or("");
  return d;
}

// The form of `geometry` (an object of objects of config keys); what it means is
// porting::geometry_problem's to say.
inline std::vector<FamilyGeometryDim> read_family_geometry(Fields& f) {
  std::vector<FamilyGeometryDim> out;
  const boost::json::object* g = f.object("geometry");
  if (!g) return out;
  if (g->size() > 16) f.fail("geometry", "must declare at most 16 dimensions");
  for (const auto& member : *g) {
    if (!f.ok()) break;
    const std::string dim(member.key());
    const boost::json::value& v = member.value();
    const std::string at = f.path("geometry") + "." + dim;
    if (!v.is_object()) {
      f.fail_with(Error{Errc::invalid_argument, "field '" + at + "' must be an object of config keys"});
      break;
    }
    FamilyGeometryDim d;
    d.dim = dim;
    for (const auto& r : v.as_object()) {
      const std::string_view role = r.key();
      const boost::json::value& x = r.value();
      const auto* known = std::find_if(std::begin(k_geometry_roles), std::end(k_geometry_roles),
                                       [&](const auto& known_role) { return role == known_role.first; });
      const std::string rat = at + "." + std::string(role);
      if (known == std::end(k_geometry_roles)) {
        std::string roles;
        for (const auto& [name, slot] : k_geometry_roles) (roles += roles.empty() ? "" : ", ") += name;
        f.fail_with(
            Error{Errc::invalid_argument, "field '" + rat + "' is not a role (a dimension takes " + roles + ")"});
        break;
      }
      auto& keys = d.*(known->second);
      if (x.is_string() && x.as_string().size() <= 64) {
        keys.emplace_back(x.as_string().data(), x.as_string().size());
      } else if (x.is_array() && !x.as_array().empty() && x.as_array().size() <= 8 &&
                 std::all_of(x.as_array().begin(), x.as_array().end(),
                             [](const boost::json::value& k) { return k.is_string() && k.as_string().size() <= 64; })) {
        for (const auto& k : x.as_array()) keys.emplace_back(k.as_string().data(), k.as_string().size());
      } else {
        f.fail_with(Error{Errc::invalid_argument,
                          "field '" + rat +
                              "' must be a config key (a string of 64 bytes at most) or an array of 1 to 8 "
                              "of them"});
        break;
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

inline Family read_family(Fields& f) {
  Family x;
  x.name = f.str("name", 64);
  x.description = f.opt_str("description", 4096).value_or("");
  x.dims = read_list(f, "dims", read_family_dim);
  x.dtypes = f.str_list("dtypes", 16);
  x.flops = f.opt_str("flops", 256);
  x.bytes = f.opt_str("bytes", 256);
  x.bound = f.opt_str("bound", 16).value_or("");
  x.example = f.opt_str("example", 1024);
  x.geometry = read_family_geometry(f);
  x.requirements = read_list(f, "requires", [](Fields& r) {
    FamilyRequirement out;
    out.dim = r.str("dim", 64);
    out.multiple = r.opt_int("multiple", 0, std::int64_t{1} << 30).value_or(0);
    if (const boost::json::object* when = r.object("when")) {
      if (when->size() > 4) r.fail("when", "must name at most 4 dims");
      for (const auto& m : *when) {
        if (!m.value().is_int64() || m.value().as_int64() < 0 || m.value().as_int64() > (std::int64_t{1} << 30)) {
          r.fail("when", "must map each dim to an integer in 0 .. 2^30");
          break;
        }
        out.when.emplace_back(std::string(m.key()), m.value().as_int64());
      }
    }
    out.why = r.opt_str("why", 200).value_or("");
    return out;
  });
  x.library = f.opt_str("library", 128).value_or("");
  x.repo = f.opt_str("repo", 128).value_or("");
  if (f.ok() && x.dims.empty()) f.fail("dims", "must list the family's dimensions");
  return x;
}

inline LibraryFamilies read_library_families(Fields& f) {
  LibraryFamilies l;
  l.library = f.str("library", 128);
  l.job = f.opt_int("job", 0, INT64_MAX).value_or(0);
  const boost::json::array* a = f.array("families");
  if (f.ok() && a && a->size() > 256) f.fail("families", "must list at most 256 families");
  if (f.ok()) l.families = read_list(f, "families", read_family);
  return l;
}

inline Result<LibraryFamilies> parse_library_families(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_library_families);
}

inline FamilyList read_family_list(Fields& f) {
  FamilyList l;
  l.families = read_list(f, "families", read_family);
  return l;
}

inline Result<FamilyList> parse_family_list(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_family_list);
}

}  // namespace kport::api
