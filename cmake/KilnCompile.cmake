# kiln_compile(<target> [OPTIONAL] [PLUGIN_ARGS <arg>...])
#
# Compiles the C++ sources of <target> with the Kiln plugin and links the
# Kiln runtime. The plugin goes in as ordinary compile options
# (-fplugin=<libkiln.so>, -fplugin-arg-kiln-<arg>), so the target keeps its
# own flags, definitions and usage requirements, and compile_commands.json,
# ccache and IDEs see the real command.
#
#   PLUGIN_ARGS  plugin arguments without the prefix, e.g. `remarks`,
#                `cuda=off`, `arch=sm_90` (README: "Using Kiln in your own
#                build")
#   OPTIONAL     when the C++ compiler cannot load the plugin (not clang
#                KILN_CLANG_VERSION_MAJOR), build the target eagerly with a
#                warning instead of stopping: the program is the same, only
#                slower.
#
# The plugin runs inside the compiler, so the compiler must be the clang
# major version the plugin was built for; anything else is refused here,
# at configure time, with the reason.
#
# kiln_add_executable(<name> SOURCES <src>... [FLAGS <flag>...]) is the
# older form: add_executable + kiln_compile, FLAGS as compile options.
#
# Wants: the target Kiln::plugin (the plugin module) and the variables
# KILN_CLANG_VERSION_MAJOR and KILN_PLUGIN_FILE (the plugin's path, for
# rebuilding objects when it changes), set by KilnConfig.cmake (or Kiln's
# own build).

include_guard(GLOBAL)

# Sets <out> to "" when the project's C++ compiler can load the plugin, else
# to the reason it cannot.
function(kiln_compiler_problem out)
  set(id "${CMAKE_CXX_COMPILER_ID}")
  set(version "${CMAKE_CXX_COMPILER_VERSION}")
  string(REGEX MATCH "^[0-9]+" major "${version}")
  set(problem "")
  if(NOT id STREQUAL "Clang")
    set(problem "the C++ compiler is ${id} ${version} (${CMAKE_CXX_COMPILER})")
  elseif(NOT major STREQUAL "${KILN_CLANG_VERSION_MAJOR}")
    set(problem "the C++ compiler is clang ${version} (${CMAKE_CXX_COMPILER}), "
                "but this Kiln plugin was built for clang ${KILN_CLANG_VERSION_MAJOR}")
  elseif(CMAKE_CXX_COMPILER_FRONTEND_VARIANT STREQUAL "MSVC")
    set(problem "clang-cl does not take -fplugin=")
  endif()
  if(NOT problem)
    # An installed plugin can be loaded now: do it once, so that a clang of
    # the right version but another build (symbols the plugin wants that it
    # lacks) is refused here and not at the first compile.
    get_target_property(imported Kiln::plugin IMPORTED)
    if(imported)
      set(plugin "${KILN_PLUGIN_FILE}")
      set(key "${CMAKE_CXX_COMPILER};${plugin}")
      if(NOT KILN_PLUGIN_LOAD_CHECKED STREQUAL key)
        execute_process(
          COMMAND ${CMAKE_CXX_COMPILER} -fplugin=${plugin} -fsyntax-only -x c++ -
          INPUT_FILE /dev/null RESULT_VARIABLE rc ERROR_VARIABLE err)
        if(NOT rc EQUAL 0)
          set(problem "${CMAKE_CXX_COMPILER} cannot load ${plugin}: ${err}")
        else()
          set(KILN_PLUGIN_LOAD_CHECKED "${key}" CACHE INTERNAL "")
        endif()
      endif()
    endif()
  endif()
  set(${out} "${problem}" PARENT_SCOPE)
endfunction()

function(kiln_compile target)
  cmake_parse_arguments(PARSE_ARGV 1 KC "OPTIONAL" "" "PLUGIN_ARGS")
  if(KC_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_compile(${target}): unknown arguments ${KC_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "kiln_compile(${target}): no target named ${target}")
  endif()
  target_link_libraries(${target} PRIVATE Kiln::runtime)
  kiln_compiler_problem(problem)
  if(problem)
    set(msg "kiln_compile(${target}): the Kiln plugin needs clang "
            "${KILN_CLANG_VERSION_MAJOR} as the C++ compiler, and ${problem}. "
            "Configure with -DCMAKE_CXX_COMPILER=clang++-${KILN_CLANG_VERSION_MAJOR}")
    if(NOT KC_OPTIONAL)
      message(FATAL_ERROR ${msg} ".")
    endif()
    message(WARNING ${msg} "; ${target} is built without it (eager).")
    # [[kiln::compile]] is an unknown attribute to that compiler.
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:$<IF:$<CXX_COMPILER_ID:GNU>,-Wno-attributes,-Wno-unknown-attributes>>)
    return()
  endif()
  set(flags "-fplugin=$<TARGET_FILE:Kiln::plugin>")
  foreach(arg ${KC_PLUGIN_ARGS})
    list(APPEND flags "-fplugin-arg-kiln-${arg}")
  endforeach()
  list(JOIN flags ";" flags)
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${flags}>")
  # A rebuilt plugin makes new code: the target's objects depend on it. In
  # Kiln's own build the plugin is a target built first.
  get_target_property(aliased Kiln::plugin ALIASED_TARGET)
  if(aliased)
    add_dependencies(${target} ${aliased})
  endif()
  if(NOT KILN_PLUGIN_FILE)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  foreach(src ${sources})
    if(src MATCHES "\\.(cpp|cc|cxx|C|c\\+\\+)$" AND NOT src MATCHES "^\\$<")
      set_property(SOURCE ${src} DIRECTORY ${source_dir} APPEND PROPERTY
                   OBJECT_DEPENDS "${KILN_PLUGIN_FILE}")
    endif()
  endforeach()
endfunction()

function(kiln_add_executable name)
  cmake_parse_arguments(PARSE_ARGV 1 KA "" "" "SOURCES;FLAGS")
  add_executable(${name} ${KA_SOURCES})
  target_compile_options(${name} PRIVATE ${KA_FLAGS})
  kiln_compile(${name})
endfunction()
