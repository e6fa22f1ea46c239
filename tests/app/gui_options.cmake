# The window's command line refuses bad input before opening a window: exit 2 and a message that
# names the option (issue 9's reproductions). No display needed.
set(CASES
  "--set n=10.9|n: 10.9 is not a whole number"
  "--set seed=-1|seed: -1 is out of range"
  "--set unit_input=2|unit_input: '2' is not allowed"
  "--set n=0x10|'0x10' is not a decimal number"
  "--hide-diagonal maybe|--hide-diagonal: 'maybe'"
  "--preset --set n=3|got the flag '--set'"
  "--preset /tmp|the preset '/tmp' is a folder, not a file"
  "--preset /dev/zero|the preset '/dev/zero' is not a regular file"
  "--lesson /dev/urandom|the lesson file '/dev/urandom' is not a regular file"
  "--screenshot /missing-dir/x.png --exit-when-done|--screenshot: the folder '/missing-dir' does not exist"
  "--samples 1e3x|--samples: '1e3x' is not a decimal number"
  "--samples 0x10|--samples: '0x10' is not a decimal number"
  "--export-scale 9|--export-scale: 9 is out of range"
  "--export-width 4294967396|--export-width"
  "--tab nope|--tab: 'nope'"
  "--set n=512 --set layers=16|the window allows 768 MB"
  "--open /nonexistent-tensors|--open: /nonexistent-tensors: not a folder"
  "--open /tmp|manifest.json: missing"
  "--from-results /tmp|--from-results needs --preset with a figure"
  "--set model=random_weights --init-std 200|--init-std: 200 is out of range"
  "--set model=random_weights --alpha 0.3|--alpha: applies to --model parameter_free only"
  "--n 0x10|--n: '0x10' is not a decimal number"
  "--no-such-option|--no-such-option"
  "--screenshot --exit-when-done|--screenshot needs a value, got the flag '--exit-when-done'")
foreach(case ${CASES})
  string(FIND "${case}" "|" bar)
  string(SUBSTRING "${case}" 0 ${bar} cmdline)
  math(EXPR after "${bar} + 1")
  string(SUBSTRING "${case}" ${after} -1 expect)
  separate_arguments(parts UNIX_COMMAND "${cmdline}")
  execute_process(COMMAND ${APP} ${parts} RESULT_VARIABLE code ERROR_VARIABLE err OUTPUT_QUIET)
  if(NOT code EQUAL 2)
    message(FATAL_ERROR "maskscope ${cmdline}: exit ${code}, expected 2\n${err}")
  endif()
  string(FIND "${err}" "${expect}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "maskscope ${cmdline}: message lacks '${expect}':\n${err}")
  endif()
endforeach()
list(LENGTH CASES count)
message(STATUS "${count} bad command lines refused with exit 2 and a message naming the option")
