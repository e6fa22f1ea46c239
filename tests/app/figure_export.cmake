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
