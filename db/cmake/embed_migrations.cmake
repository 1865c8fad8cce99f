# Generates a C++ source that holds every migration as a raw string literal, so the
# binary needs no SQL files at run time. Invoked as a script:
#   cmake -DOUT=<file.cpp> -DSOURCES=<a.sql|b.sql> -P embed_migrations.cmake
# File names are NNNN_name.sql; the number is the schema version.
set(body "")
string(REPLACE "|" ";" SOURCES "${SOURCES}")
foreach(sql_file IN LISTS SOURCES)
  get_filename_component(base ${sql_file} NAME_WE)
  if(NOT base MATCHES "^([0-9]+)_([a-z0-9_]+)$")
    message(FATAL_ERROR "migration ${sql_file}: name must look like 0001_init.sql")
  endif()
  math(EXPR version "${CMAKE_MATCH_1}")
  set(name ${CMAKE_MATCH_2})
  file(READ ${sql_file} sql)
  string(FIND "${sql}" ")kport_sql\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "migration ${sql_file} contains the raw-string delimiter")
  endif()
  string(APPEND body "    {${version}, \"${name}\", R\"kport_sql(${sql})kport_sql\"},\n")
endforeach()
file(WRITE ${OUT}.tmp "// Generated from db/migrations/*.sql by db/cmake/embed_migrations.cmake.
#include \"migrations.h\"

namespace kport::db::detail {

const std::vector<Migration>& embedded_migrations() {
  static const std::vector<Migration> k_all = {
${body}  };
  return k_all;
}

}  // namespace kport::db::detail
")
# Only touch the output when it changed, so a re-run does not force a rebuild.
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
