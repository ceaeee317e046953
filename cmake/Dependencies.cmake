# Every third-party dependency is found here, once, and exposed as an imported target:
#   triage_dep::re2  triage_dep::simdjson  triage_dep::sqlite3  triage_dep::tomlplusplus
#   triage_dep::zlib triage_dep::boost triage_dep::openssl (GTest::gtest_main for the tests)
#   triage_dep::hyperscan (optional: empty when the package is absent)
find_package(Threads REQUIRED)
find_package(simdjson REQUIRED)
find_package(ZLIB REQUIRED)
find_package(Boost 1.74 REQUIRED)
# OpenSSL: TLS for https webhooks (libssl3 at run time).
find_package(OpenSSL 3 REQUIRED)

find_path(TRIAGE_RE2_INCLUDE re2/re2.h REQUIRED)
find_path(TRIAGE_SQLITE_INCLUDE sqlite3.h REQUIRED)
find_path(TRIAGE_TOML_INCLUDE toml++/toml.h REQUIRED)
if(TRIAGE_STATIC_DEPS)
  find_library(TRIAGE_RE2_LIB NAMES libre2.a re2 REQUIRED)
  find_library(TRIAGE_SQLITE_LIB NAMES libsqlite3.a sqlite3 REQUIRED)
else()
  find_library(TRIAGE_RE2_LIB NAMES re2 REQUIRED)
  find_library(TRIAGE_SQLITE_LIB NAMES sqlite3 REQUIRED)
endif()

add_library(triage_dep_re2 INTERFACE)
target_include_directories(triage_dep_re2 SYSTEM INTERFACE ${TRIAGE_RE2_INCLUDE})
target_link_libraries(triage_dep_re2 INTERFACE ${TRIAGE_RE2_LIB} Threads::Threads)
add_library(triage_dep::re2 ALIAS triage_dep_re2)

add_library(triage_dep_sqlite3 INTERFACE)
target_include_directories(triage_dep_sqlite3 SYSTEM INTERFACE ${TRIAGE_SQLITE_INCLUDE})
target_link_libraries(triage_dep_sqlite3 INTERFACE ${TRIAGE_SQLITE_LIB} Threads::Threads ${CMAKE_DL_LIBS} m)
add_library(triage_dep::sqlite3 ALIAS triage_dep_sqlite3)

# toml++ is used header-only: Debian's CMake package links a shared library we do not want to
# carry to GPU hosts.
add_library(triage_dep_toml INTERFACE)
target_include_directories(triage_dep_toml SYSTEM INTERFACE ${TRIAGE_TOML_INCLUDE})
target_compile_definitions(triage_dep_toml INTERFACE TOML_HEADER_ONLY=1 TOML_EXCEPTIONS=0)
add_library(triage_dep::tomlplusplus ALIAS triage_dep_toml)

# Hyperscan is optional (Debian ships it for amd64 only): with it, the engine's literal
# prefilter scans whole buffers at once; without it, line by line, with the same results.
# Linked statically, like RE2, so the binary runs on hosts without the package.
find_path(TRIAGE_HS_INCLUDE hs/hs.h)
find_library(TRIAGE_HS_LIB NAMES libhs.a hs)
add_library(triage_dep_hyperscan INTERFACE)
if(TRIAGE_HS_INCLUDE AND TRIAGE_HS_LIB)
  target_include_directories(triage_dep_hyperscan SYSTEM INTERFACE ${TRIAGE_HS_INCLUDE})
  target_link_libraries(triage_dep_hyperscan INTERFACE ${TRIAGE_HS_LIB} m)
  target_compile_definitions(triage_dep_hyperscan INTERFACE TRIAGE_HAVE_HYPERSCAN=1)
  message(STATUS "Hyperscan: ${TRIAGE_HS_LIB}")
else()
  message(STATUS "Hyperscan: not found (the literal prefilter runs line by line)")
endif()
add_library(triage_dep::hyperscan ALIAS triage_dep_hyperscan)

add_library(triage_dep_simdjson INTERFACE)
target_link_libraries(triage_dep_simdjson INTERFACE simdjson::simdjson)
add_library(triage_dep::simdjson ALIAS triage_dep_simdjson)

add_library(triage_dep_zlib INTERFACE)
target_link_libraries(triage_dep_zlib INTERFACE ZLIB::ZLIB)
add_library(triage_dep::zlib ALIAS triage_dep_zlib)

add_library(triage_dep_boost INTERFACE)
target_link_libraries(triage_dep_boost INTERFACE Boost::headers Threads::Threads)
add_library(triage_dep::boost ALIAS triage_dep_boost)

add_library(triage_dep_openssl INTERFACE)
target_link_libraries(triage_dep_openssl INTERFACE OpenSSL::SSL OpenSSL::Crypto)
add_library(triage_dep::openssl ALIAS triage_dep_openssl)

# simdjson is the one shared library a triage binary needs at run time; it is copied beside the
# binary and found through an $ORIGIN rpath, so a build folder's bin/ can be carried to a host
# that lacks the package.
set(CMAKE_BUILD_RPATH "\$ORIGIN")
set(CMAKE_INSTALL_RPATH "\$ORIGIN/../lib")

# triage_library(NAME DIR PUBLIC_DEPS...): a library from DIR/src/*.cpp with public headers in
# DIR/include, aliased triage::NAME. A folder whose sources are not written yet is an interface
# library, so the tree builds at every step.
function(triage_library name)
  cmake_parse_arguments(ARG "" "" "PUBLIC;PRIVATE" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
  if(srcs)
    add_library(triage_${name} STATIC ${srcs})
    target_include_directories(triage_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
                                              PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
    target_link_libraries(triage_${name} PUBLIC ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE})
  else()
    add_library(triage_${name} INTERFACE)
    target_include_directories(triage_${name} INTERFACE ${CMAKE_CURRENT_SOURCE_DIR}/include)
    target_link_libraries(triage_${name} INTERFACE ${ARG_PUBLIC})
  endif()
  add_library(triage::${name} ALIAS triage_${name})
endfunction()
