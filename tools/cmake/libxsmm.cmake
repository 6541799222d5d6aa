# memgrad::libxsmm, an imported target for LIBXSMM (Debian's libxsmm-dev: a static library found
# through pkg-config), made from MEMGRAD_LIBXSMM_LINK (the libraries to link, full paths). Empty
# when memgrad was built without it. Included by the build and by the installed
# memgrad-config.cmake, so that the exported static library names this target.
if(NOT TARGET memgrad::libxsmm)
  add_library(memgrad::libxsmm INTERFACE IMPORTED)
  set_target_properties(memgrad::libxsmm PROPERTIES INTERFACE_LINK_LIBRARIES "${MEMGRAD_LIBXSMM_LINK}")
endif()
