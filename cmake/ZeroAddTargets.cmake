# Helpers that give every zero library the same shape: linked against the
# shared libMLIR and libLLVM (so a build and its consumers never pull MLIR's
# static archives in twice), its headers found from the build tree and from
# an install, and a place in the exported ZeroTargets set that find_package(Zero)
# hands to other projects.

# zero_add_library(name SRCS... [LLVM_ONLY] [DEPENDS tablegen-targets...]
#                  [LINK_LIBS libs...])
# LLVM_ONLY: the library needs LLVM (Support) and not MLIR.
function(zero_add_library name)
  cmake_parse_arguments(ARG "LLVM_ONLY" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} ${ARG_UNPARSED_ARGUMENTS})
  add_library(Zero::${name} ALIAS ${name})
  set_target_properties(${name} PROPERTIES EXPORT_NAME ${name}
                                           POSITION_INDEPENDENT_CODE ON
                                           UNITY_BUILD ${ZERO_UNITY_BUILD}
                                           UNITY_BUILD_BATCH_SIZE 8)
  # The runtime's headers too: its C enums and call table are the
  # compiler's (zero/runtime/...; installed beside zero's own).
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${ZERO_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${ZERO_BINARY_DIR}/include>
    $<BUILD_INTERFACE:${ZERO_SOURCE_DIR}/runtime/include>
    $<INSTALL_INTERFACE:include>)
  # MLIR's imported targets carry no include directories of their own.
  target_include_directories(${name} SYSTEM PUBLIC
    ${MLIR_INCLUDE_DIRS} ${LLVM_INCLUDE_DIRS})
  if(ARG_LLVM_ONLY)
    target_link_libraries(${name} PUBLIC LLVM ${ARG_LINK_LIBS})
  else()
    target_link_libraries(${name} PUBLIC MLIR LLVM ${ARG_LINK_LIBS})
  endif()
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  set_property(GLOBAL APPEND PROPERTY ZERO_EXPORTED_LIBS ${name})
  install(TARGETS ${name} EXPORT ZeroTargets
          ARCHIVE DESTINATION lib LIBRARY DESTINATION lib)
endfunction()
