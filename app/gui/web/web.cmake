# The browser build of the window (issue 37): the same core and window sources compiled by Emscripten
# into build-web/site/ (index.html, maskscope.js, maskscope.wasm, maskscope.worker.js, maskscope.data).
# tools/web.sh fetches Dear ImGui's sources and configures this with emcmake; docs/web.md.
#
# What differs from the desktop build is here and in app/gui/web/: WebGL 2 (GLES 3.0) instead of
# OpenGL 3.3 through epoxy, Emscripten's GLFW 3, Dear ImGui compiled from its Debian source package,
# the simulation's threads as Web Workers (pthreads), figure PNGs drawn by the browser from the SVG,
# and exported files handed to the browser as downloads.
set(MASKSCOPE_IMGUI_DIR "" CACHE PATH "Dear ImGui 1.86 sources (imgui.cpp, backends/): tools/web.sh fetches them")
set(MASKSCOPE_WEB_INCLUDE "" CACHE PATH "Header-only dependencies for the browser build (nlohmann/, CLI/, stb_image_write.h)")
set(MASKSCOPE_WEB_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf" CACHE FILEPATH "The window's font")
set(MASKSCOPE_WEB_SITE "${PROJECT_BINARY_DIR}/site" CACHE PATH "The static folder the page is built into")
set(MASKSCOPE_WEB_SIMD ON CACHE BOOL "Compile the kernels' 8-lane vectors to wasm SIMD128 (else scalar)")
# OFF: the one-thread page (maskscope1.js, .wasm, .data) for servers without the headers that
# SharedArrayBuffer needs; index.html loads it where crossOriginIsolated is false. tools/web.sh builds
# both into the same folder (two build trees).
set(MASKSCOPE_WEB_THREADS ON CACHE BOOL "Web Workers sharing memory (-pthread); OFF: the one-thread page")
if(NOT EXISTS ${MASKSCOPE_IMGUI_DIR}/imgui.cpp OR NOT EXISTS ${MASKSCOPE_WEB_INCLUDE}/nlohmann/json.hpp
   OR NOT EXISTS ${MASKSCOPE_WEB_INCLUDE}/CLI/CLI.hpp)
  message(FATAL_ERROR "maskscope web: set MASKSCOPE_IMGUI_DIR and MASKSCOPE_WEB_INCLUDE (bash tools/web.sh does)")
endif()

set(MASKSCOPE_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
# No x86 clones in wasm: the kernels' portable path (docs/web.md says which kernel runs).
set(MASKSCOPE_TARGET_CLONES OFF)
# Every object shares memory with the Web Workers (-pthread; not in the one-thread page) and may throw
# (invalid settings are exceptions that the window turns into messages).
set(web_flags -fexceptions)
set(web_link_flags -fexceptions)
if(MASKSCOPE_WEB_THREADS)
  list(APPEND web_flags -pthread)
  list(APPEND web_link_flags -pthread)
endif()
if(MASKSCOPE_WEB_SIMD)
  list(APPEND web_flags -msimd128)
endif()
# The GCC-only warning switches of app/gui/CMakeLists.txt (-Wno-restrict, -Wno-maybe-uninitialized).
list(APPEND web_flags -Wno-unknown-warning-option)
list(APPEND web_flags -include ${PROJECT_SOURCE_DIR}/app/gui/web/libcxx_compat.hpp)
add_compile_options(${web_flags})
add_link_options(${web_link_flags})

if(MASKSCOPE_WEB_THREADS)
  set(THREADS_PREFER_PTHREAD_FLAG ON)
  find_package(Threads REQUIRED)
else()  # std::thread compiles (its start would fail): the core starts none there (core/model/threading.hpp)
  add_library(maskscope_web_no_threads INTERFACE)
  add_library(Threads::Threads ALIAS maskscope_web_no_threads)
endif()
add_library(maskscope_web_json INTERFACE)
target_include_directories(maskscope_web_json SYSTEM INTERFACE ${MASKSCOPE_WEB_INCLUDE})
add_library(nlohmann_json::nlohmann_json ALIAS maskscope_web_json)
# The window's command line (the page's link) is read by CLI11, header-only, as on the desktop.
add_library(maskscope_web_cli11 INTERFACE)
target_include_directories(maskscope_web_cli11 SYSTEM INTERFACE ${MASKSCOPE_WEB_INCLUDE})
add_library(CLI11::CLI11 ALIAS maskscope_web_cli11)

add_subdirectory(core)
# clang on wasm32 about the core, which is written for GCC on x86-64 Linux: GCC's per-function
# optimize("-ffp-contract=off") is unknown to clang (and moot: wasm has no fused multiply-add to contract
# into); the Linux-only memory paths are compiled out (unused parameters); 64-bit sizes narrow to wasm32's
# 32-bit size_t where files larger than the page's 2 GB memory would be refused anyway.
foreach(core_target maskscope_core maskscope_core_io)
  target_compile_options(${core_target} PRIVATE -Wno-unknown-attributes -Wno-unused-parameter
                                                -Wno-unused-const-variable -Wno-shorten-64-to-32
                                                -Wno-shift-count-overflow)
endforeach()

# Dear ImGui 1.86 with its GLFW and OpenGL 3 (GLES 3 here) back ends, from the source package.
add_library(maskscope_web_imgui STATIC
  ${MASKSCOPE_IMGUI_DIR}/imgui.cpp ${MASKSCOPE_IMGUI_DIR}/imgui_draw.cpp ${MASKSCOPE_IMGUI_DIR}/imgui_tables.cpp
  ${MASKSCOPE_IMGUI_DIR}/imgui_widgets.cpp ${MASKSCOPE_IMGUI_DIR}/backends/imgui_impl_glfw.cpp
  ${MASKSCOPE_IMGUI_DIR}/backends/imgui_impl_opengl3.cpp)
target_include_directories(maskscope_web_imgui SYSTEM PUBLIC ${MASKSCOPE_IMGUI_DIR} ${MASKSCOPE_WEB_INCLUDE})
target_compile_definitions(maskscope_web_imgui PUBLIC IMGUI_IMPL_OPENGL_ES3)
add_library(PkgConfig::IMGUI ALIAS maskscope_web_imgui)
foreach(lib GLFW EPOXY STB CAIRO)
  add_library(maskscope_web_${lib} INTERFACE)
  add_library(PkgConfig::${lib} ALIAS maskscope_web_${lib})
endforeach()
target_link_options(maskscope_web_GLFW INTERFACE -sUSE_GLFW=3)
target_include_directories(maskscope_web_STB SYSTEM INTERFACE ${MASKSCOPE_WEB_INCLUDE})

# The page's own sources and link flags, added to the window's executable by app/gui/CMakeLists.txt.
function(maskscope_web_app target)
  set(site ${MASKSCOPE_WEB_SITE})
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/app/gui/web/web_page.cpp
                                   ${PROJECT_SOURCE_DIR}/app/gui/web/stb_image_write_impl.cpp)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/app/gui)
  set_target_properties(${target} PROPERTIES SUFFIX ".js" RUNTIME_OUTPUT_DIRECTORY ${site})
  # Threads: the run's workers, its publisher and the picture builder are Web Workers started with
  # the page (a pool: a worker started later would wait for the main loop to yield). Memory grows
  # as the settings need (the window's budget is kWindowMemoryBudget).
  if(MASKSCOPE_WEB_THREADS)
    target_link_options(${target} PRIVATE -sPTHREAD_POOL_SIZE=16 -sDEFAULT_PTHREAD_STACK_SIZE=4MB
                                          # (Growth makes the JavaScript side's heap views slower; the simulation is all wasm.)
                                          -Wno-pthreads-mem-growth)
  else()
    set_target_properties(${target} PROPERTIES OUTPUT_NAME maskscope1)  # beside the threaded page's files
    # Its data package equals the threaded page's (tools/web.sh builds that first): index.html's locateFile
    # loads maskscope.data for both, so the copy goes (the build fails if the two ever differ).
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E compare_files ${site}/maskscope.data ${site}/maskscope1.data
      COMMAND ${CMAKE_COMMAND} -E rm ${site}/maskscope1.data
      VERBATIM)
  endif()
  target_link_options(${target} PRIVATE
    -sUSE_GLFW=3 -sMIN_WEBGL_VERSION=2 -sMAX_WEBGL_VERSION=2
    -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=256MB -sMAXIMUM_MEMORY=2GB
    -sEXPORTED_RUNTIME_METHODS=ccall,UTF8ToString,FS -sEXPORTED_FUNCTIONS=_main,_malloc,_free,_maskscope_web_state
    "--preload-file=${MASKSCOPE_WEB_FONT}@/fonts/DejaVuSans.ttf")
  # The static page beside the build's output.
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/app/gui/web/index.html ${site}/index.html
    VERBATIM)
endfunction()

add_subdirectory(app/gui)
