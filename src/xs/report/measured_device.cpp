// xstage report layer: the GPU a result file was measured on (see measured_device.hpp).
#include "xs/report/measured_device.hpp"

#include <fmt/format.h>

#include <cctype>

#include "xs/common/error.hpp"

namespace xs::report {
using nlohmann::json;

namespace {

std::string text_field(const json& device, const char* key, std::size_t index, const std::string& path) {
  const auto it = device.find(key);
  if (it == device.end() || it->is_null()) return "";
  if (!it->is_string())
    throw input_error(path, fmt::format("meta.devices[{}].{}: expected a string, found {}", index, key, it->type_name()));
  return it->get<std::string>();
}

}  // namespace

MeasuredDevice measured_device(const json& meta, const std::string& path) {
  MeasuredDevice out;
  if (!meta.is_object()) return out;
  const auto devices = meta.find("devices");
  if (devices == meta.end() || !devices->is_array() || devices->empty()) return out;
  std::size_t index = 0;
  if (const auto di = meta.find("device_index"); di != meta.end() && !di->is_null()) {
    if (!di->is_number_integer() || di->get<long long>() < 0 ||
        di->get<long long>() >= static_cast<long long>(devices->size()))
      throw input_error(path, fmt::format("meta.device_index: expected an index into meta.devices (0..{}), found {}",
                                          devices->size() - 1, di->dump()));
    index = di->get<std::size_t>();
  }
  const json& d = (*devices)[index];
  if (!d.is_object()) return out;
  out.name = text_field(d, "name", index, path);
  out.uuid = text_field(d, "uuid", index, path);
  return out;
}

std::string device_key(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace xs::report
