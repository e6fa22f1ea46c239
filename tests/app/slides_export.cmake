# Slides export under Xvfb: `maskscope --lesson NAME --export-slides DIR --exit-when-done` writes one
# non-blank PNG per step (consecutive ones differ) and slides.md; a bad lesson file exits 2 naming it.
file(REMOVE_RECURSE ${OUT})
execute_process(
  COMMAND xvfb-run -a -s "-screen 0 1280x720x24" ${APP} --lesson where-position-comes-from --samples 3000
          --export-slides ${OUT} --exit-when-done --size 1280x720
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
message(STATUS "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "maskscope --export-slides exited with ${rc}")
endif()
execute_process(COMMAND ${CHECK} ${OUT} 6 1280 720 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "slides_check failed")
endif()
file(WRITE ${OUT}-bad.json "{\"title\": \"t\", \"steps\": [{\"title\": \"a\", \"text\": \"x\", \"set\": {\"alpha\": 7}}]}")
execute_process(COMMAND ${APP} --lesson ${OUT}-bad.json --export-slides ${OUT}-never --exit-when-done
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "bad.json: steps.0..set.alpha" OR EXISTS ${OUT}-never)
  message(FATAL_ERROR "bad lesson: exit ${rc}, stderr: ${err}")
endif()
message(STATUS "bad lesson refused: ${err}")
