# Run by `cmake --install` (see install.cmake): copies the public headers to
# <prefix>/<includedir>/memgrad/, their includes of each other rewritten from "engine/x.hpp" to
# "memgrad/engine/x.hpp". Honours DESTDIR (cpack) and lists the files in the install manifest.
# Each header is written straight to its destination, and only when its text changed, so that
# installs running at the same time (the two tests of tests/install) share no temporary file.
file(GLOB_RECURSE headers RELATIVE ${MEMGRAD_SOURCE_DIR}
     ${MEMGRAD_SOURCE_DIR}/engine/*.hpp ${MEMGRAD_SOURCE_DIR}/ops/*.hpp
     ${MEMGRAD_SOURCE_DIR}/models/*.hpp ${MEMGRAD_SOURCE_DIR}/tasks/*.hpp)
list(REMOVE_ITEM headers engine/alloc_counter.hpp)
foreach(header ${headers})
  file(READ ${MEMGRAD_SOURCE_DIR}/${header} text)
  string(REGEX REPLACE "#include \"(engine|ops|models|tasks)/" "#include \"memgrad/\\1/" text
         "${text}")
  set(dest "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${MEMGRAD_INCLUDEDIR}/memgrad/${header}")
  set(old "")
  if(EXISTS ${dest})
    file(READ ${dest} old)
  endif()
  if(old STREQUAL text)
    message(STATUS "Up-to-date: ${dest}")
  else()
    message(STATUS "Installing: ${dest}")
    file(WRITE ${dest} "${text}")
  endif()
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${dest}")
endforeach()
