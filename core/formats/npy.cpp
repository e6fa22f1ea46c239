// .npy reading (mmap) and writing (npy.hpp).
#include "core/formats/npy.hpp"

#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/formats/atomic_file.hpp"
#include "core/model/checksum.hpp"
#include "core/model/input_file.hpp"

namespace maskscope {

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  std::uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      std::uint32_t m = man;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400) == 0);
      bits = sign | (std::uint32_t(127 - 15 - e) << 23) | ((m & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  return std::bit_cast<float>(bits);
}

std::string escape_bytes(std::string_view text) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto escape = [&](unsigned char c) {
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
      ++i;
      continue;
    }
    // A whole UTF-8 sequence (no overlong forms, surrogates or values past U+10FFFF) stays as it is.
    const std::size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool valid = len > 0 && i + len <= text.size();
    for (std::size_t k = 1; valid && k < len; ++k) valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (valid && len >= 3) {
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) ||
          (c == 0xf4 && c1 >= 0x90))
        valid = false;
    }
    if (!valid) {
      escape(c);
      ++i;
      continue;
    }
    out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

namespace {

// Every message quotes bytes of the file (its header) or of a manifest (the file's name): escaped.
[[noreturn]] void refuse(const std::string& path, const std::string& name, const std::string& what) {
  throw std::runtime_error(escape_bytes(path + ": array '" + name + "': " + what));
}

// The value of `key` in the header dict's text, e.g. 'descr': '<f4' -> <f4 (quotes removed).
std::string dict_value(const std::string& header, const std::string& key) {
  const auto at = header.find("'" + key + "'");
  if (at == std::string::npos) return "";
  auto colon = header.find(':', at);
  if (colon == std::string::npos) return "";
  std::size_t b = colon + 1;
  while (b < header.size() && header[b] == ' ') ++b;
  if (b >= header.size()) return "";
  if (header[b] == '\'') {
    const auto e = header.find('\'', b + 1);
    return e == std::string::npos ? "" : header.substr(b + 1, e - b - 1);
  }
  if (header[b] == '(') {
    const auto e = header.find(')', b);
    return e == std::string::npos ? "" : header.substr(b, e - b + 1);
  }
  auto e = header.find_first_of(",}", b);
  return header.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

}  // namespace

NpyArray::NpyArray(const void* data, NpyType type, std::vector<std::int64_t> shape, const std::string& name)
    : name_(name), type_(type), shape_(std::move(shape)), data_(static_cast<const unsigned char*>(data)) {
  elements_ = 1;
  for (std::int64_t v : shape_) elements_ *= std::size_t(v);
}

NpyArray::NpyArray(const std::string& path, const std::string& name) : path_(path), name_(name) {
  // Opened without blocking (a FIFO never hangs the analysis), a regular file, the size capped (input_file.hpp).
  std::uint64_t file_size = 0;
  int fd = -1;
  try {
    fd = open_input_file(path, kMaxTensorFileBytes, "array '" + name + "'", file_size);
  } catch (const InputFileError& e) { throw std::runtime_error(escape_bytes(e.what())); }
  const std::size_t size = std::size_t(file_size);
  if (size < 10) {
    ::close(fd);
    refuse(path, name, "truncated: " + std::to_string(size) + " bytes is shorter than the .npy preamble");
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) refuse(path, name, std::string("cannot be mapped (") + std::strerror(errno) + ")");
  map_ = map;
  map_bytes_ = size;
  const auto* p = static_cast<const unsigned char*>(map);
  try {
    if (std::memcmp(p, "\x93NUMPY", 6) != 0) refuse(path, name, "not a NumPy .npy file (no \\x93NUMPY magic)");
    const int major = p[6];
    std::size_t header_len, start;
    if (major == 1) {
      header_len = std::size_t(p[8]) | (std::size_t(p[9]) << 8);
      start = 10;
    } else if (major == 2 || major == 3) {
      if (size < 12) refuse(path, name, "truncated preamble");
      header_len =
          std::size_t(p[8]) | (std::size_t(p[9]) << 8) | (std::size_t(p[10]) << 16) | (std::size_t(p[11]) << 24);
      start = 12;
    } else {
      refuse(path, name, ".npy format version " + std::to_string(major) + " is not supported; expected 1, 2 or 3");
    }
    if (start + header_len > size) refuse(path, name, "truncated: the header runs past the end of the file");
    const std::string header(reinterpret_cast<const char*>(p + start), header_len);
    const std::string descr = dict_value(header, "descr"), fortran = dict_value(header, "fortran_order"),
                      shape = dict_value(header, "shape");
    if (descr == "<f2") type_ = NpyType::f16;
    else if (descr == "<f4") type_ = NpyType::f32;
    else if (descr == "<f8") type_ = NpyType::f64;
    else
      refuse(path, name,
             "dtype '" + descr +
                 "' is not supported; expected little-endian float16, float32 or float64 ('<f2', '<f4', '<f8')");
    if (fortran != "False")
      refuse(path, name, "Fortran order is not supported; expected C order (np.ascontiguousarray)");
    if (shape.empty() || shape.front() != '(') refuse(path, name, "corrupt header: no shape");
    elements_ = 1;
    std::size_t i = 1;
    while (i < shape.size() && shape[i] != ')') {
      while (i < shape.size() && (shape[i] == ' ' || shape[i] == ',')) ++i;
      if (i >= shape.size() || shape[i] == ')') break;
      std::size_t used = 0;
      long long v = 0;
      try {
        v = std::stoll(shape.substr(i), &used);
      } catch (const std::exception&) { refuse(path, name, "corrupt header: shape " + shape); }
      if (v < 0 || used == 0) refuse(path, name, "corrupt header: shape " + shape);
      shape_.push_back(v);
      // Element counts stay below SIZE_MAX / 16, so the byte count and the file offset below cannot overflow
      // (size_t is 32 bits in the browser build).
      constexpr std::size_t cap = std::numeric_limits<std::size_t>::max() / 16;
      if (v != 0 && (static_cast<unsigned long long>(v) > cap || elements_ > cap / std::size_t(v)))
        refuse(path, name, "shape " + shape + " is too large");
      elements_ *= std::size_t(v);
      i += used;
    }
    const std::size_t item = type_ == NpyType::f16 ? 2 : type_ == NpyType::f32 ? 4 : 8;  // a file has no bf16
    const std::size_t expected = start + header_len + elements_ * item;
    if (size != expected)
      refuse(path, name,
             (size < expected ? "truncated: " : "corrupt: ") + std::to_string(size) + " bytes, expected " +
                 std::to_string(expected) + " for shape " + shape + " of " + descr);
    data_ = p + start + header_len;
  } catch (...) {
    ::munmap(map_, map_bytes_);
    map_ = nullptr;
    throw;
  }
}

NpyArray::~NpyArray() {
  if (map_) ::munmap(map_, map_bytes_);
}

void NpyArray::read(std::size_t first, std::size_t count, float* out) const {
  switch (type_) {
    case NpyType::f16:
      for (std::size_t i = 0; i < count; ++i) {
        std::uint16_t h;
        std::memcpy(&h, data_ + 2 * (first + i), 2);
        out[i] = half_to_float(h);
      }
      break;
    case NpyType::bf16:  // bfloat16 is the upper half of a float32: exact
      for (std::size_t i = 0; i < count; ++i) {
        std::uint16_t h;
        std::memcpy(&h, data_ + 2 * (first + i), 2);
        const std::uint32_t bits = std::uint32_t(h) << 16;
        std::memcpy(&out[i], &bits, 4);
      }
      break;
    case NpyType::f32: std::memcpy(out, data_ + 4 * first, 4 * count); break;
    case NpyType::f64:
      for (std::size_t i = 0; i < count; ++i) {
        double v;
        std::memcpy(&v, data_ + 8 * (first + i), 8);
        out[i] = static_cast<float>(v);
      }
      break;
  }
}

bool write_npy_f32(const std::string& path, const std::vector<std::int64_t>& shape, const float* data,
                   std::string& error, NpyWritten* written) {
  std::string dims;
  std::size_t elements = 1;
  for (auto v : shape) {
    dims += std::to_string(v) + ", ";
    elements *= std::size_t(v);
  }
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string head = "\x93NUMPY";
  head += char(1);
  head += char(0);
  head += char(header.size() & 0xff);
  head += char((header.size() >> 8) & 0xff);
  head += header;
  // Header and values straight to the file (no copy of the values), and their size and FNV-1a on the way.
  const bool ok = write_atomically(
      path,
      [&](int fd) {
        std::string why = write_all(fd, head.data(), head.size(), path);
        if (why.empty()) why = write_all(fd, data, 4 * elements, path);
        return why;
      },
      error);
  if (ok && written) {
    written->bytes = head.size() + 4 * elements;
    written->fnv1a = fnv1a64(data, 4 * elements, fnv1a64(head.data(), head.size()));
  }
  return ok;
}

}  // namespace maskscope
