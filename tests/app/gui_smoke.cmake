# Runs maskscope under Xvfb with settings, waits for the run to finish, saves a screenshot, and
# checks the PNG: the window's size, and a heatmap region that is not a single colour.
file(REMOVE "${OUT}")
execute_process(
  COMMAND xvfb-run -a -s "-screen 0 1600x1000x24" "${APP}" --set alpha=0.5 --set d=16 --set layers=2
          --set samples=50000 --size 1280x800 --screenshot "${OUT}" --exit-when-done
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "maskscope exited with ${rc}")
endif()
# Heatmap of layer 2 sits right of the 330 px controls panel, below the tab bar.
execute_process(COMMAND "${CHECK}" "${OUT}" 1280 800 860 90 1150 420 RESULT_VARIABLE check)
if(NOT check EQUAL 0)
  message(FATAL_ERROR "screenshot check failed")
endif()
