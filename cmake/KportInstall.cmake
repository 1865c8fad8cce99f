# Install rules and Debian packages of the services (GNUInstallDirs layout):
#   bin/kport-coordinator, bin/kport-runner, bin/kport-watcher, bin/kport
#   share/kport/catalog/targets.json   the target table (runner, watcher)
#   share/kport/web/                   the dashboard, as the coordinator serves it
#   share/kport/kernels/kport.json     kport's own library manifest: the op families the
#                                      coordinator knows before any build reports one
#   lib/systemd/system/*.service       the units of deploy/systemd, ExecStart in <prefix>/bin
# The binaries find share/kport beside themselves (kport/common/install_paths.h), so an
# install works without --catalog or --web at any prefix. One component per package:
# common (catalog, the kport system user), coordinator, runner, watcher, cli; dispatch
# installs from services/dispatch.
include(GNUInstallDirs)
set(KPORT_INSTALL_SYSTEMD_UNITDIR "lib/systemd/system" CACHE STRING
    "Where systemd units are installed, relative to the prefix (or absolute)")
set(KPORT_INSTALL_DATA ${CMAKE_INSTALL_DATADIR}/kport)

install(TARGETS kport-coordinator RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT coordinator)
install(TARGETS kport-runner RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runner)
install(TARGETS kport-watcher RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT watcher)
install(TARGETS kport RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(FILES ${PROJECT_SOURCE_DIR}/porting/catalog/targets.json
        DESTINATION ${KPORT_INSTALL_DATA}/catalog COMPONENT common)
install(FILES ${PROJECT_SOURCE_DIR}/kernels/kport.json DESTINATION ${KPORT_INSTALL_DATA}/kernels COMPONENT coordinator)

# The dashboard is web/ as the coordinator serves it (index.html, app.css, dist/, js/,
# vendor/), without what only builds or tests it.
if(NOT EXISTS ${PROJECT_SOURCE_DIR}/web/vendor/uplot.esm.js)
  message(WARNING "kport: web/vendor/ is missing (run deploy/install-deps.sh or npm ci --prefix web, then "
                  "reconfigure); the installed dashboard would draw no charts")
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/web/ DESTINATION ${KPORT_INSTALL_DATA}/web COMPONENT coordinator
        PATTERN node_modules EXCLUDE
        PATTERN scripts EXCLUDE
        PATTERN package.json EXCLUDE
        PATTERN package-lock.json EXCLUDE
        PATTERN "*.md" EXCLUDE)

# The units in deploy/systemd name /usr/local/bin (the default prefix, and what a copy by
# hand expects); installed, they name the binary directory of the prefix installed to,
# which is known only at install time (cmake --install --prefix, CPack's /usr).
function(kport_install_unit unit component)
  install(CODE "
    set(bindir \"${CMAKE_INSTALL_BINDIR}\")
    if(NOT IS_ABSOLUTE \"\${bindir}\")
      set(bindir \"\${CMAKE_INSTALL_PREFIX}/\${bindir}\")
    endif()
    set(unitdir \"${KPORT_INSTALL_SYSTEMD_UNITDIR}\")
    if(NOT IS_ABSOLUTE \"\${unitdir}\")
      set(unitdir \"\${CMAKE_INSTALL_PREFIX}/\${unitdir}\")
    endif()
    file(READ \"${PROJECT_SOURCE_DIR}/deploy/systemd/${unit}\" text)
    string(REPLACE \"/usr/local/bin/\" \"\${bindir}/\" text \"\${text}\")
    string(MD5 key \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
    file(WRITE \"${CMAKE_BINARY_DIR}/systemd-units/\${key}/${unit}\" \"\${text}\")
    file(INSTALL DESTINATION \"\${unitdir}\" TYPE FILE
         PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
         FILES \"${CMAKE_BINARY_DIR}/systemd-units/\${key}/${unit}\")
  " COMPONENT ${component})
endfunction()
kport_install_unit(kport-coordinator.service coordinator)
kport_install_unit(kport-runner@.service runner)
kport_install_unit(kport-watcher.service watcher)

# ---- Debian packages: cpack -G DEB in the build tree -----------------------------------
set(CPACK_PACKAGE_NAME kport)
set(CPACK_PACKAGE_VENDOR kport)
set(CPACK_PACKAGE_CONTACT "kport maintainers <kport@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "kport: ports a GPU kernel library to new NVIDIA architectures")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL common coordinator runner watcher cli dispatch)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Units name the packaged binaries (/usr/bin), so the prefix is the one CPack installs to
# and the staging directory is DESTDIR.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
# Runtime libraries (libsqlite3-0, libgit2-1.5, libboost-json1.81.0, ...) from the ELF
# files, through dpkg-shlibdeps (dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_COMMON_PACKAGE_NAME kport-common)
set(CPACK_DEBIAN_COMMON_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_COMMON_PACKAGE_DEPENDS adduser)
set(CPACK_DEBIAN_COMMON_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/deploy/debian/common/postinst)
set(CPACK_COMPONENT_COMMON_DESCRIPTION "kport's shared files: the target catalog and the kport system user the services run as")
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_NAME kport-coordinator)
set(CPACK_COMPONENT_COORDINATOR_DESCRIPTION "kport coordinator: REST API, job queue, artifact store and dashboard (systemd unit kport-coordinator)")
set(CPACK_DEBIAN_RUNNER_PACKAGE_NAME kport-runner)
set(CPACK_DEBIAN_RUNNER_PACKAGE_RECOMMENDS "ccache, ninja-build")
set(CPACK_COMPONENT_RUNNER_DESCRIPTION "kport runner: builds kernels and checks and times them on GPUs (systemd unit kport-runner@)")
set(CPACK_DEBIAN_WATCHER_PACKAGE_NAME kport-watcher)
set(CPACK_COMPONENT_WATCHER_DESCRIPTION "kport watcher: opens pipelines for new toolkit targets, GPUs, drivers and commits (systemd unit kport-watcher)")
set(CPACK_DEBIAN_CLI_PACKAGE_NAME kport-cli)
set(CPACK_COMPONENT_CLI_DESCRIPTION "kport: the command line over the coordinator's REST API")
set(CPACK_DEBIAN_DISPATCH_PACKAGE_NAME kport-dispatch)
set(CPACK_COMPONENT_DISPATCH_DESCRIPTION "kport-dispatch: best-kernel answers offline from a snapshot (CLI, static library, CMake and pkg-config files)")
foreach(service COORDINATOR RUNNER WATCHER)
  set(CPACK_COMPONENT_${service}_DEPENDS common)
  set(CPACK_DEBIAN_${service}_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/deploy/debian/service/postinst)
endforeach()
include(CPack)
