# Finds LIBXSMM (Debian's libxsmm-dev: a static library, found through pkg-config) and sets
# MEMGRAD_LIBXSMM_LINK to what a program calling it links (full paths; empty when not found).
# Included by the main build (when MEMGRAD_LIBXSMM is on) and by the fuzz build (tests/fuzz), which
# must link the same archive as the main build's engine/small_gemm.cpp calls. Needs
# find_package(OpenBLAS) first. tools/cmake/libxsmm.cmake turns the list into memgrad::libxsmm.
set(MEMGRAD_LIBXSMM_LINK "")
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(LIBXSMM QUIET libxsmm)
endif()
if(LIBXSMM_FOUND)
  find_library(MEMGRAD_LIBXSMM_ARCHIVE NAMES libxsmm.a xsmm HINTS ${LIBXSMM_LIBRARY_DIRS})
endif()
if(MEMGRAD_LIBXSMM_ARCHIVE)
  # The archive calls BLAS (sgemm_) for what it does not generate: OpenBLAS, linked after it.
  set(MEMGRAD_LIBXSMM_LINK ${MEMGRAD_LIBXSMM_ARCHIVE} ${OpenBLAS_LIBRARIES} dl rt)
  message(STATUS "memgrad: LIBXSMM ${LIBXSMM_VERSION} found: small products use its kernels")
else()
  message(STATUS "memgrad: LIBXSMM not found (libxsmm-dev): every product goes to OpenBLAS")
endif()
