# find_package(Kiln CONFIG): the package Kiln installs (cmake --install) and
# the same from the build tree (-DKiln_DIR=<build>). Either gives
#   Kiln::runtime   libkiln_rt, its headers, C++20
#   Kiln::plugin    the Clang plugin module
#   kiln_compile()  cmake/KilnCompile.cmake
# Inside Kiln's own build the same names work (aliases below), so the
# examples use the package's own functions.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(kiln_rt PROPERTIES EXPORT_NAME runtime)
set_target_properties(kiln PROPERTIES EXPORT_NAME plugin)
add_library(Kiln::runtime ALIAS kiln_rt)
add_library(Kiln::plugin ALIAS kiln)
set(KILN_CLANG_VERSION_MAJOR ${LLVM_VERSION_MAJOR})
set(KILN_PLUGIN_FILE ${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/libkiln.so)
include(${CMAKE_CURRENT_LIST_DIR}/KilnCompile.cmake)
kiln_compiler_problem(KILN_COMPILER_PROBLEM) # "" when the examples can use it
if(KILN_COMPILER_PROBLEM)
  message(STATUS "kiln: examples and bench built eager only: ${KILN_COMPILER_PROBLEM}")
endif()

set(KILN_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Kiln)
install(EXPORT KilnTargets NAMESPACE Kiln::
        DESTINATION ${KILN_CMAKE_INSTALL_DIR})
configure_file(${CMAKE_CURRENT_LIST_DIR}/KilnConfig.cmake.in
               ${PROJECT_BINARY_DIR}/KilnConfig.cmake @ONLY)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/KilnConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/KilnConfig.cmake
              ${PROJECT_BINARY_DIR}/KilnConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/KilnCompile.cmake
        DESTINATION ${KILN_CMAKE_INSTALL_DIR})

# The build tree as a package: KilnConfig.cmake and its neighbours in the
# build folder, the targets pointing at the build's files.
export(EXPORT KilnTargets NAMESPACE Kiln::
       FILE ${PROJECT_BINARY_DIR}/KilnTargets.cmake)
configure_file(${CMAKE_CURRENT_LIST_DIR}/KilnCompile.cmake
               ${PROJECT_BINARY_DIR}/KilnCompile.cmake COPYONLY)
