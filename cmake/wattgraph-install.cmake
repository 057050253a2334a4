# Installing wattgraph (cmake --install BUILD [--prefix P]): the static
# library, the headers, the command line, a CMake package
# (find_package(wattgraph) -> wattgraph::wattgraph) and a pkg-config file,
# both carrying the link dependencies a static library needs (compression
# libraries, readosm, expat, xxhash, OpenMP, threads and, in a CUDA build,
# the static CUDA runtime). tests/test_install.sh builds the README's
# library example against an installed copy both ways.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS wattgraph EXPORT wattgraphTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS wattgraph_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT wattgraphTargets NAMESPACE wattgraph::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/wattgraph)

set(WG_PACKAGE_HAS_CUDA 0)
if(WG_HAS_CUDA)
  set(WG_PACKAGE_HAS_CUDA 1)
endif()
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/wattgraphConfig.cmake.in
  ${CMAKE_BINARY_DIR}/wattgraphConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/wattgraph)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/wattgraphConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/wattgraphConfig.cmake
              ${CMAKE_BINARY_DIR}/wattgraphConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/wattgraph)

# pkg-config: the library is static, so its dependencies go in Libs (a plain
# `pkg-config --libs wattgraph` links), and the prefix is found from the
# file's own place (an install with --prefix anywhere works).
set(WG_PC_CFLAGS "")
set(WG_PC_LIBS "-lmetis -lmicrohttpd -ljansson -lreadosm -lexpat -lxxhash -llzma -lbz2 -lz ${OpenMP_C_FLAGS} -lpthread -ldl -lm")
if(WG_HAS_CUDA)
  set(WG_PC_CFLAGS "-DWG_HAS_CUDA=1")
  set(WG_PC_LIBS "${WG_PC_LIBS} -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lrt -lstdc++")
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/wattgraph.pc.in ${CMAKE_BINARY_DIR}/wattgraph.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/wattgraph.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
