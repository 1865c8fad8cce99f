# The harness SDK: what an outside kernel library needs to build a kport harness from its own
# instance sources, installed as install component `harness-sdk` and found with
# find_package(kport-harness CONFIG). Included by kernels/CMakeLists.txt after the harness
# targets exist.
#
#   <prefix>/include/kport-harness/     kport/kernels/registry.h and family_def.h (the
#                                       contract) and what they include; reference/reference.h
#                                       (kport's CPU references); harness/ and common/ headers
#                                       the SDK's own sources include
#   <prefix>/<libdir>/                  libkport_harness_core.a (host side: CLI, selection,
#                                       numerics, timing, JSON), libkport_reference.a
#   <prefix>/share/kport-harness/       main.cpp and the harness's device code (device/*.cu),
#                                       compiled by the consumer for its target; targets.json
#   <prefix>/<libdir>/cmake/kport-harness/   the package: imported targets, kport_kernels.cmake
#                                       (kport_cuda_flags, the catalog, the target info) and
#                                       kport_add_harness.cmake
#
# The device code ships as source, not as per-target archives: a consumer then builds for any
# target the catalog knows (not only this build's KPORT_CUDA_TARGETS), with its own nvcc,
# under the same kport_cuda_flags as kport's own harness. It is three small files.
include(CMakePackageConfigHelpers)
set(kport_sdk_component harness-sdk)
set(kport_sdk_include ${CMAKE_INSTALL_INCLUDEDIR}/kport-harness)
set(KPORT_HARNESS_INSTALL_DATA ${CMAKE_INSTALL_DATADIR}/kport-harness)
set(kport_sdk_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kport-harness)

set_target_properties(kport_harness_core PROPERTIES EXPORT_NAME harness_core)
set_target_properties(kport_reference PROPERTIES EXPORT_NAME reference)
set_target_properties(kport_kernels_headers PROPERTIES EXPORT_NAME kernels_headers)
install(TARGETS kport_harness_core kport_reference kport_kernels_headers EXPORT kport-harness-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${kport_sdk_component})
install(EXPORT kport-harness-targets NAMESPACE kport:: DESTINATION ${kport_sdk_cmake_dir}
        COMPONENT ${kport_sdk_component})

# Headers. The contract a library registers against, then what the installed sources include
# (main.cpp: cli.h, commands.h, ...; device/*.cu: device/harness_kernels.h and through it
# numerics.h, tolerance.h; common/ helpers). The whole harness/ header set goes, so a new
# include there cannot leave the installed sources short of a file.
install(FILES include/kport/kernels/registry.h include/kport/kernels/family_def.h include/kport/kernels/fp8_scales.h
        DESTINATION ${kport_sdk_include}/kport/kernels COMPONENT ${kport_sdk_component})
# kport's CPU references (double), which a declared family's reference may build on.
install(FILES reference/reference.h DESTINATION ${kport_sdk_include}/reference COMPONENT ${kport_sdk_component})
install(FILES common/convert.cuh common/cuda_check.h common/warp_reduce.cuh
        DESTINATION ${kport_sdk_include}/common COMPONENT ${kport_sdk_component})
file(GLOB kport_sdk_harness_headers ${CMAKE_CURRENT_SOURCE_DIR}/harness/*.h)
install(FILES ${kport_sdk_harness_headers}
        DESTINATION ${kport_sdk_include}/harness COMPONENT ${kport_sdk_component})
install(FILES harness/device/harness_kernels.h
        DESTINATION ${kport_sdk_include}/harness/device COMPONENT ${kport_sdk_component})

# Sources the consumer compiles: main.cpp and the device code of kport_harness_device_<t>.
install(FILES harness/main.cpp DESTINATION ${KPORT_HARNESS_INSTALL_DATA}/src COMPONENT ${kport_sdk_component})
install(FILES harness/device/fill_compare.cu harness/device/attention_reference.cu harness/device/fp8_inputs.cu
        DESTINATION ${KPORT_HARNESS_INSTALL_DATA}/src/device COMPONENT ${kport_sdk_component})
install(FILES ${KPORT_CATALOG_FILE} DESTINATION ${KPORT_HARNESS_INSTALL_DATA} RENAME targets.json
        COMPONENT ${kport_sdk_component})

# The package: config, version, and the CMake helpers the config includes.
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/kport-harness-config.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/kport-harness-config.cmake
  INSTALL_DESTINATION ${kport_sdk_cmake_dir}
  PATH_VARS KPORT_HARNESS_INSTALL_DATA)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/kport-harness-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kport-harness-config.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/kport-harness-config-version.cmake
              ${CMAKE_CURRENT_SOURCE_DIR}/cmake/kport_kernels.cmake
              ${CMAKE_CURRENT_SOURCE_DIR}/cmake/kport_add_harness.cmake
        DESTINATION ${kport_sdk_cmake_dir} COMPONENT ${kport_sdk_component})
