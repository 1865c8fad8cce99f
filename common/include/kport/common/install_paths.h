// Where an installed kport finds its data files without flags. The install layout
// (GNUInstallDirs) puts binaries in <prefix>/bin and data in <prefix>/share/kport, so a
// binary finds its data beside itself, through /proc/self/exe, whatever the prefix (a
// package in /usr, `cmake --install --prefix ~/kport`, a tree extracted anywhere). A
// binary run from its build tree (build/*/bin, test binaries) finds nothing there and
// falls back to the checkout; an installed binary never looks at the checkout.
//
// Thread-safe; reads the file system, never writes it. No error is raised: a path not
// found is an empty optional, and `data_candidates` says where a caller looked.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kport::install {

// The directory holding the running executable; empty when /proc/self/exe is unreadable.
std::filesystem::path executable_dir();

// The places `find_data` looks for `relative` (a path under share/kport, such as
// "web" or "catalog/targets.json"), in order: <executable dir>/<bin-to-data>/<relative>,
// then `source_default` (the checkout's copy, compiled in) when it is not empty and the
// executable runs from the build tree it was built in.
std::vector<std::filesystem::path> data_candidates(std::string_view relative, std::string_view source_default);

// The first candidate that exists; with `marker`, the first directory that holds
// `marker` (e.g. "index.html"), so an empty or partial folder is not taken.
std::optional<std::filesystem::path> find_data(std::string_view relative, std::string_view source_default,
                                               std::string_view marker = {});

// find_data's answer as a string, else the last candidate (the checkout's copy in a
// build tree, the install's path otherwise): a default for a flag whose error message
// then names the path it could not read.
std::string data_path_or_default(std::string_view relative, std::string_view source_default);

}  // namespace kport::install
