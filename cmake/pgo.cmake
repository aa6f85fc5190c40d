# Profile-guided optimisation with GCC (scripts/build.sh drives it):
#   STEPSCOPE_PGO=GENERATE  instrumented build; running it writes profiles into
#                           STEPSCOPE_PGO_DIR (scripts/pgo_train.sh runs it)
#   STEPSCOPE_PGO=USE       optimised with those profiles: branches laid out
#                           for the common case, hot code inlined, and code a
#                           run never touched moved to .text.unlikely, away
#                           from the pages `analyze` maps (docs/performance.md)
# The two stages build in different folders; -fprofile-prefix-path names each
# profile by the object's path inside its build folder, so they match.
# Objects depend on ${STEPSCOPE_PGO_DIR}/stamp (rewritten after each training run):
# a new profile recompiles everything that used the old one.
set(STEPSCOPE_PGO OFF CACHE STRING "Profile-guided optimisation: OFF, GENERATE or USE (GCC)")
set_property(CACHE STEPSCOPE_PGO PROPERTY STRINGS OFF GENERATE USE)
set(STEPSCOPE_PGO_DIR "" CACHE PATH "Folder of the training profiles (STEPSCOPE_PGO=GENERATE/USE)")

function(stepscope_pgo_setup)
  if(STEPSCOPE_PGO STREQUAL "OFF")
    return()
  endif()
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    message(FATAL_ERROR "STEPSCOPE_PGO needs GCC (this is ${CMAKE_CXX_COMPILER_ID})")
  endif()
  if(NOT STEPSCOPE_PGO_DIR)
    message(FATAL_ERROR "STEPSCOPE_PGO=${STEPSCOPE_PGO} needs STEPSCOPE_PGO_DIR")
  endif()
  set(prefix "-fprofile-prefix-path=${CMAKE_BINARY_DIR}")
  if(STEPSCOPE_PGO STREQUAL "GENERATE")
    # prefer-atomic: ranks are read on several threads; counters stay exact.
    add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fprofile-generate=${STEPSCOPE_PGO_DIR};-fprofile-update=prefer-atomic;${prefix}>")
    add_link_options("$<$<LINK_LANGUAGE:CXX>:-fprofile-generate=${STEPSCOPE_PGO_DIR}>")
  elseif(STEPSCOPE_PGO STREQUAL "USE")
    if(NOT EXISTS "${STEPSCOPE_PGO_DIR}/stamp")
      message(FATAL_ERROR "STEPSCOPE_PGO=USE: no training profile in ${STEPSCOPE_PGO_DIR} (run scripts/build.sh)")
    endif()
    # -Wno-missing-profile: tests and tools the training never ran have no
    # profile. -Wno-error=coverage-mismatch: a function whose code differs
    # from the trained one (edited since, or built with other options, like
    # `bench` without CUDA in the training build) is warned about and
    # compiled without its profile instead of failing the build.
    add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fprofile-use=${STEPSCOPE_PGO_DIR};${prefix};-Wno-missing-profile;-Wno-error=coverage-mismatch>")
  else()
    message(FATAL_ERROR "STEPSCOPE_PGO must be OFF, GENERATE or USE (got ${STEPSCOPE_PGO})")
  endif()
endfunction()

# Recompiles a target's C++ sources when the training profile changes.
function(stepscope_pgo_depend target)
  if(NOT STEPSCOPE_PGO STREQUAL "USE")
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(dir ${target} SOURCE_DIR)
  foreach(source IN LISTS sources)
    if(source MATCHES "\\.cpp$")
      set_property(SOURCE ${source} DIRECTORY ${dir} APPEND PROPERTY OBJECT_DEPENDS "${STEPSCOPE_PGO_DIR}/stamp")
    endif()
  endforeach()
endfunction()
