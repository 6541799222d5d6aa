# memgrad::openblas, an imported target for the OpenBLAS that find_package(OpenBLAS) found (Debian's
# libopenblas-dev sets only OpenBLAS_LIBRARIES and OpenBLAS_INCLUDE_DIRS). Included by the build
# and by the installed memgrad-config.cmake, so the exported static library names this target and
# each user's own find_package(OpenBLAS) fills it in.
if(NOT TARGET memgrad::openblas)
  add_library(memgrad::openblas INTERFACE IMPORTED)
  set_target_properties(memgrad::openblas PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${OpenBLAS_INCLUDE_DIRS}"
    INTERFACE_LINK_LIBRARIES "${OpenBLAS_LIBRARIES}")
endif()
