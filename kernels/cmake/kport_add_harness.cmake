# The harness SDK's CMake API, included by kport-harness-config.cmake after kport_kernels.cmake
# (kport_cuda_flags, kport_catalog_entry, kport_generate_target_info).
#
#   kport_add_harness(<name> TARGET <sm_XX>
#                     [FAMILY <family> VARIANT <variant> [FEATURES ...] SOURCES ... [OPTIONS ...]])
#     An executable <name> speaking docs/harness-protocol.md for one nvcc target: kport's
#     harness main and host library, its device code compiled for <target>, and the target's
#     catalog entry compiled in (what `list` prints). The optional variant arguments are
#     kport_harness_variant()'s, for a library with one variant.
#
#   kport_harness_variant(<name> FAMILY <family> VARIANT <variant> [FEATURES ...]
#                         SOURCES ... [OPTIONS <nvcc flags>])
#     Adds one variant to harness <name>, as kport_kernel_variant() does in kport's own tree:
#     when the target has every FEATURE (the catalog's names), SOURCES are compiled as an
#     OBJECT library with kport_cuda_flags (so no KPORT_REGISTER_KERNEL is dropped by the
#     linker) and linked in; otherwise nothing is compiled and `list` reports the variant
#     not_applicable with the missing features. KPORT_EXCLUDE_VARIANTS (family.variant, ...)
#     leaves variants out on purpose (`excluded`). FAMILY is one of kport's (gemm, gemm_fp8,
#     grouped_gemm, grouped_gemm_fp8, attention, rmsnorm, softmax) or one kport_harness_family
#     declared first.
#
#   kport_harness_family(<name> FAMILY <family> SOURCES ...)
#     Declares an op family the library brings (kport/kernels/family_def.h): SOURCES define its
#     FamilyDef, registered with KPORT_REGISTER_FAMILY, and are compiled into every build of
#     harness <name>, whatever the target's features, so the family is known even where none
#     of its variants is built. Afterwards kport_harness_variant takes FAMILY <family>. The
#     name is the library's own: letters, digits and '_', not one of kport's families.
#
#   kport_harness_sources(<name> SOURCES ...)
#     Sources compiled into every build of harness <name> (a library's KPORT_OVERRIDE_FAMILY
#     of kport's families' grids or tolerances, helpers its variants share).
#
# A harness's variants are collected until the end of the directory that called
# kport_add_harness; its target info is written then.
set_property(GLOBAL PROPERTY KPORT_HARNESS_DATA_DIR "${KPORT_HARNESS_DATA_DIR}")

function(kport_add_harness name)
  cmake_parse_arguments(ARG "" "TARGET;FAMILY;VARIANT" "FEATURES;SOURCES;OPTIONS" ${ARGN})
  if(NOT ARG_TARGET)
    message(FATAL_ERROR "kport_add_harness(${name}): TARGET is required, an nvcc target such as sm_90a")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT CUDA IN_LIST languages OR NOT CXX IN_LIST languages)
    message(FATAL_ERROR "kport_add_harness(${name}): the project must enable CXX and CUDA "
                        "(project(... LANGUAGES CXX CUDA)) before it adds a harness")
  endif()
  kport_catalog_entry("${KPORT_CATALOG_FILE}" ${ARG_TARGET} entry "kport_add_harness TARGET")
  get_property(data GLOBAL PROPERTY KPORT_HARNESS_DATA_DIR)
  set(info ${CMAKE_CURRENT_BINARY_DIR}/${name}_target_info.cpp)

  add_executable(${name} ${data}/src/main.cpp ${info})
  target_link_libraries(${name} PRIVATE kport::harness_core)
  target_compile_features(${name} PRIVATE cxx_std_20)
  # As kport's own harness: local symbols left out (-x), since nvcc names each object's host
  # file after its temporary, which would make every build of one commit another binary.
  target_link_options(${name} PRIVATE -Wl,-x)
  # The harness's own device code (seeded fill, poison, compare, fp32 attention reference),
  # compiled for this target as kport_harness_device_<t> is in kport's tree.
  add_library(${name}_device OBJECT ${data}/src/device/fill_compare.cu
                                    ${data}/src/device/attention_reference.cu ${data}/src/device/fp8_inputs.cu)
  kport_cuda_flags(${name}_device ${ARG_TARGET})
  target_link_libraries(${name}_device PRIVATE kport::harness_core)
  target_link_libraries(${name} PRIVATE ${name}_device)

  set_target_properties(${name} PROPERTIES
    KPORT_HARNESS_TARGET ${ARG_TARGET} KPORT_HARNESS_ARCH "${entry_arch}"
    KPORT_HARNESS_FEATURES "${entry_features}" KPORT_HARNESS_SMEM "${entry_smem}"
    KPORT_HARNESS_BUILT "" KPORT_HARNESS_NOT_APPLICABLE "" KPORT_HARNESS_FAMILIES "")
  # The target info lists every variant, so it is written once they are all declared: at the
  # end of this directory. The names are bound now (EVAL), not when the call runs.
  cmake_language(EVAL CODE "cmake_language(DEFER CALL _kport_harness_write_target_info [[${name}]] [[${info}]])")

  if(ARG_SOURCES OR ARG_FAMILY OR ARG_VARIANT)
    kport_harness_variant(${name} FAMILY "${ARG_FAMILY}" VARIANT "${ARG_VARIANT}" FEATURES ${ARG_FEATURES}
                          SOURCES ${ARG_SOURCES} OPTIONS ${ARG_OPTIONS})
  endif()
endfunction()

# The nvcc target of harness <name> into <out>; a clear error naming <where> when <name> is not a
# harness made by kport_add_harness.
function(_kport_harness_nvcc_target name where out)
  if(NOT TARGET ${name})
    message(FATAL_ERROR "${where}: no harness '${name}'; call kport_add_harness(${name} TARGET ...) first")
  endif()
  get_property(t TARGET ${name} PROPERTY KPORT_HARNESS_TARGET)
  if(NOT t)
    message(FATAL_ERROR "${where}: '${name}' is not a harness made by kport_add_harness")
  endif()
  set(${out} ${t} PARENT_SCOPE)
endfunction()

function(kport_harness_variant name)
  cmake_parse_arguments(ARG "" "FAMILY;VARIANT" "FEATURES;SOURCES;OPTIONS" ${ARGN})
  set(where "kport_harness_variant(${name} FAMILY ${ARG_FAMILY} VARIANT ${ARG_VARIANT})")
  _kport_harness_nvcc_target(${name} "${where}" t)
  if(NOT ARG_FAMILY OR NOT ARG_VARIANT OR NOT ARG_SOURCES)
    message(FATAL_ERROR "${where}: FAMILY, VARIANT and SOURCES are required")
  endif()
  get_property(declared TARGET ${name} PROPERTY KPORT_HARNESS_FAMILIES)
  if(NOT ARG_FAMILY MATCHES "^(gemm|gemm_fp8|grouped_gemm|grouped_gemm_fp8|attention|rmsnorm|softmax)$"
     AND NOT ARG_FAMILY IN_LIST declared)
    message(FATAL_ERROR "${where}: '${ARG_FAMILY}' is not one of kport's families (gemm, gemm_fp8, grouped_gemm, "
                        "grouped_gemm_fp8, attention, rmsnorm, softmax) nor one declared for ${name}; declare it first with "
                        "kport_harness_family(${name} FAMILY ${ARG_FAMILY} SOURCES <its FamilyDef>) "
                        "(docs/BRING-YOUR-LIBRARY.md, \"A family of your own\")")
  endif()
  if(NOT ARG_VARIANT MATCHES "^[A-Za-z0-9_]+$")
    message(FATAL_ERROR "${where}: a variant name takes letters, digits and '_' only")
  endif()
  set(id "${ARG_FAMILY}.${ARG_VARIANT}")
  get_property(built TARGET ${name} PROPERTY KPORT_HARNESS_BUILT)
  get_property(skipped TARGET ${name} PROPERTY KPORT_HARNESS_NOT_APPLICABLE)
  foreach(entry IN LISTS built skipped)
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 other)
    if(other STREQUAL id)
      message(FATAL_ERROR "${where}: ${id} is already a variant of ${name}")
    endif()
  endforeach()

  list(JOIN ARG_FEATURES "," needs)
  get_property(have TARGET ${name} PROPERTY KPORT_HARNESS_FEATURES)
  kport_missing_features(missing_text "${have}" "${ARG_FEATURES}")
  if(missing_text)
    set_property(TARGET ${name} APPEND PROPERTY KPORT_HARNESS_NOT_APPLICABLE "${id}|${needs}|missing features: ${missing_text}")
    return()
  endif()
  if(id IN_LIST KPORT_EXCLUDE_VARIANTS)
    set_property(TARGET ${name} APPEND PROPERTY KPORT_HARNESS_NOT_APPLICABLE
                 "${id}|${needs}|excluded from this build (KPORT_EXCLUDE_VARIANTS)")
    return()
  endif()
  set(lib ${name}_${ARG_FAMILY}_${ARG_VARIANT})
  add_library(${lib} OBJECT ${ARG_SOURCES})
  kport_cuda_flags(${lib} ${t})
  if(ARG_OPTIONS)
    target_compile_options(${lib} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${ARG_OPTIONS}>)
  endif()
  target_link_libraries(${name} PRIVATE ${lib})
  set_property(TARGET ${name} APPEND PROPERTY KPORT_HARNESS_BUILT "${id}|${needs}")
endfunction()

function(kport_harness_family name)
  cmake_parse_arguments(ARG "" "FAMILY" "SOURCES" ${ARGN})
  set(where "kport_harness_family(${name} FAMILY ${ARG_FAMILY})")
  if(NOT ARG_FAMILY OR NOT ARG_SOURCES)
    message(FATAL_ERROR "${where}: FAMILY and SOURCES (the sources that define and register its FamilyDef) "
                        "are required")
  endif()
  if(ARG_FAMILY MATCHES "^(gemm|gemm_fp8|grouped_gemm|grouped_gemm_fp8|attention|rmsnorm|softmax)$")
    message(FATAL_ERROR "${where}: ${ARG_FAMILY} is kport's own family; a library's family needs a name of its own "
                        "(to change kport's grids or tolerances, use KPORT_OVERRIDE_FAMILY in kport_harness_sources)")
  endif()
  if(NOT ARG_FAMILY MATCHES "^[A-Za-z0-9_]+$")
    message(FATAL_ERROR "${where}: a family name takes letters, digits and '_' only")
  endif()
  get_property(declared TARGET ${name} PROPERTY KPORT_HARNESS_FAMILIES)
  if(ARG_FAMILY IN_LIST declared)
    message(FATAL_ERROR "${where}: ${ARG_FAMILY} is already a family of ${name}")
  endif()
  _kport_harness_always_sources(${name} "${where}" family_${ARG_FAMILY} ${ARG_SOURCES})
  set_property(TARGET ${name} APPEND PROPERTY KPORT_HARNESS_FAMILIES ${ARG_FAMILY})
endfunction()

function(kport_harness_sources name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "kport_harness_sources(${name}): SOURCES is required")
  endif()
  get_property(n TARGET ${name} PROPERTY KPORT_HARNESS_SOURCE_SETS)
  if(NOT n)
    set(n 0)
  endif()
  math(EXPR n "${n} + 1")
  set_property(TARGET ${name} PROPERTY KPORT_HARNESS_SOURCE_SETS ${n})
  _kport_harness_always_sources(${name} "kport_harness_sources(${name})" sources_${n} ${ARG_SOURCES})
endfunction()

# Sources of harness <name> built for its target whatever its features, as an OBJECT library
# (so no static registration is dropped by the linker) with kport_cuda_flags.
function(_kport_harness_always_sources name where suffix)
  _kport_harness_nvcc_target(${name} "${where}" t)
  set(lib ${name}_${suffix})
  add_library(${lib} OBJECT ${ARGN})
  kport_cuda_flags(${lib} ${t})
  target_compile_features(${lib} PRIVATE cxx_std_20)
  target_link_libraries(${name} PRIVATE ${lib})
endfunction()

# Deferred by kport_add_harness to the end of its directory.
function(_kport_harness_write_target_info name out)
  foreach(p TARGET ARCH SMEM FEATURES BUILT NOT_APPLICABLE)
    get_property(h_${p} TARGET ${name} PROPERTY KPORT_HARNESS_${p})
  endforeach()
  kport_generate_target_info(OUTPUT "${out}" TARGET ${h_TARGET} ARCH "${h_ARCH}" SMEM "${h_SMEM}"
                             FEATURES ${h_FEATURES} BUILT ${h_BUILT} NOT_APPLICABLE ${h_NOT_APPLICABLE})
endfunction()
