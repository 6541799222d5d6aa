# memgrad as a library (docs/library.md): `cmake --install` puts the public headers, libmemgrad.so
# and libmemgrad.a, the memgrad program, a CMake package and pkg-config files and the docs under a
# prefix; `cpack -G DEB` makes a Debian package of the same tree. Included by CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(MEMGRAD_SANITIZE)
  # A sanitized build is for the test suite only: its objects need the sanitizer runtime, which
  # an installed library must not impose on its users. No install rules, no package.
  return()
endif()

# Both libraries are made of memgrad_lib's objects (compiled once, position-independent). Every op
# and model registers itself from a static initializer, so each user program must carry every
# object: the shared library always does; the static one is exported behind memgrad_static, which
# links the archive whole (--whole-archive), so the linker drops no op nobody calls by name.
add_library(memgrad_shared SHARED $<TARGET_OBJECTS:memgrad_lib>)
add_library(memgrad_static STATIC $<TARGET_OBJECTS:memgrad_lib>)
set_target_properties(memgrad_shared PROPERTIES OUTPUT_NAME memgrad EXPORT_NAME memgrad
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
target_link_options(memgrad_shared PRIVATE -Wl,--no-undefined)
set_target_properties(memgrad_static PROPERTIES OUTPUT_NAME memgrad EXPORT_NAME memgrad_archive)
foreach(lib memgrad_shared memgrad_static)
  # Headers are installed as <prefix>/include/memgrad/{engine,ops,models,tasks}/*.hpp.
  target_include_directories(${lib} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${lib} INTERFACE cxx_std_20)
  # The headers include TBB's and nlohmann-json's; OpenBLAS and zlib are used only inside.
  target_link_libraries(${lib} PUBLIC TBB::tbb nlohmann_json::nlohmann_json
                        PRIVATE memgrad::libxsmm memgrad::openblas ZLIB::ZLIB Threads::Threads)
endforeach()
add_library(memgrad_static_whole INTERFACE)
set_target_properties(memgrad_static_whole PROPERTIES EXPORT_NAME memgrad_static)
# Export does not rename a target inside $<LINK_LIBRARY:...>: the installed name is spelled out.
target_link_libraries(memgrad_static_whole INTERFACE
  "$<BUILD_INTERFACE:$<LINK_LIBRARY:WHOLE_ARCHIVE,memgrad_static>>"
  "$<INSTALL_INTERFACE:$<LINK_LIBRARY:WHOLE_ARCHIVE,memgrad::memgrad_archive>>")

set(MEMGRAD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/memgrad)
install(TARGETS memgrad RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS memgrad_shared memgrad_static memgrad_static_whole EXPORT memgrad-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT memgrad-targets NAMESPACE memgrad:: DESTINATION ${MEMGRAD_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/tools/cmake/memgrad-config.cmake.in
  ${CMAKE_BINARY_DIR}/memgrad-config.cmake INSTALL_DESTINATION ${MEMGRAD_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/memgrad-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/memgrad-config.cmake ${CMAKE_BINARY_DIR}/memgrad-config-version.cmake
        ${CMAKE_SOURCE_DIR}/tools/cmake/openblas.cmake
        ${CMAKE_SOURCE_DIR}/tools/cmake/libxsmm.cmake DESTINATION ${MEMGRAD_CMAKE_DIR})

# pkg-config: memgrad (the shared library) and memgrad-static (the archive, whole). Both find the
# prefix from their own place (${pcfiledir}), so an installed tree can be moved.
file(RELATIVE_PATH MEMGRAD_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" MEMGRAD_PC_TO_PREFIX "${MEMGRAD_PC_TO_PREFIX}")
set(MEMGRAD_PC_LIBXSMM "")  # before openblas: the LIBXSMM archive calls BLAS
if(MEMGRAD_LIBXSMM_LINK)
  set(MEMGRAD_PC_LIBXSMM "libxsmm ")
endif()
foreach(pc memgrad memgrad-static)
  configure_file(${CMAKE_SOURCE_DIR}/tools/cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# Public headers: engine, ops, models, tasks (not the allocation counter, which is the program's).
# In the tree they include each other as "engine/tape.hpp"; installed, as "memgrad/engine/tape.hpp",
# so that a user's include path needs only <prefix>/include and no folder name of ours can shadow
# one of theirs. tools/cmake/install_headers.cmake rewrites those lines at install time.
install(CODE "set(MEMGRAD_SOURCE_DIR \"${CMAKE_SOURCE_DIR}\")
set(MEMGRAD_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")")
install(SCRIPT ${CMAKE_SOURCE_DIR}/tools/cmake/install_headers.cmake)

install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")

# cpack -G DEB --config build/CPackConfig.cmake: a package of the tree above under /usr. Depends on
# the Debian runtime packages the program and libmemgrad.so load; recommends what building
# against the headers needs. The build's -march=x86-64-v3 (MEMGRAD_NATIVE) is in it: configure
# with -DMEMGRAD_NATIVE=OFF for a package meant for CPUs without AVX2.
# cpack packages the build as it is: it does not build first (its "preinstall" would otherwise
# rebuild every target, tests included, in the middle of a test run).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)
set(CPACK_PACKAGE_NAME memgrad)
set(CPACK_PACKAGE_VENDOR memgrad)
set(CPACK_PACKAGE_CONTACT "memgrad maintainers <memgrad@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6, libstdc++6, libgcc-s1, libopenblas0 | libopenblas0-pthread, libtbb12, zlib1g")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "g++, cmake, pkgconf, libopenblas-dev, libtbb-dev, nlohmann-json3-dev, zlib1g-dev")
set(CPACK_GENERATOR DEB)
include(CPack)
