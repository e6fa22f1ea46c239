// A result as Python sees it: a Snapshot (shared, immutable) with the extra keys its front end's JSON adds,
// read as numbers, NumPy arrays and the CLI's JSON text. maskscope/_results.py builds Result and Layer on it.
#pragma once

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

#include <memory>

#include "core/stats/snapshot.hpp"

namespace maskscope::py_module {

struct PySnapshot {
  std::shared_ptr<const Snapshot> snap;
  nlohmann::json extra = nlohmann::json::object();  // merged over snapshot_to_json's keys (config, version, ...)

  // The JSON the CLI writes for this result (`run`'s or `analyze`'s), as text; maps = false without the maps
  // and vectors (snapshot_to_json), which PySnapshot's arrays() gives as NumPy arrays.
  std::string json_text(bool maps = true) const;
};

}  // namespace maskscope::py_module
