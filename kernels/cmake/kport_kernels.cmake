# Per-target builds of the kernel library.
#
# The architecture catalog (porting/catalog/targets.json) says which features every nvcc
# target has. A variant folder declares what it needs:
#
#   kport_kernel_variant(
#     FAMILY gemm VARIANT wgmma_tma
#     FEATURES wgmma tma             # all must be in the target's feature list
#     SOURCES gemm_wgmma_tma_sm90.cu
#     [OPTIONS <extra nvcc flags>])
#
# For each target in KPORT_CUDA_TARGETS that has every FEATURE, this adds an OBJECT library
# kport_<family>_<variant>_<target> compiled with -gencode for exactly that target, and links
# its objects into kport-harness-<target> (objects, so the static registration in each
# translation unit is never dropped by the linker). For a target that lacks a feature the
# variant is not built; the harness `list` reports it as not applicable with the missing
# features. KPORT_EXCLUDE_VARIANTS (family.variant, ...) leaves variants out on purpose, e.g.
# when one fails to compile for a target and the others must still be run; KPORT_ONLY_VARIANTS
# (family.variant, ...), when set, leaves out every variant it does not name (a bench that
# times a few variants builds only those, however many the tree gains). Either way the harness
# `list` reports a variant left out as excluded, with the option that did it.

# CMake 3.25 predates nvcc's C++20 support and knows no flag for the CUDA20 dialect.
if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()

set(KPORT_CATALOG_FILE "${CMAKE_CURRENT_LIST_DIR}/../../porting/catalog/targets.json"
    CACHE FILEPATH "Architecture catalog: features per nvcc target")
set(KPORT_EXCLUDE_VARIANTS "" CACHE STRING
    "family.variant entries not to build (reported as excluded by kport-harness list)")
set(KPORT_ONLY_VARIANTS "" CACHE STRING
    "family.variant entries to build, the others not (empty: every variant; reported as excluded by kport-harness list)")

# kport_check_only_variants(): fails the configuration when KPORT_ONLY_VARIANTS names a variant
# no kport_kernel_variant() declared (a typo would otherwise build nothing of it, silently).
# Called once every variant is declared.
function(kport_check_only_variants)
  get_property(declared GLOBAL PROPERTY KPORT_DECLARED_VARIANTS)
  foreach(id IN LISTS KPORT_ONLY_VARIANTS)
    if(NOT id IN_LIST declared)
      list(JOIN declared ", " known)
      message(FATAL_ERROR "KPORT_ONLY_VARIANTS names '${id}', which is no variant of this tree (${known})")
    endif()
  endforeach()
endfunction()

# kport_catalog_entry(<catalog> <t> <prefix> <origin>): reads target <t>'s entry of the
# catalog file into <prefix>_arch, <prefix>_features (a list) and <prefix>_smem; <origin>
# names where <t> came from in the error for an unknown target. Also used by the installed
# harness SDK (kport_add_harness), for the one target a harness is built for.
function(kport_catalog_entry catalog_file t prefix origin)
  if(NOT EXISTS "${catalog_file}")
    message(FATAL_ERROR "kport: architecture catalog not found at ${catalog_file}; "
                        "set KPORT_CATALOG_FILE to porting/catalog/targets.json")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${catalog_file}")
  file(READ "${catalog_file}" catalog)
  string(JSON arch ERROR_VARIABLE err GET "${catalog}" targets ${t} arch)
  if(err)
    message(FATAL_ERROR "kport: target '${t}' (${origin}) is not in "
                        "${catalog_file}; add an entry with its arch and features")
  endif()
  string(JSON n LENGTH "${catalog}" targets ${t} features)
  set(features "")
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON f GET "${catalog}" targets ${t} features ${i})
      list(APPEND features ${f})
    endforeach()
  endif()
  string(JSON smem GET "${catalog}" targets ${t} max_dynamic_smem_per_block)
  set(${prefix}_arch "${arch}" PARENT_SCOPE)
  set(${prefix}_features "${features}" PARENT_SCOPE)
  set(${prefix}_smem "${smem}" PARENT_SCOPE)
endfunction()

# kport_load_catalog(): reads the catalog entries of every KPORT_CUDA_TARGETS entry into
# global properties KPORT_ARCH_<t>, KPORT_FEATURES_<t>, KPORT_SMEM_<t>.
function(kport_load_catalog)
  if(NOT EXISTS "${KPORT_CATALOG_FILE}")
    message(FATAL_ERROR "kport: architecture catalog not found at ${KPORT_CATALOG_FILE}; "
                        "set KPORT_CATALOG_FILE to porting/catalog/targets.json")
  endif()
  foreach(t IN LISTS KPORT_CUDA_TARGETS)
    kport_catalog_entry("${KPORT_CATALOG_FILE}" ${t} entry KPORT_CUDA_TARGETS)
    set_property(GLOBAL PROPERTY KPORT_ARCH_${t} "${entry_arch}")
    set_property(GLOBAL PROPERTY KPORT_FEATURES_${t} "${entry_features}")
    set_property(GLOBAL PROPERTY KPORT_SMEM_${t} "${entry_smem}")
    set_property(GLOBAL PROPERTY KPORT_VARIANTS_${t} "")
    set_property(GLOBAL PROPERTY KPORT_NOT_APPLICABLE_${t} "")
  endforeach()
endfunction()

# kport_cuda_flags(<lib> <target>): the compile settings every kernel object gets.
# -frandom-seed makes the names nvcc gives internal symbols depend on the library, not on
# the compiling process, so a rebuild of one commit makes the same harness (same sha256:
# one A/A series for the verdict, one harness for a bisection's probes).
function(kport_cuda_flags lib t)
  string(REPLACE "sm_" "compute_" virt "${t}")
  string(REPLACE "sm_" "" sm_number "${t}")
  string(REGEX REPLACE "[af]$" "" sm_digits "${sm_number}")
  set_target_properties(${lib} PROPERTIES CUDA_ARCHITECTURES OFF CUDA_STANDARD 20
                                          CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF)
  target_compile_options(${lib} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=${virt},code=${t} -O3 -lineinfo
      --expt-relaxed-constexpr -Xptxas=--warn-on-spills -Xcompiler=-Wall,-Wextra -frandom-seed=${lib}
      $<$<BOOL:${KPORT_PTXAS_VERBOSE}>:-Xptxas=-v>
      $<$<BOOL:${KPORT_WERROR}>:-Werror=all-warnings -Xcompiler=-Werror>>)
  target_compile_definitions(${lib} PRIVATE KPORT_TARGET="${t}" KPORT_SM=${sm_digits})
  if(TARGET kport::kernels_headers)  # the installed harness SDK's (kport-harness-config.cmake)
    target_link_libraries(${lib} PRIVATE kport::kernels_headers)
  else()  # a kernels tree's own
    target_link_libraries(${lib} PRIVATE kport_kernels_headers)
  endif()
  if(TARGET kport_kernels_generated)  # headers generated into the build tree (kernels/CMakeLists.txt)
    add_dependencies(${lib} kport_kernels_generated)
  endif()
endfunction()

# The features of the list `features` that the list `have` lacks, comma-joined into `out`
# ("" when it has them all): what makes a variant not applicable to a target.
function(kport_missing_features out have features)
  set(missing "")
  foreach(f IN LISTS features)
    if(NOT f IN_LIST have)
      list(APPEND missing ${f})
    endif()
  endforeach()
  list(JOIN missing "," text)
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(kport_kernel_variant)
  cmake_parse_arguments(ARG "" "FAMILY;VARIANT" "FEATURES;SOURCES;OPTIONS" ${ARGN})
  if(NOT ARG_FAMILY OR NOT ARG_VARIANT OR NOT ARG_SOURCES)
    message(FATAL_ERROR "kport_kernel_variant needs FAMILY, VARIANT and SOURCES")
  endif()
  if(NOT ARG_FAMILY MATCHES "^(gemm|gemm_fp8|grouped_gemm|grouped_gemm_fp8|attention|rmsnorm|softmax)$")
    message(FATAL_ERROR "kport_kernel_variant: unknown FAMILY '${ARG_FAMILY}'")
  endif()
  set(id "${ARG_FAMILY}.${ARG_VARIANT}")
  set_property(GLOBAL APPEND PROPERTY KPORT_DECLARED_VARIANTS "${id}")
  list(JOIN ARG_FEATURES "," needs)
  foreach(t IN LISTS KPORT_CUDA_TARGETS)
    get_property(have GLOBAL PROPERTY KPORT_FEATURES_${t})
    kport_missing_features(missing_text "${have}" "${ARG_FEATURES}")
    if(missing_text)
      set_property(GLOBAL APPEND PROPERTY KPORT_NOT_APPLICABLE_${t}
                   "${id}|${needs}|missing features: ${missing_text}")
      continue()
    endif()
    if(id IN_LIST KPORT_EXCLUDE_VARIANTS)
      set_property(GLOBAL APPEND PROPERTY KPORT_NOT_APPLICABLE_${t}
                   "${id}|${needs}|excluded from this build (KPORT_EXCLUDE_VARIANTS)")
      continue()
    endif()
    if(KPORT_ONLY_VARIANTS AND NOT id IN_LIST KPORT_ONLY_VARIANTS)
      set_property(GLOBAL APPEND PROPERTY KPORT_NOT_APPLICABLE_${t}
                   "${id}|${needs}|excluded from this build (not in KPORT_ONLY_VARIANTS)")
      continue()
    endif()
    set(lib kport_${ARG_FAMILY}_${ARG_VARIANT}_${t})
    add_library(${lib} OBJECT ${ARG_SOURCES})
    kport_cuda_flags(${lib} ${t})
    if(ARG_OPTIONS)
      target_compile_options(${lib} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${ARG_OPTIONS}>)
    endif()
    target_link_libraries(kport-harness-${t} PRIVATE ${lib})
    set_property(GLOBAL APPEND PROPERTY KPORT_VARIANTS_${t} "${id}|${needs}")
  endforeach()
endfunction()

# kport_write_target_info(<t> <out.cpp>): the harness's compiled-in view of its target:
# catalog entry, variants built, variants not applicable and why.
function(kport_write_target_info t out)
  get_property(arch GLOBAL PROPERTY KPORT_ARCH_${t})
  get_property(features GLOBAL PROPERTY KPORT_FEATURES_${t})
  get_property(smem GLOBAL PROPERTY KPORT_SMEM_${t})
  get_property(built GLOBAL PROPERTY KPORT_VARIANTS_${t})
  get_property(skipped GLOBAL PROPERTY KPORT_NOT_APPLICABLE_${t})
  kport_generate_target_info(OUTPUT "${out}" TARGET ${t} ARCH "${arch}" SMEM "${smem}"
                             FEATURES ${features} BUILT ${built} NOT_APPLICABLE ${skipped})
endfunction()

# kport_generate_target_info(OUTPUT <out.cpp> TARGET <t> ARCH <a> SMEM <bytes> FEATURES ...
#                            BUILT <id|needs>... NOT_APPLICABLE <id|needs|reason>...):
# writes the target_info() definition (harness/target_info.h) from explicit inputs, for a
# kernels tree (kport_write_target_info) and for the harness SDK's kport_add_harness alike.
function(kport_generate_target_info)
  cmake_parse_arguments(ARG "" "OUTPUT;TARGET;ARCH;SMEM" "FEATURES;BUILT;NOT_APPLICABLE" ${ARGN})
  set(body "// Generated by kernels/cmake/kport_kernels.cmake; do not edit.\n")
  string(APPEND body "#include \"target_info.h\"\nnamespace kport::harness {\n")
  string(APPEND body "const TargetInfo& target_info() {\n  static const TargetInfo info{\n")
  string(APPEND body "    \"${ARG_TARGET}\", \"${ARG_ARCH}\", ${ARG_SMEM},\n    {")
  foreach(f IN LISTS ARG_FEATURES)
    string(APPEND body "\"${f}\", ")
  endforeach()
  string(APPEND body "},\n    {")
  foreach(entry IN LISTS ARG_BUILT)
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 id)
    list(GET parts 1 needs)
    string(APPEND body "{\"${id}\", \"${needs}\", \"\"}, ")
  endforeach()
  string(APPEND body "},\n    {")
  foreach(entry IN LISTS ARG_NOT_APPLICABLE)
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 id)
    list(GET parts 1 needs)
    list(GET parts 2 why)
    string(APPEND body "{\"${id}\", \"${needs}\", \"${why}\"}, ")
  endforeach()
  string(APPEND body "}};\n  return info;\n}\n}  // namespace kport::harness\n")
  file(GENERATE OUTPUT "${ARG_OUTPUT}" CONTENT "${body}")
endfunction()
