// The op families the coordinator knows, in memory: kport's own library's (kernels/
// kport.json as installed, read at start: the built-in default, so a fresh database and
// results seeded without any build know gemm, attention, rmsnorm and softmax) and every
// library's a build reported (PUT /api/v1/kernels `library`, stored by migration 0019).
// A family belongs to the library that declared it first, kport's own before any other:
// another library's declaration of its name is refused (learn), and only the owning
// library's newer report replaces it.
//
// Threads: every method may be called from any thread; current() is a copy of a shared
// pointer under a mutex, cheap enough for the HTTP I/O thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kport/api/families.h"
#include "kport/api/family_mapping.h"
#include "kport/api/result_upload.h"
#include "kport/common/result.h"
#include "kport/db/store.h"
#include "kport/porting/op_shape.h"

namespace kport::coordinator {

class Families {
 public:
  explicit Families(std::vector<porting::OpFamily> builtin = {});

  // kport's own families from the manifest at `manifest_file`; an unreadable or invalid
  // file is an Error naming it.
  static Result<std::vector<porting::OpFamily>> load_builtin(const std::string& manifest_file);

  std::shared_ptr<const porting::FamilySet> current() const;

  // Rebuilds the set from the built-in families and the store's records; a stored
  // record that no longer reads is left out and logged.
  Status reload(db::Store& store);

  // Stores what `library` of `repo` declares (replacing what it declared before) and
  // reloads. invalid_argument naming the family and the field when one does not
  // validate (porting::check_family); nothing is stored then.
  Status learn(db::Store& store, const std::string& repo, const api::LibraryFamilies& declared);

 private:
  std::vector<porting::OpFamily> m_builtin;
  mutable std::mutex m_mu;
  std::shared_ptr<const porting::FamilySet> m_set;
};

// A result's throughput its harness left out, counted from its family's declared work:
// tflops from `flops`, gbps from `bytes`, over the median. A figure the harness gave, a
// result without a median, a family not known or a shape its expressions cannot read
// leave it as it is.
void fill_throughput(const porting::FamilySet& known, api::ResultUpload& r);

// The wire form of a family and back (family_mapping.h), for the coordinator's callers.
using api::to_api_family;
using api::to_op_family;

}  // namespace kport::coordinator
