# Helpers shared by every component, so each CMakeLists.txt states only what is its own.
include_guard(GLOBAL)

# shardscaler_library(<name> [DEPS <public deps>...] [PRIVATE_DEPS <deps>...])
# One library per component folder: sources are src/*.cc, public headers include/.
# The alias is shardscaler::<name>.
function(shardscaler_library name)
  cmake_parse_arguments(ARG "" "" "DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/src/*.cc")
  if(NOT sources)
    # A header-only component (or one not written yet) is still a target others can link.
    add_library(${name} INTERFACE)
    add_library(shardscaler::${name} ALIAS ${name})
    target_include_directories(${name} INTERFACE "${CMAKE_CURRENT_SOURCE_DIR}/include")
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(${name} STATIC ${sources})
  add_library(shardscaler::${name} ALIAS ${name})
  target_include_directories(${name} PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}/include"
                                     PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/src")
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS}
                                       shardscaler::build_options)
endfunction()
