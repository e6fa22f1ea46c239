// Reading, writing and merging .msum files (partial_sums.hpp).
#include "core/run/partial_sums.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/formats/atomic_file.hpp"
#include "core/formats/result_json.hpp"
#include "core/model/checksum.hpp"
#include "core/run/runner.hpp"
#include "core/model/version.hpp"

namespace maskscope {

namespace {

constexpr const char* kMagic = "MASKSCOPE-SUMS 1\n";
// What else must match for the bits to match: the random streams and the accumulation.
// (Since files of the first layout: packed maps, blocks of about 1e7 multiply-adds, segments of
// bit_ceil(values per layer / 512) blocks; version 0.2.0: v first in the reduced basis, lane trees
// ((0+4) + (1+5)) + ((2+6) + (3+7)), segments of bit_ceil(values per layer / 256) blocks; version
// 0.3.0: fused multiply-adds in the lane kernel's dot products, mix and exponentials; version 0.4.0: a
// fixed random-weight network's blocks are batches of fixed_batch_samples (Eigen's products); issue 48:
// pair comparisons tie within 2^-17 of their row's largest value, docs/model.md section 4.1.)
constexpr const char* kNumerics =
    "philox4x32-10 box-muller; reduced basis v first; lane trees 04-15-26-37; "
    "lane fma in dots, mix, exp; packed maps; "
    "blocks of 1e7, fixed random-weight networks in batches, segments of 256 values per layer a block, "
    "exact 192-bit 2^-100; ties within 2^-17 of the row";

std::string header_json(const PartialSums& p) {
  const SampleGrid g = sample_grid(p.settings);
  nlohmann::json h = {
      {"settings", settings_to_json(p.settings)},
      {"grid", {{"block_size", g.block_size}, {"segment_blocks", g.segment_blocks}, {"segments", g.segments()}}},
      {"segments", {p.segments.begin, p.segments.end}},
      {"sample_range", {p.first_sample, p.end_sample}},
      {"count", p.exact.count()},
      {"values", p.exact.size()},
      {"elapsed_s", p.elapsed_s},
      {"maskscope_version", p.version},
      {"kernel", p.kernel},
      {"numerics", kNumerics}};
  return h.dump() + "\n";
}

struct Header {
  PartialSums p;
  std::size_t values = 0;
  std::int64_t count = 0;
  std::size_t header_bytes = 0;  // magic + JSON line
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

Header parse_header(const std::string& path, std::ifstream& in) {
  Header h;
  std::string magic(std::strlen(kMagic), '\0');
  in.read(magic.data(), std::streamsize(magic.size()));
  if (!in || magic != kMagic)
    fail(path, "not a maskscope partial-sums file (" + std::string(kPartialSumsExtension) + ")");
  std::string line;
  if (!std::getline(in, line)) fail(path, "truncated: the header line is missing");
  h.header_bytes = magic.size() + line.size() + 1;
  nlohmann::json j;
  std::string numerics;
  try {
    j = nlohmann::json::parse(line);
    numerics = j.at("numerics").get<std::string>();
    Settings s;
    settings_from_json(j.at("settings"), s, "settings");
    h.p.settings = s;
    h.p.segments = {j.at("segments").at(0).get<std::int64_t>(), j.at("segments").at(1).get<std::int64_t>()};
    h.p.first_sample = j.at("sample_range").at(0).get<std::int64_t>();
    h.p.end_sample = j.at("sample_range").at(1).get<std::int64_t>();
    h.p.elapsed_s = j.value("elapsed_s", 0.0);
    h.p.version = j.at("maskscope_version").get<std::string>();
    h.p.kernel = j.value("kernel", std::string());
    h.values = j.at("values").get<std::size_t>();
    h.count = j.at("count").get<std::int64_t>();
  } catch (const std::exception& e) { fail(path, std::string("corrupt header: ") + e.what()); }
  if (numerics != kNumerics)
    fail(path, "computed with different numerics ('" + numerics + "'; this maskscope: '" + kNumerics + "')");
  const SampleGrid g = sample_grid(h.p.settings);
  const auto& r = h.p.segments;
  if (r.begin < 0 || r.begin >= r.end || r.end > g.segments() || h.p.first_sample != g.first_sample(r.begin) ||
      h.p.end_sample != g.first_sample(r.end) || h.count != h.p.end_sample - h.p.first_sample)
    fail(path, "corrupt header: its segment range, sample range and count do not agree with its settings");
  if (h.values != accum_layout(h.p.settings).total())
    fail(path, "corrupt header: " + std::to_string(h.values) + " values, but these settings have " +
                   std::to_string(accum_layout(h.p.settings).total()));
  return h;
}

std::size_t payload_bytes(std::size_t values) { return values * ExactSums::kWordsPerValue * 8 + values; }

}  // namespace

bool write_partial_sums(const std::string& path, const PartialSums& p, std::string& error) {
  static_assert(std::endian::native == std::endian::little, "the .msum format is little-endian");
  std::string data = kMagic + header_json(p);
  const std::size_t at = data.size();
  const std::size_t words = p.exact.word_count();
  data.resize(at + payload_bytes(p.exact.size()) + 8);
  std::memcpy(&data[at], p.exact.words(), words * 8);
  std::memcpy(&data[at + words * 8], p.exact.invalid().data(), p.exact.size());
  const std::uint64_t sum = fnv1a64(std::string_view(data.data(), data.size() - 8));
  std::memcpy(&data[data.size() - 8], &sum, 8);
  return write_file_atomic(path, data, error);
}

// The file's size against its header's: a truncated file is named before anything is read.
static void check_size(const std::string& path, std::ifstream& in, const Header& h, std::uint64_t& size) {
  in.seekg(0, std::ios::end);
  size = std::uint64_t(in.tellg());
  const std::uint64_t expected = h.header_bytes + payload_bytes(h.values) + 8;
  if (size != expected)
    fail(path, (size < expected ? "truncated: " : "corrupt: ") + std::to_string(size) + " bytes, expected " +
                   std::to_string(expected) + " for " + std::to_string(h.values) + " values");
}

// Opens `path` into `in`, reads its header and checks the file's size against it.
static Header open_checked(const std::string& path, std::ifstream& in, std::uint64_t& size) {
  in.open(path, std::ios::binary);
  if (!in) fail(path, "cannot be opened");
  Header h = parse_header(path, in);
  check_size(path, in, h, size);
  return h;
}

PartialSums read_partial_sums_header(const std::string& path) {
  std::ifstream in;
  std::uint64_t size = 0;
  return open_checked(path, in, size).p;
}

PartialSums read_partial_sums(const std::string& path) {
  std::ifstream in;
  std::uint64_t size = 0;
  Header h = open_checked(path, in, size);
  std::string data(size, '\0');
  in.seekg(0);
  in.read(data.data(), std::streamsize(size));
  if (!in) fail(path, "read error");
  std::uint64_t stored;
  std::memcpy(&stored, &data[size - 8], 8);
  if (fnv1a64(std::string_view(data.data(), size - 8)) != stored) fail(path, "checksum mismatch: the file is corrupt");
  h.p.exact = ExactSums(h.values);
  std::memcpy(h.p.exact.words(), &data[h.header_bytes], h.p.exact.word_count() * 8);
  std::memcpy(h.p.exact.invalid().data(), &data[h.header_bytes + h.p.exact.word_count() * 8], h.values);
  h.p.exact.set_count(h.count);
  return h.p;
}

PartialSums merge_partial_sums_files(const std::vector<std::string>& paths, bool require_complete) {
  if (paths.empty()) throw std::runtime_error("no files to merge");
  std::vector<std::pair<PartialSums, std::string>> heads;
  for (const auto& path : paths) heads.emplace_back(read_partial_sums_header(path), path);
  const auto& [first, first_path] = heads.front();
  for (const auto& [h, path] : heads) {
    if (h.version != first.version)
      throw std::runtime_error(path + ": computed by maskscope " + h.version + ", but " + first_path + " by " +
                               first.version + "; the parts of one result must come from one version");
    if (h.kernel != first.kernel)
      throw std::runtime_error(path + ": computed by the '" + h.kernel + "' kernel, but " + first_path + " by '" +
                               first.kernel +
                               "' (processors of different kinds round differently); compute the parts "
                               "of one result on processors of one kind");
    if (!h.settings.same_simulation(first.settings)) {
      std::string diff;
      const nlohmann::json a = settings_to_json(first.settings), b = settings_to_json(h.settings);
      for (auto it = a.begin(); it != a.end(); ++it)
        if (it.key() != "threads" && b.contains(it.key()) && b[it.key()] != it.value())
          diff += (diff.empty() ? "" : ", ") + it.key() + " " + b[it.key()].dump() + " (" + first_path + ": " +
                  it.value().dump() + ")";
      throw std::runtime_error(path + ": different settings from " + first_path + ": " + diff);
    }
  }
  std::sort(heads.begin(), heads.end(),
            [](const auto& a, const auto& b) { return a.first.segments.begin < b.first.segments.begin; });
  const SampleGrid g = sample_grid(first.settings);
  auto samples = [&](std::int64_t a, std::int64_t b) {
    return "samples [" + std::to_string(g.first_sample(a)) + ", " + std::to_string(g.first_sample(b)) + ")";
  };
  for (std::size_t i = 1; i < heads.size(); ++i) {
    const auto &prev = heads[i - 1], &cur = heads[i];
    if (cur.first.segments.begin < prev.first.segments.end)
      throw std::runtime_error(cur.second + " (" + samples(cur.first.segments.begin, cur.first.segments.end) +
                               ") overlaps " + prev.second + " (" +
                               samples(prev.first.segments.begin, prev.first.segments.end) + ")");
    if (cur.first.segments.begin > prev.first.segments.end)
      throw std::runtime_error("missing " + samples(prev.first.segments.end, cur.first.segments.begin) + ": between " +
                               prev.second + " and " + cur.second + " (a shard not computed or not given?)");
  }
  const SegmentRange all{heads.front().first.segments.begin, heads.back().first.segments.end};
  if (require_complete && (all.begin != 0 || all.end != g.segments()))
    throw std::runtime_error("missing " + (all.begin != 0 ? samples(0, all.begin) : samples(all.end, g.segments())) +
                             " of the run's " + std::to_string(g.samples) + " (a shard not computed or not given?)");
  PartialSums out;
  out.settings = first.settings;
  out.segments = all;
  out.first_sample = g.first_sample(all.begin);
  out.end_sample = g.first_sample(all.end);
  out.version = first.version;
  out.kernel = first.kernel;
  out.exact = ExactSums(accum_layout(first.settings).total());
  for (const auto& [h, path] : heads) {
    PartialSums p = read_partial_sums(path);
    out.exact.add(p.exact);
    out.elapsed_s += p.elapsed_s;
  }
  return out;
}

std::vector<ResultFiles> scan_results_folder(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw std::runtime_error(folder + ": not a folder");
  std::vector<std::string> paths;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.path().extension() == kPartialSumsExtension) paths.push_back(e.path().string());
  if (ec) throw std::runtime_error(folder + ": cannot be read (" + ec.message() + ")");
  std::sort(paths.begin(), paths.end());
  std::vector<ResultFiles> groups;
  for (const auto& path : paths) {
    const PartialSums h = read_partial_sums_header(path);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const ResultFiles& g) { return g.settings.same_simulation(h.settings); });
    if (it == groups.end()) groups.push_back({h.settings, {path}});
    else it->files.push_back(path);
  }
  return groups;
}

Snapshot snapshot_of(const PartialSums& p) {
  RunMoments m(p.exact.size());
  p.exact.moments(m, 0);
  Snapshot snap = make_snapshot(p.settings, m, key_ranges(p.settings));
  snap.elapsed_s = p.elapsed_s;
  snap.samples_per_s = p.elapsed_s > 0 ? double(snap.samples_done) / p.elapsed_s : 0.0;
  snap.finished = p.complete();
  snap.cancelled = false;
  return snap;
}

}  // namespace maskscope
