#include "common/json_fields.h"

namespace ptxbench {

namespace detail {

void rethrow_in_field(const std::string& key) {
  try {
    throw;
  } catch (const JsonFieldError& e) {
    std::string path = e.path().empty() ? key : (e.path()[0] == '[' ? key + e.path() : key + "." + e.path());
    throw JsonFieldError(path, e.reason());
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();  // "[json.exception.type_error.302] type must be number, but is string"
    if (auto close = what.find("] "); what.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
      what = what.substr(close + 2);
    throw JsonFieldError(key, what);
  } catch (const Error& e) {  // a bad enum name, a bad value
    throw JsonFieldError(key, JsonChecker::message_of(e));
  }
}

}  // namespace detail

void require_json_object(const ordered_json& j) {
  if (!j.is_object()) throw JsonFieldError("", std::string("expected an object, got ") + j.type_name());
}

void check_schema(const ordered_json& j, const char* schema, int max_version, const char* what) {
  std::optional<std::string> name;
  read_field(j, "schema", name);
  if (name && *name != schema) throw JsonFieldError("schema", "'" + *name + "' is not " + what + " (" + schema + ")");
  int version = 1;
  read_field(j, "schema_version", version);
  if (version < 1 || version > max_version)
    throw JsonFieldError("schema_version", std::to_string(version) + " is not a version this ptxbench reads (1 to " +
                                               std::to_string(max_version) + ")");
}

}  // namespace ptxbench
