// Reading and writing safetensors files (safetensors.hpp), with nlohmann-json for the header.
#include "core/formats/safetensors.hpp"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>

#include "core/formats/atomic_file.hpp"
#include "core/formats/npy.hpp"
#include "core/model/input_file.hpp"

namespace maskscope {

static_assert(std::endian::native == std::endian::little, "safetensors are little-endian; so is every target");

namespace {

[[noreturn]] void fail(const std::string& name, const std::string& why) {
  throw SafetensorsError(printable(name, 200) + ": " + why);
}

std::string tensor_label(const std::string& tensor) { return "tensor '" + printable(tensor, 120) + "'"; }

std::size_t dtype_bytes(SafetensorsDtype t) { return t == SafetensorsDtype::f32 ? 4 : 2; }

// Index `flat` of `shape` as "[i, j, k]" (messages name the first bad element as a reader indexes it).
std::string index_text(const std::vector<std::int64_t>& shape, std::size_t flat) {
  if (shape.empty()) return "[]";
  std::vector<std::int64_t> at(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    const auto extent = std::uint64_t(std::max<std::int64_t>(shape[k], 1));
    at[k] = std::int64_t(flat % extent);
    flat /= extent;
  }
  std::string out = "[";
  for (std::size_t k = 0; k < at.size(); ++k) out += (k ? ", " : "") + std::to_string(at[k]);
  return out + "]";
}

// The first non-finite value of a tensor, or npos.
std::size_t first_non_finite(const std::vector<float>& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) return i;
  return std::size_t(-1);
}

std::string non_finite_message(const std::string& tensor, const std::vector<std::int64_t>& shape,
                               const std::vector<float>& v, std::size_t at) {
  return tensor_label(tensor) + " holds a non-finite value (" + std::to_string(v[at]) + ") at index " +
         index_text(shape, at) + " (flat " + std::to_string(at) + "); every value must be finite";
}

// Converts `count` elements of `type` at `src` into `out`.
void convert(SafetensorsDtype type, const unsigned char* src, std::size_t count, float* out) {
  switch (type) {
    case SafetensorsDtype::f32: std::memcpy(out, src, count * 4); break;
    case SafetensorsDtype::f16:
      for (std::size_t i = 0; i < count; ++i) {
        std::uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        out[i] = half_to_float(h);
      }
      break;
    case SafetensorsDtype::bf16:
      for (std::size_t i = 0; i < count; ++i) {
        std::uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        out[i] = bfloat16_to_float(h);
      }
      break;
  }
}

// The header length of the first 8 bytes, checked against the file.
std::uint64_t header_length(std::string_view first8, std::uint64_t file_bytes, const std::string& name) {
  if (file_bytes < 8 || first8.size() < 8)
    fail(name, "is " + std::to_string(file_bytes) +
                   " bytes, too short for a safetensors file (8 bytes of header length, then the JSON header)");
  std::uint64_t n = 0;
  std::memcpy(&n, first8.data(), 8);
  if (n < 2 || n > kMaxSafetensorsHeaderBytes)
    fail(name, "its header length " + std::to_string(n) + " is not in [2, " +
                   std::to_string(kMaxSafetensorsHeaderBytes) + "] bytes: not a safetensors file, or a corrupt one");
  if (n > file_bytes - 8)
    fail(name, "is truncated: its header says " + std::to_string(n) + " bytes of JSON but the file has " +
                   std::to_string(file_bytes - 8) + " after the length");
  return n;
}

// Reads `size` bytes at `offset` of `fd` into `out`.
void read_at(int fd, std::uint64_t offset, std::size_t size, unsigned char* out, const std::string& name) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t r = ::pread(fd, out + got, size - got, off_t(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(name, std::string("cannot be read (") + std::strerror(errno) + ")");
    }
    if (r == 0) fail(name, "is truncated: it ended while it was read (did it change?)");
    got += std::size_t(r);
  }
}

struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};

// Reads every tensor described by `h` through `read(offset, size, out)` (offsets from the file's start).
template <class Read>
SafeTensorsFile read_tensors(const SafeTensorsHeader& h, const std::function<bool(const std::string&)>& skip,
                             Read&& read) {
  SafeTensorsFile file;
  file.metadata = h.metadata;
  std::vector<unsigned char> buffer;
  constexpr std::size_t kChunk = std::size_t(1) << 24;  // bytes per read: a 2-byte dtype is converted in pieces
  for (const SafeTensorInfo& info : h.tensors) {
    SafeTensor t;
    t.name = info.name;
    t.shape = info.shape;
    if (!(skip && skip(info.name))) {
      t.data.resize(info.elements);
      const std::size_t width = dtype_bytes(info.dtype);
      for (std::size_t first = 0; first < info.elements;) {
        const std::size_t count = std::min(info.elements - first, kChunk / width);
        if (info.dtype == SafetensorsDtype::f32) {
          read(h.data_start + info.begin + first * 4, count * 4,
               reinterpret_cast<unsigned char*>(t.data.data() + first));
        } else {
          buffer.resize(count * width);
          read(h.data_start + info.begin + first * width, count * width, buffer.data());
          convert(info.dtype, buffer.data(), count, t.data.data() + first);
        }
        first += count;
      }
      if (const std::size_t at = first_non_finite(t.data); at != std::size_t(-1))
        throw SafetensorsError(non_finite_message(info.name, info.shape, t.data, at));
    }
    file.tensors.push_back(std::move(t));
  }
  return file;
}

// The header of an open file of `size` bytes.
SafeTensorsHeader header_of(int fd, std::uint64_t size, const std::string& path) {
  std::string first(8, '\0');
  if (size >= 8) read_at(fd, 0, 8, reinterpret_cast<unsigned char*>(first.data()), path);
  const std::uint64_t n = header_length(first, size, path);
  first.resize(8 + std::size_t(n));
  read_at(fd, 8, std::size_t(n), reinterpret_cast<unsigned char*>(first.data() + 8), path);
  return parse_safetensors_header(first, size, path);
}

void check_memory(const SafeTensorsHeader& h, const std::function<bool(const std::string&)>& skip,
                  std::uint64_t max_memory_bytes, const std::string& name) {
  std::uint64_t bytes = 0;
  for (const SafeTensorInfo& t : h.tensors)
    if (!(skip && skip(t.name))) bytes += std::uint64_t(t.elements) * 4;
  if (bytes > max_memory_bytes)
    fail(name, "its tensors need " + std::to_string(bytes) + " bytes as float, over the limit of " +
                   byte_size_text(max_memory_bytes));
}

}  // namespace

std::size_t SafeTensor::elements() const {
  std::size_t e = 1;
  for (const std::int64_t s : shape) e *= std::size_t(s);
  return e;
}

const SafeTensor* SafeTensorsFile::find(std::string_view name) const {
  for (const SafeTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

float bfloat16_to_float(std::uint16_t b) { return std::bit_cast<float>(std::uint32_t(b) << 16); }

SafeTensorsHeader parse_safetensors_header(std::string_view bytes, std::uint64_t file_bytes, const std::string& name) {
  const std::uint64_t n = header_length(bytes, file_bytes, name);
  if (bytes.size() < 8 + n) fail(name, "is truncated inside its JSON header");
  const std::string_view text = bytes.substr(8, std::size_t(n));
  const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    fail(name, "its header is not a JSON object (a corrupt file, or not safetensors)");
  SafeTensorsHeader h;
  h.data_start = 8 + n;
  const std::uint64_t data_bytes = file_bytes - h.data_start;
  for (const auto& [key, value] : j.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) fail(name, "its __metadata__ is not an object of strings");
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string()) fail(name, "its __metadata__ '" + printable(mk) + "' is not a string");
        h.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    const std::string label = tensor_label(key);
    if (!value.is_object() || !value.contains("dtype") || !value.contains("shape") || !value.contains("data_offsets"))
      fail(name, label + " lacks dtype, shape or data_offsets");
    SafeTensorInfo t;
    t.name = key;
    const nlohmann::json& dtype = value["dtype"];
    const std::string dt = dtype.is_string() ? dtype.get<std::string>() : "?";
    if (dt == "F32") t.dtype = SafetensorsDtype::f32;
    else if (dt == "F16") t.dtype = SafetensorsDtype::f16;
    else if (dt == "BF16") t.dtype = SafetensorsDtype::bf16;
    else fail(name, label + " has dtype '" + printable(dt) + "'; maskscope reads F32, F16 and BF16");
    const nlohmann::json& shape = value["shape"];
    if (!shape.is_array() || shape.size() > 8) fail(name, label + ": shape is not a list of at most 8 sizes");
    std::uint64_t elements = 1;
    for (const auto& s : shape) {
      if (!s.is_number_unsigned() || s.get<std::uint64_t>() > (1ull << 40))
        fail(name, label + ": shape holds '" + printable(s.dump()) + "', not a size in [0, 2^40]");
      t.shape.push_back(std::int64_t(s.get<std::uint64_t>()));
      elements = s.get<std::uint64_t>() == 0 ? 0 : elements * s.get<std::uint64_t>();
      if (elements > (1ull << 40)) fail(name, label + ": the shape has more than 2^40 elements");
    }
    t.elements = std::size_t(elements);
    const nlohmann::json& off = value["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      fail(name, label + ": data_offsets is not [begin, end] with whole numbers");
    t.begin = off[0].get<std::uint64_t>();
    t.end = off[1].get<std::uint64_t>();
    if (t.end < t.begin || t.end > data_bytes)
      fail(name, label + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                     "] are out of range; the data has " + std::to_string(data_bytes) +
                     " bytes (a truncated or corrupt file)");
    if (t.end - t.begin != elements * dtype_bytes(t.dtype))
      fail(name, label + ": data_offsets span " + std::to_string(t.end - t.begin) + " bytes, its shape and dtype " +
                     std::to_string(elements * dtype_bytes(t.dtype)));
    h.tensors.push_back(std::move(t));
  }
  std::sort(h.tensors.begin(), h.tensors.end(), [](const SafeTensorInfo& a, const SafeTensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  // The tensors tile the data exactly, as the format requires: no overlap, no hole, nothing after the last.
  std::uint64_t at = 0;
  for (const SafeTensorInfo& t : h.tensors) {
    if (t.begin < at)
      fail(name, tensor_label(t.name) + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                     "] overlap the tensor before it (which ends at " + std::to_string(at) + ")");
    if (t.begin > at)
      fail(name, tensor_label(t.name) + ": data_offsets begin at " + std::to_string(t.begin) + ", leaving bytes " +
                     std::to_string(at) + ".." + std::to_string(t.begin) + " to no tensor");
    at = t.end;
  }
  if (at != data_bytes)
    fail(name, "its tensors end at byte " + std::to_string(at) + " of " + std::to_string(data_bytes) +
                   " data bytes: the file has bytes that belong to no tensor");
  return h;
}

std::string safetensors_bytes(const SafeTensorsFile& file) {
  nlohmann::json header = nlohmann::json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  std::uint64_t at = 0;
  std::set<std::string> names;
  for (const SafeTensor& t : file.tensors) {
    if (t.name.empty() || t.name == "__metadata__" || !names.insert(t.name).second)
      throw SafetensorsError(tensor_label(t.name) + ": empty, reserved or duplicate name");
    if (t.data.size() != t.elements())
      throw SafetensorsError(tensor_label(t.name) + " has " + std::to_string(t.data.size()) + " values, its shape " +
                             std::to_string(t.elements()));
    if (const std::size_t bad = first_non_finite(t.data); bad != std::size_t(-1))
      throw SafetensorsError(non_finite_message(t.name, t.shape, t.data, bad));
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {at, at + t.data.size() * 4}}};
    at += t.data.size() * 4;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const std::uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  out += text;
  out.reserve(out.size() + at);
  for (const SafeTensor& t : file.tensors) out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * 4);
  return out;
}

bool write_safetensors(const std::string& path, const SafeTensorsFile& file, std::string& error) {
  try {
    // The bytes in memory first: a checkpoint is at most a few hundred MB, and a refused tensor leaves no file.
    return write_file_atomic(path, safetensors_bytes(file), error);
  } catch (const SafetensorsError& e) {
    error = printable(path, 200) + ": " + e.what();
    return false;
  }
}

SafeTensorsFile parse_safetensors(std::string_view bytes, const std::string& name,
                                  const std::function<bool(const std::string&)>& skip) {
  const SafeTensorsHeader h = parse_safetensors_header(bytes, bytes.size(), name);
  try {
    return read_tensors(h, skip, [&](std::uint64_t offset, std::size_t size, unsigned char* out) {
      std::memcpy(out, bytes.data() + offset, size);
    });
  } catch (const SafetensorsError& e) { fail(name, e.what()); }
}

SafeTensorsHeader read_safetensors_header(const std::string& path) {
  std::uint64_t size = 0;
  const Fd f{open_input_file(path, kMaxSafetensorsFileBytes, "the safetensors file", size)};
  return header_of(f.fd, size, path);
}

SafeTensorsFile read_safetensors(const std::string& path, const std::function<bool(const std::string&)>& skip,
                                 std::uint64_t max_memory_bytes) {
  std::uint64_t size = 0;
  const Fd f{open_input_file(path, kMaxSafetensorsFileBytes, "the safetensors file", size)};
  const SafeTensorsHeader h = header_of(f.fd, size, path);
  check_memory(h, skip, max_memory_bytes, path);
  try {
    return read_tensors(h, skip, [&](std::uint64_t offset, std::size_t count, unsigned char* out) {
      read_at(f.fd, offset, count, out, path);
    });
  } catch (const SafetensorsError& e) {
    const std::string what = e.what();
    if (what.rfind(printable(path, 200) + ":", 0) == 0) throw;  // read_at named the file already
    fail(path, what);
  }
}

}  // namespace maskscope
