# drover_module(NAME DEPS <targets...>)
# Builds every *.cpp in the current directory (except *_test.cpp, *_bench.cpp,
# *_fuzz.cpp and *_main.cpp) into the static library NAME, and every
# *_test.cpp into one GoogleTest executable NAME_tests registered with CTest.
# Layering is enforced here: a module sees only the modules in DEPS.
function(drover_module name)
  cmake_parse_arguments(M "" "" "DEPS;PUBLIC_LIBS;TEST_LIBS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp)
  list(FILTER srcs EXCLUDE REGEX "_(test|bench|fuzz)\\.cpp$")
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${M_DEPS} ${M_PUBLIC_LIBS})
  if(tests)
    drover_test(${name}_tests SOURCES ${tests} LIBS ${name} ${M_TEST_LIBS})
  endif()
endfunction()
