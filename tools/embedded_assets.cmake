# The files embedded into the binary (shaders, colormap tables, shipped presets), as one list for
# the app and the fuzz build. maskscope_embed_assets(OUT ROOT) adds the custom command that writes
# OUT (a C++ source) from them through tools/embed.cmake.
set(MASKSCOPE_PRESET_NAMES behind-rope-fig2 behind-rope-fig4 behind-rope-fig7 behind-rope-fig10 ln-recency-fig1
                           ln-recency-fig2 ln-recency-fig5 zuo-fig1 zuo-table4 zuo-table5 zuo-table6
                           zuo-embedding-scale leakage-behind-rope leakage-ln-recency zuo-fig3-layer-lines
                           zuo-fig11-norms ruscio-fig1-bins sweep-ln-recency-sec3 sweep-ln-recency-fig5
                           sweep-ln-recency-fig6 sweep-ln-recency-phase sweep-zuo-table5 sweep-behind-rope-fig7
                           sweep-ruscio-causal-bidirectional zuo-fig2-histograms zuo-fig5-learned-positions
                           zuo-fig8-probes ruscio-first-token zuo-table1-tasks zuo-table6-tasks trained-cosine-maps
                           trained-norms trained-layer-lines trained-adjacency-histograms trained-sink
                           trained-probes)
# Shipped lessons (assets/lessons), listed in the Lessons menu in this order.
set(MASKSCOPE_LESSON_NAMES where-position-comes-from layernorm-recency random-networks absolute-leakage
                           what-training-keeps)

# The custom command that writes OUT (a C++ source) from FILES as the string_views NAMES (tools/embed.cmake).
function(maskscope_embed_files out root files names comment)
  string(REPLACE ";" "|" files_arg "${files}")
  string(REPLACE ";" "|" names_arg "${names}")
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} "-DOUT=${out}" "-DFILES=${files_arg}" "-DNAMES=${names_arg}" -P ${root}/tools/embed.cmake
    DEPENDS ${files} ${root}/tools/embed.cmake
    COMMENT "${comment}"
    VERBATIM)
endfunction()

# Appends DIR/NAME.EXT to the list FILES_VAR and PREFIX_NAME (dashes as underscores: a C++ name) to
# NAMES_VAR, for each NAME after the first five arguments.
function(maskscope_add_embedded files_var names_var dir ext prefix)
  set(files ${${files_var}})
  set(names ${${names_var}})
  foreach(item ${ARGN})
    list(APPEND files ${dir}/${item}.${ext})
    string(REPLACE "-" "_" id ${item})
    list(APPEND names ${prefix}_${id})
  endforeach()
  set(${files_var} ${files} PARENT_SCOPE)
  set(${names_var} ${names} PARENT_SCOPE)
endfunction()

function(maskscope_embed_assets out root)
  set(files ${root}/shaders/heatmap.vert ${root}/shaders/heatmap.frag)
  set(names shader_heatmap_vert shader_heatmap_frag)
  maskscope_add_embedded(files names ${root}/assets/colormaps csv colormap rocket viridis magma rdbu coolwarm)
  # docs/model.md section 6, listed in the Presets menu
  maskscope_add_embedded(files names ${root}/assets/presets json preset ${MASKSCOPE_PRESET_NAMES})
  maskscope_add_embedded(files names ${root}/assets/lessons json lesson ${MASKSCOPE_LESSON_NAMES})
  maskscope_embed_files(${out} ${root} "${files}" "${names}" "Embedding shaders, colormaps, presets and lessons")
endfunction()

# Shipped token files (assets/tokens, written by tools/zuo_tasks.py), embedded into the core library so that
# `tokens builtin:NAME` works from any directory (core/model/token_file.hpp).
set(MASKSCOPE_TOKEN_FILES zuo-addition zuo-reversal zuo-indexing zuo-ordering)

function(maskscope_embed_tokens out root)
  set(files "")
  set(names "")
  maskscope_add_embedded(files names ${root}/assets/tokens txt tokens ${MASKSCOPE_TOKEN_FILES})
  maskscope_embed_files(${out} ${root} "${files}" "${names}" "Embedding token files")
endfunction()
