# Fails when an include runs against the library's layers (NORMLAB_LAYERS in CMakeLists.txt,
# docs/design.md "Layers"):
#   - a file of folder F (src/F/..., include/normlab/F/...) includes a header of a folder G
#     (src/G/... as "G/...", include/normlab/G/... as "normlab/G/...") that comes after F;
#   - the program (apps/) or the Python module (python/src/) includes a private header, one of
#     src/ ("G/..."), instead of a public one ("normlab/G/...").
# Usage: cmake -DSOURCE_DIR=<repository> "-DLAYERS=base;core;..." -P cmake/check_layers.cmake
cmake_minimum_required(VERSION 3.20)

set(problems "")

# The folder an include "[normlab/]G/..." names, or "" for a local or external one.
function(included_folder line out)
  set(folder "")
  if(line MATCHES "^#include \"(normlab/)?([a-z_]+)/")
    list(FIND LAYERS "${CMAKE_MATCH_2}" index)
    if(index GREATER_EQUAL 0)
      set(folder "${CMAKE_MATCH_2}")
    endif()
  endif()
  set(${out} "${folder}" PARENT_SCOPE)
endfunction()

list(LENGTH LAYERS layer_count)
foreach(layer ${LAYERS})
  list(FIND LAYERS ${layer} own)
  file(GLOB_RECURSE files ${SOURCE_DIR}/src/${layer}/*.cpp ${SOURCE_DIR}/src/${layer}/*.hpp
       ${SOURCE_DIR}/include/normlab/${layer}/*.hpp)
  foreach(file ${files})
    file(STRINGS ${file} lines REGEX "^#include \"")
    foreach(line ${lines})
      included_folder("${line}" folder)
      if(folder)
        list(FIND LAYERS ${folder} theirs)
        if(theirs GREATER own)
          file(RELATIVE_PATH path ${SOURCE_DIR} ${file})
          list(APPEND problems "${path}: ${line} (${layer} may use only the folders before it)")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

file(GLOB_RECURSE clients ${SOURCE_DIR}/apps/*.cpp ${SOURCE_DIR}/apps/*.hpp
     ${SOURCE_DIR}/python/src/*.cpp ${SOURCE_DIR}/python/src/*.hpp)
foreach(file ${clients})
  file(STRINGS ${file} lines REGEX "^#include \"")
  foreach(line ${lines})
    included_folder("${line}" folder)
    if(folder AND NOT line MATCHES "^#include \"normlab/")
      file(RELATIVE_PATH path ${SOURCE_DIR} ${file})
      list(APPEND problems "${path}: ${line} (a private header of src/, not one of include/normlab/)")
    endif()
  endforeach()
endforeach()

if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "includes against the layers (docs/design.md, \"Layers\"):\n  ${text}")
endif()
