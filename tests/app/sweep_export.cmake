# The Sweep tab headless: `maskscope --preset sweep-ln-recency-fig5 --export-figure DIR --exit-when-done` (the
# preset opens the Sweep tab, so the sweep is exported once every point is done). Its sweep.csv must equal
# `maskscope-cli sweep` with the same settings byte for byte (one engine, the same seed, the same stopping
# rule); the SVG must be well-formed, and a screenshot of the tab must be written.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
execute_process(
  COMMAND xvfb-run -a -s "-screen 0 1280x800x24" ${APP} --preset sweep-ln-recency-fig5 --export-figure ${OUT}
          --export-width 900 --screenshot ${OUT}/window.png --exit-when-done --size 1280x800
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
message(STATUS "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "maskscope --tab sweep --export-figure exited with ${rc}")
endif()
foreach(f sweep.png sweep.svg sweep.csv preset.json window.png)
  if(NOT EXISTS ${OUT}/${f})
    message(FATAL_ERROR "the sweep export has no ${f}")
  endif()
endforeach()
if(NOT out MATCHES "PNG 900x")
  message(FATAL_ERROR "sweep.png is not 900 pixels wide: ${out}")
endif()
execute_process(COMMAND xmllint --noout ${OUT}/sweep.svg RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "sweep.svg is not well-formed XML: ${err}")
endif()
# The preset's settings and sweep (assets/presets/sweep-ln-recency-fig5.json) as command-line flags.
execute_process(
  COMMAND ${CLI} sweep --vary alpha=0:0.9:19 --n 10 --d 16 --layers 2 --norm layernorm --scale sqrt_d
          --gamma 0 --metric rp --se 0.0005 --samples 400000 --quiet --out ${OUT}/cli.csv
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "maskscope-cli sweep: ${err}")
endif()
file(READ ${OUT}/sweep.csv window_csv)
file(READ ${OUT}/cli.csv cli_csv)
if(NOT window_csv STREQUAL cli_csv)
  message(FATAL_ERROR "the window's sweep.csv differs from maskscope-cli sweep's:\n${window_csv}\n---\n${cli_csv}")
endif()
string(REGEX MATCHALL "\n[^\n]+" rows "${window_csv}")
list(LENGTH rows count)
if(NOT count EQUAL 38)  # 19 alphas x 2 layers
  message(FATAL_ERROR "sweep.csv has ${count} rows, expected 38")
endif()
message(STATUS "the window's sweep equals maskscope-cli sweep (${count} rows)")
