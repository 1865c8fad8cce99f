# Installs the dispatch component into a fresh prefix, checks what it holds, then
# builds and runs a small consumer twice: through find_package(kport-dispatch) and
# through pkg-config alone. Run by CTest as
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DCXX=... -P dispatch_install_test.cmake
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR CXX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "${v} is not set")
  endif()
endforeach()
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component dispatch)
include(GNUInstallDirs)
foreach(f include/kport/dispatch/dispatch.h bin/kport-dispatch
          ${CMAKE_INSTALL_LIBDIR}/libkport_dispatch.a ${CMAKE_INSTALL_LIBDIR}/libkport_selection.a
          ${CMAKE_INSTALL_LIBDIR}/cmake/kport-dispatch/kport-dispatch-config.cmake
          ${CMAKE_INSTALL_LIBDIR}/cmake/kport-dispatch/kport-dispatch-config-version.cmake
          ${CMAKE_INSTALL_LIBDIR}/cmake/kport-dispatch/kport-dispatch-targets.cmake
          ${CMAKE_INSTALL_LIBDIR}/pkgconfig/kport-dispatch.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()
# Only the dispatch component: no service binary, no writer header (it needs porting's).
foreach(f bin/kport-coordinator include/kport/dispatch/snapshot_writer.h)
  if(EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the dispatch component installed ${f}")
  endif()
endforeach()

set(snapshot ${SOURCE_DIR}/dispatch_consumer/snapshot.json)
# 1. CMake package.
run("consumer configure" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/dispatch_consumer -B ${WORK_DIR}/cmake-build -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix})
run("consumer build" ${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build)
run("consumer run (CMake package)" ${WORK_DIR}/cmake-build/dispatch_consumer ${snapshot})
message(STATUS "find_package consumer: ${last_output}")

# 2. pkg-config, with the static libraries it lists and nothing else.
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${prefix}/${CMAKE_INSTALL_LIBDIR}/pkgconfig)
run("pkg-config" ${PKG_CONFIG} --cflags --libs kport-dispatch)
string(STRIP "${last_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
foreach(bad sqlite git2 beast kport_http kport_db kport_common spdlog)
  if("${flags}" MATCHES "${bad}")
    message(FATAL_ERROR "kport-dispatch.pc names ${bad}: ${flags}")
  endif()
endforeach()
run("pkg-config consumer build" ${CXX} -O2 ${SOURCE_DIR}/dispatch_consumer/main.cpp -o ${WORK_DIR}/pc_consumer ${flags})
run("consumer run (pkg-config)" ${WORK_DIR}/pc_consumer ${snapshot})
message(STATUS "pkg-config consumer: ${last_output}")

# 3. The installed CLI answers from the same snapshot.
run("installed kport-dispatch" ${prefix}/bin/kport-dispatch lookup --snapshot ${snapshot} --op gemm --dtype bf16 --shape m=1,n=1024,k=1024)
if(NOT last_output MATCHES "gemm.mma_sync.small")
  message(FATAL_ERROR "installed kport-dispatch answered: ${last_output}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
