# kiln_add_executable(<name> SOURCES <src>... [FLAGS <flag>...])
#
# Builds <name> from sources with clang++-19 and the Kiln plugin, linked to
# the Kiln runtime, in one compile command per source (what a user's own
# build does with -fplugin=$(kiln-config --plugin)). Header dependencies
# come from the compiler's depfile, so an edited header rebuilds.
function(kiln_add_executable name)
  cmake_parse_arguments(KA "" "" "SOURCES;FLAGS" ${ARGN})
  set(objects)
  foreach(src ${KA_SOURCES})
    get_filename_component(abs ${src} ABSOLUTE)
    get_filename_component(base ${src} NAME_WE)
    set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.dir/${base}.o)
    add_custom_command(
      OUTPUT ${obj}
      COMMAND ${KILN_CLANGXX} -std=c++20 -O2 -fplugin=$<TARGET_FILE:kiln>
              -I${PROJECT_SOURCE_DIR}/runtime/include ${KA_FLAGS}
              -MD -MF ${obj}.d -c ${abs} -o ${obj}
      DEPENDS ${abs} kiln
      DEPFILE ${obj}.d
      COMMENT "Compiling ${src} with the Kiln plugin"
      VERBATIM)
    list(APPEND objects ${obj})
  endforeach()
  add_executable(${name} ${objects})
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE CXX)
  target_link_libraries(${name} PRIVATE kiln_rt)
endfunction()
