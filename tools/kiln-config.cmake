# kiln-config for the build tree (bin/kiln-config) and for an install.
set(KILN_CONFIG_PREFIX ${PROJECT_BINARY_DIR})
set(KILN_CONFIG_INCLUDEDIR ${PROJECT_SOURCE_DIR}/runtime/include)
set(KILN_CONFIG_LIBDIR ${PROJECT_BINARY_DIR}/lib)
set(KILN_CONFIG_PLUGIN ${PROJECT_BINARY_DIR}/lib/libkiln.so)
configure_file(${CMAKE_CURRENT_LIST_DIR}/kiln-config.in
               ${PROJECT_BINARY_DIR}/bin/kiln-config @ONLY
               FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
                                GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# The installed one finds the prefix from its own path, so an install
# moved elsewhere (or made with cmake --install --prefix) still works.
include(GNUInstallDirs)
set(KILN_CONFIG_PREFIX [=[$(cd "$(dirname "$0")/.." && pwd)]=])
set(KILN_CONFIG_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
set(KILN_CONFIG_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
set(KILN_CONFIG_PLUGIN "\${prefix}/${CMAKE_INSTALL_LIBDIR}/libkiln.so")
configure_file(${CMAKE_CURRENT_LIST_DIR}/kiln-config.in
               ${CMAKE_CURRENT_BINARY_DIR}/kiln-config.install @ONLY)
install(PROGRAMS ${CMAKE_CURRENT_BINARY_DIR}/kiln-config.install
        DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME kiln-config)
add_custom_target(kiln-config-file DEPENDS ${PROJECT_BINARY_DIR}/bin/kiln-config)
