// The machine-code half of the instruction audit: reading a disassembly (`cuobjdump -sass`
// of an object, or `nvdisasm` of a cubin) and checking it against a variant's features.
//
// PTX says what the front end asked for; SASS is what runs. A variant that declares
// wgmma but whose sm_90a code has no HGMMA was lowered some other way (a guard, a
// fallback path, a toolkit change), and fails like a PTX audit failure. The counted
// classes, by the opcode's base (the text before its first '.'):
//   wgmma    HGMMA IGMMA QGMMA BGMMA       required by feature "wgmma"
//   tcgen05  UTC*MMA (UTCHMMA, UTCQMMA..)  required by feature "tcgen05"
//   mma_sync HMMA IMMA                     required by feature "mma_sync"
//   ldmatrix LDSM                          required by feature "ldmatrix"
//   local_load LDL, local_store STL        forbidden: counted, never required, diffed
//                                          against the parent (a gain is a regression)
// Every opcode starting with UTC is also counted by name, so a new tcgen05 form shows.
//
// An audit that could not run (no disassembler, the tool failed, no code for the
// target in its output) is `audited == false` with the reason; it never passes or
// fails anything. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kport::porting {

struct SassAudit {
  bool audited = false;
  std::string reason;                           // why not audited (when !audited)
  std::string tool;                             // "cuobjdump -sass", "nvdisasm"
  std::vector<std::string> functions;           // kernels and device functions seen, in order
  std::map<std::string, std::int64_t> counts;   // class ("wgmma", "local_store", ..) -> instructions
  std::map<std::string, std::int64_t> opcodes;  // counted opcode bases ("HGMMA", "UTCHMMA", "STL") -> instructions
  std::int64_t instructions = 0;                // every instruction of the target's code
  std::vector<std::string> required, missing;   // classes the features demand; those absent
  bool passed() const { return audited && missing.empty(); }
  std::int64_t count(std::string_view klass) const;
  std::string to_json() const;  // {"audited":true,"tool":..,"counts":{..},"opcodes":{..},..,"passed":..}
  std::string message(std::string_view target) const;  // "declares wgmma but its sm_90a machine code has no HGMMA"
};

// Counts the instructions of `target`'s code in `disassembly`. Sections for other
// targets (a fat object) are skipped; output with no section header (nvdisasm) is all
// taken as `target`'s. No instruction for the target at all: not audited, with why.
SassAudit audit_sass(std::string_view disassembly, std::string_view target,
                     const std::vector<std::string>& declared_features, std::string tool = "cuobjdump -sass");

SassAudit sass_not_audited(std::string reason);

// The opcode base of one disassembly line ("HGMMA" for
// `/*0120*/ @P0 HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24 ;`); empty when the line is
// not an instruction (headers, encodings, labels).
std::string sass_opcode(std::string_view line);

}  // namespace kport::porting
