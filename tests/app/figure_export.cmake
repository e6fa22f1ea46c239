# Headless figure export under Xvfb: `maskscope --preset ln-recency-fig1 --export-figure DIR
# --exit-when-done` (fewer samples than the paper's, to keep the test short), then the files are
# checked: XML well-formedness (xmllint), sizes and numbers (figure_check). A corrupt preset must
# stop the app with exit code 2 and a message naming the file.
file(REMOVE_RECURSE ${OUT})
execute_process(
  COMMAND xvfb-run -a -s "-screen 0 1280x800x24" ${APP} --preset ln-recency-fig1 --samples 20000 --export-figure ${OUT}
          --export-width 1200 --exit-when-done --size 1280x800
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
message(STATUS "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "maskscope --export-figure exited with ${rc}")
endif()
execute_process(COMMAND xmllint --noout ${OUT}/figure.svg RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "figure.svg is not well-formed XML: ${err}")
endif()
execute_process(COMMAND ${CHECK} ${OUT} 1200 16 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "figure_check failed")
endif()

file(WRITE ${OUT}-corrupt.json "{\"settings\": {\"n\": 10, \"alpha\": 0.")
execute_process(COMMAND ${APP} --preset ${OUT}-corrupt.json --export-figure ${OUT}-never --exit-when-done
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "corrupt.json" OR NOT err MATCHES "not valid JSON" OR EXISTS ${OUT}-never)
  message(FATAL_ERROR "corrupt preset: exit ${rc}, stderr: ${err}")
endif()
message(STATUS "corrupt preset refused: ${err}")

# --from-results: the same figure from sums computed elsewhere (here by maskscope-cli, one row in two
# shards). With an empty folder the app names every missing simulation and the command computing
# it; those commands are run, and the export must equal the local one file for file.
set(RES ${OUT}-results)
file(REMOVE_RECURSE ${RES} ${OUT}-from)
file(MAKE_DIRECTORY ${RES})
execute_process(COMMAND ${APP} --preset ln-recency-fig1 --samples 20000 --from-results ${RES} --export-figure ${OUT}-from
                        --exit-when-done
                RESULT_VARIABLE rc ERROR_VARIABLE err)
string(REGEX MATCHALL "compute it with: maskscope-cli run [^\n]*" commands "${err}")
list(LENGTH commands count)
if(NOT rc EQUAL 2 OR count LESS 4 OR EXISTS ${OUT}-from)
  message(FATAL_ERROR "--from-results with an empty folder: exit ${rc}, ${count} commands, stderr: ${err}")
endif()
set(k 0)
foreach(c IN LISTS commands)
  string(REGEX REPLACE "^compute it with: maskscope-cli " "" args "${c}")
  separate_arguments(args UNIX_COMMAND "${args}")
  if(k EQUAL 2)  # this one as two shards
    list(REMOVE_AT args -1)
    list(REMOVE_AT args -1)
    foreach(s 1 2)
      execute_process(COMMAND ${CLI} ${args} --quiet --shard ${s}/2 --out ${RES}/shard-${s}.msum RESULT_VARIABLE rc ERROR_VARIABLE err)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "shard ${s}: ${err}")
      endif()
    endforeach()
  else()
    execute_process(COMMAND ${CLI} ${args} --quiet RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${c}: ${err}")
    endif()
  endif()
  math(EXPR k "${k} + 1")
endforeach()
execute_process(
  COMMAND xvfb-run -a -s "-screen 0 1280x800x24" ${APP} --preset ln-recency-fig1 --samples 20000 --from-results ${RES}
          --export-figure ${OUT}-from --export-width 1200 --exit-when-done --size 1280x800
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--from-results export exited with ${rc}: ${err}")
endif()
file(GLOB local_files RELATIVE ${OUT} ${OUT}/*.csv ${OUT}/figure.json ${OUT}/figure.svg ${OUT}/figure.png)
list(LENGTH local_files nfiles)
if(nfiles LESS 10)
  message(FATAL_ERROR "the local export has only ${nfiles} files")
endif()
foreach(f IN LISTS local_files)
  file(SHA256 ${OUT}/${f} a)
  file(SHA256 ${OUT}-from/${f} b)
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "--from-results: ${f} differs from the local export")
  endif()
endforeach()
message(STATUS "--from-results: ${nfiles} files identical to the local export")
