# Shared compile settings: every kport target links kport::settings.
add_library(kport_settings INTERFACE)
add_library(kport::settings ALIAS kport_settings)
target_compile_options(kport_settings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                            -Wold-style-cast -Wcast-align -Wunused -Wnull-dereference>
  $<$<AND:$<BOOL:${KPORT_WERROR}>,$<COMPILE_LANGUAGE:CXX>>:-Werror>)
# GCC 12 reports -Wrestrict on ordinary std::string concatenation once inlined at -O2
# (GCC bug 105329, fixed in 13); with -Werror that false positive would fail every
# optimized build, so it is off for those compilers only.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(kport_settings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
target_compile_definitions(kport_settings INTERFACE
  BOOST_ASIO_NO_DEPRECATED BOOST_BEAST_USE_STD_STRING_VIEW)

# kport_add_executable(name SOURCES...) puts binaries in <build>/bin so tests and
# scripts find them in one place.
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
