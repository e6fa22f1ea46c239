# The Training tab and the trained-network presets under Xvfb (issue 50), on runs of seconds the test trains itself:
#  1. `maskscope --train DIR --tab training`: the run trains in the background, the tab draws its loss (a first
#     point at step 0 and the curve after), the window exits once the last checkpoint is the live model.
#  2. Each trained-network preset exports headless from that folder (--run DIR); the sink preset's folder is missing
#     at first: exit 2 with how long training takes and nothing written, then --train-missing trains it.
#  3. --run DIR --export-figure OUT without a preset: one PNG of the window per checkpoint and animation.gif of them
#     (decoded against the PNGs); on every tab that shows the live model, the first and last checkpoints' pictures
#     differ (the scrubber's checkpoint is every tab's model).
#  4. The lesson "What training keeps" exports its slides from the BOS run.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(XVFB xvfb-run -a -s "-screen 0 1600x1000x24")
# The window's own exit status is read from a file its shell writes: xvfb-run replaces it with 5 when it cannot clean
# up its temporary folder, which happens when the window exits at once (a refusal) on a loaded machine.
set(ENV{MASKSCOPE_TEST_RC} ${OUT}/.exit-status)
function(run_app name)
  file(REMOVE ${OUT}/.exit-status)
  # In ${OUT}: a preset row's own run folder (trained-layer-lines' Addition rows) is relative to the working folder.
  execute_process(COMMAND ${XVFB} sh -c [["$0" "$@"; s=$?; echo $s > "$MASKSCOPE_TEST_RC"; exit $s]] ${APP} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300 WORKING_DIRECTORY ${OUT})
  if(EXISTS ${OUT}/.exit-status)
    file(STRINGS ${OUT}/.exit-status rc LIMIT_COUNT 1)
  endif()
  message(STATUS "${name}: exit ${rc}\n${out}${err}")
  set(rc ${rc} PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

run_app(train --train ${OUT}/run --tab training --size 1280x800 --screenshot ${OUT}/train.png --exit-when-done)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "maskscope --train exited with ${rc}")
endif()
file(STRINGS ${OUT}/run/log.jsonl lines)
list(LENGTH lines count)
if(count LESS 11 OR NOT EXISTS ${OUT}/run/step-000200.safetensors)
  message(FATAL_ERROR "the run wrote ${count} evaluations (11 expected: steps 0, 20, ..., 200) or no last checkpoint")
endif()
# The loss chart (right of the controls and the form) is drawn: lines, markers, axes.
execute_process(COMMAND ${CHECK} ${OUT}/train.png 1280 800 800 90 1000 300 RESULT_VARIABLE check)
if(NOT check EQUAL 0)
  message(FATAL_ERROR "the loss chart is empty in ${OUT}/train.png")
endif()

foreach(p trained-cosine-maps trained-norms trained-layer-lines trained-adjacency-histograms trained-probes)
  set(extra "")
  if(p STREQUAL "trained-layer-lines")  # its Addition rows read their own folder, missing at first: trained here
    set(extra --train-missing)
  endif()
  run_app(${p} --preset ${p} --run ${OUT}/run --samples 200 --export-figure ${OUT}/${p} --export-width 1000
          --exit-when-done ${extra})
  if(NOT rc EQUAL 0 OR NOT EXISTS ${OUT}/${p}/figure.png OR NOT EXISTS ${OUT}/${p}/preset.json)
    message(FATAL_ERROR "--preset ${p} --run: exit ${rc}, no figure.png or preset.json")
  endif()
  # The exported preset reads the run: its trained rows name the folder.
  file(READ ${OUT}/${p}/preset.json preset)
  if(NOT preset MATCHES "\"checkpoint\": \"${OUT}/run\"")
    message(FATAL_ERROR "${p}: the exported preset does not read ${OUT}/run")
  endif()
endforeach()
# Several tasks in one figure: the Addition rows' own folder was trained (its recipe), and they read it.
file(READ ${OUT}/trained-layer-lines/preset.json preset)
if(NOT EXISTS ${OUT}/maskscope-runs/addition-d32/step-000200.safetensors OR
   NOT preset MATCHES "\"checkpoint\": \"maskscope-runs/addition-d32\"")
  message(FATAL_ERROR "trained-layer-lines: the Addition rows' run folder was not trained or not read")
endif()

# A missing run folder: refused with the time it would take, never trained silently.
run_app(sink-missing --preset trained-sink --run ${OUT}/run-bos --export-figure ${OUT}/never --exit-when-done)
if(NOT rc EQUAL 2 OR NOT err MATCHES "is missing; training it takes about" OR NOT err MATCHES "tokens/s measured" OR
   EXISTS ${OUT}/run-bos OR EXISTS ${OUT}/never)
  message(FATAL_ERROR "a missing run folder: exit ${rc}, stderr: ${err}")
endif()
run_app(sink --preset trained-sink --run ${OUT}/run-bos --train-missing --samples 200 --export-figure ${OUT}/trained-sink
        --exit-when-done)
if(NOT rc EQUAL 0 OR NOT EXISTS ${OUT}/run-bos/step-000200.safetensors OR NOT EXISTS ${OUT}/trained-sink/lines.csv)
  message(FATAL_ERROR "--train-missing: exit ${rc}")
endif()
# The sink curve and r_l have a point per evaluation and layer: 2 charts x 11 x 2 rows under the CSV header.
file(STRINGS ${OUT}/trained-sink/lines.csv csv)
list(LENGTH csv rows)
if(NOT rows EQUAL 45)
  message(FATAL_ERROR "trained-sink's lines.csv has ${rows} lines, 45 expected")
endif()

run_app(animation --run ${OUT}/run --samples 200 --size 1280x800 --export-figure ${OUT}/animation --exit-when-done)
file(GLOB frames ${OUT}/animation/step-*.png)
list(LENGTH frames nframes)
if(NOT rc EQUAL 0 OR NOT nframes EQUAL 11)
  message(FATAL_ERROR "the animation: exit ${rc}, ${nframes} PNGs (11 checkpoints)")
endif()
# The GIF: a frame per checkpoint in step order (GLOB sorts the zero-padded names), the PNGs' size, looping, each
# frame PNG k within the palette's bound.
list(SORT frames)
execute_process(COMMAND ${ANIMATION_CHECK} gif ${OUT}/animation/animation.gif ${frames} RESULT_VARIABLE check)
if(NOT check EQUAL 0)
  message(FATAL_ERROR "animation.gif does not hold the 11 PNGs in order")
endif()

# The scrubber changes every tab's pictures: on each tab that shows the live model, the animation's first and last
# checkpoints differ in the tab's content (below the tab bar, above the status line, right of the controls: the
# status line names the step, so the whole window would differ anyway). A run folder with those two checkpoints
# keeps it quick. The Histograms tab needs histograms on; the Sweep tab a quick sweep (a preset without figure rows
# gives the animation in its view).
file(MAKE_DIRECTORY ${OUT}/run-ends)
foreach(f config.json log.jsonl step-000000.safetensors step-000200.safetensors)
  file(COPY_FILE ${OUT}/run/${f} ${OUT}/run-ends/${f})
endforeach()
file(WRITE ${OUT}/quick-sweep.json [[{"maskscope": "0.1.0", "name": "quick-sweep", "description": "RP against the mask",
  "settings": {"model": "random_weights", "samples": 200}, "view": {"tab": "sweep"},
  "sweep": {"metric": "rp", "vary": [{"name": "mask", "values": "causal,bidirectional"}], "se": 0, "samples": 200}}]])
foreach(tab attention diagonal hofj metrics leakage probes histograms sweep)
  set(extra)
  if(tab STREQUAL "histograms")
    set(extra --model random_weights --histograms 100)
  elseif(tab STREQUAL "sweep")
    set(extra --preset ${OUT}/quick-sweep.json)
  endif()
  run_app(tab-${tab} ${extra} --run ${OUT}/run-ends --tab ${tab} --samples 200 --size 1280x800
          --export-figure ${OUT}/tab-${tab} --exit-when-done)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${OUT}/tab-${tab}/step-000000.png OR NOT EXISTS ${OUT}/tab-${tab}/step-000200.png)
    message(FATAL_ERROR "the ${tab} tab's animation: exit ${rc}, not both checkpoints' PNGs")
  endif()
  execute_process(COMMAND ${ANIMATION_CHECK} differ ${OUT}/tab-${tab}/step-000000.png ${OUT}/tab-${tab}/step-000200.png
                          356 56 1280 758 2000 RESULT_VARIABLE check)
  if(NOT check EQUAL 0)
    message(FATAL_ERROR "the ${tab} tab shows the same picture at steps 0 and 200: the scrubber's checkpoint is not its model")
  endif()
endforeach()

run_app(lesson --lesson what-training-keeps --run ${OUT}/run-bos --samples 200 --size 1280x800
        --export-slides ${OUT}/slides --exit-when-done)
file(GLOB slides ${OUT}/slides/step-*.png)
list(LENGTH slides nslides)
if(NOT rc EQUAL 0 OR NOT nslides EQUAL 6)
  message(FATAL_ERROR "the lesson's slides: exit ${rc}, ${nslides} PNGs (6 steps)")
endif()
