# Turns the HTML report's page, style and scripts into string constants:
#   cmake -DOUTPUT=<header> -DASSETS="kName=path|kOther=path" -P embed_assets.cmake
# Each file becomes `inline constexpr std::string_view kName = R"..."`, so
# the files stay readable in src/report/html/ and the binary needs nothing
# beside it at run time.
set(delimiter "stepscope_html")
string(REPLACE "|" ";" ASSETS "${ASSETS}")
set(text "// Generated from src/report/html/ by embed_assets.cmake: do not edit.\n#pragma once\n\n#include <string_view>\n\nnamespace stepscope::report::html_assets {\n")
foreach(pair IN LISTS ASSETS)
  string(FIND "${pair}" "=" eq)
  string(SUBSTRING "${pair}" 0 ${eq} name)
  math(EXPR from "${eq} + 1")
  string(SUBSTRING "${pair}" ${from} -1 path)
  file(READ "${path}" content)
  string(FIND "${content}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path} contains the raw-string delimiter )${delimiter}\"")
  endif()
  string(APPEND text "\ninline constexpr std::string_view ${name} = R\"${delimiter}(${content})${delimiter}\";\n")
endforeach()
string(APPEND text "\n}  // namespace stepscope::report::html_assets\n")
# Rewrite only on change, so unrelated builds do not recompile the report.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${text}")
