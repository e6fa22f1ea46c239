// The parts of the extension module _maskscope, one file each, registered by module.cpp.
#pragma once

#include <pybind11/pybind11.h>

namespace maskscope::py_module {

void bind_snapshot(pybind11::module_& m);  // bind_snapshot.cpp: the result class
void bind_run(pybind11::module_& m);       // bind_run.cpp: run
void bind_sweep(pybind11::module_& m);     // bind_sweep.cpp: sweep
void bind_analyze(pybind11::module_& m);   // bind_analyze.cpp: analyze, analyze_folder
void bind_train(pybind11::module_& m);     // bind_train.cpp: train

}  // namespace maskscope::py_module
