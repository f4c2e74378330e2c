// One list of fields for both directions (common/json_fields.h): what a struct's json_fields writes
// reads back; a field written only on a condition is still read; a part kept among the document's
// own keys is present only when one of its keys is; errors name the field. And the enum tables
// (common/enum_names.h): one table gives the name, the view of it and the parse.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/enum_names.h"
#include "common/error.h"
#include "common/json_fields.h"

namespace ptxbench {
namespace {

enum class Shade { light, dark };
constexpr EnumName<Shade> kShades[] = {{Shade::light, "light"}, {Shade::dark, "dark"}};
std::string to_string(Shade s) { return enum_name(kShades, s); }
Shade parse_shade(std::string_view text) { return parse_enum(kShades, text, "shade"); }

struct Extent {
  int width = 0;
  int height = 0;
};

struct Swatch {
  std::string name;
  Shade shade = Shade::light;
  std::optional<Shade> accent;
  std::optional<double> gloss;  ///< always written, null when unset
  int layers = 0;               ///< written only when not 0
  std::vector<int> codes;
  std::shared_ptr<const Swatch> base;
  std::optional<Extent> extent;  ///< its keys sit beside the swatch's own
};

// Found by argument-dependent lookup in the types' own namespace, as are the conversions.
using ptxbench::from_json;
using ptxbench::to_json;

void json_fields(JsonIo& io, Extent& e) {
  io("width", e.width);
  io("height", e.height);
}

void json_fields(JsonIo& io, Swatch& s) {
  io("name", s.name);
  io.name("shade", s.shade, parse_shade);
  io.name("accent", s.accent, parse_shade);
  io.nullable("gloss", s.gloss);
  io.when(s.layers != 0, "layers", s.layers);
  io("codes", s.codes);
  io("base", s.base);
  io.inline_part(s.extent);
}

std::string error_of(const ordered_json& j) {
  try {
    (void)j.get<Swatch>();
  } catch (const JsonFieldError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonIo, OneListWritesAndReadsBack) {
  Swatch base;
  base.name = "primer";
  Swatch s;
  s.name = "teal";
  s.shade = Shade::dark;
  s.accent = Shade::light;
  s.gloss = 0.5;
  s.layers = 3;
  s.codes = {4, 2};
  s.base = std::make_shared<const Swatch>(base);
  s.extent = Extent{640, 480};
  ordered_json j = s;
  EXPECT_EQ(j.dump(), R"({"name":"teal","shade":"dark","accent":"light","gloss":0.5,"layers":3,"codes":[4,2],)"
                      R"("base":{"name":"primer","shade":"light","gloss":null,"codes":[]},"width":640,"height":480})");
  Swatch back = j.get<Swatch>();
  EXPECT_EQ(ordered_json(back), j);
  ASSERT_TRUE(back.base);
  EXPECT_EQ(back.base->name, "primer");
  ASSERT_TRUE(back.extent);
  EXPECT_EQ(back.extent->height, 480);
}

TEST(JsonIo, AbsentKeysKeepDefaultsAndConditionalFieldsAreStillRead) {
  Swatch plain = ordered_json{{"name", "bare"}}.get<Swatch>();
  EXPECT_EQ(plain.shade, Shade::light);
  EXPECT_FALSE(plain.accent);
  EXPECT_FALSE(plain.base);
  EXPECT_FALSE(plain.extent) << "no key of the part: no part";
  EXPECT_FALSE(ordered_json(plain).contains("layers")) << "written only when not 0";

  Swatch partial = ordered_json{{"layers", 2}, {"height", 9}, {"accent", nullptr}}.get<Swatch>();
  EXPECT_EQ(partial.layers, 2);
  EXPECT_FALSE(partial.accent);
  ASSERT_TRUE(partial.extent) << "one key of the part is enough";
  EXPECT_EQ(partial.extent->width, 0);
  EXPECT_EQ(partial.extent->height, 9);
}

TEST(JsonIo, ErrorsNameTheField) {
  EXPECT_EQ(error_of({{"shade", "grey"}}), "json: shade: unknown shade 'grey' (expected light or dark)");
  EXPECT_EQ(error_of({{"codes", {1, "x"}}}), "json: codes[1]: type must be number, but is string");
  EXPECT_EQ(error_of({{"base", {{"width", "wide"}}}}), "json: base.width: type must be number, but is string");
  EXPECT_EQ(error_of(ordered_json::array()), "json: (top level): expected an object, got array");
}

TEST(JsonIo, SchemaAndVersionAreChecked) {
  EXPECT_NO_THROW(check_schema({{"schema", "s"}, {"schema_version", 2}}, "s", 2, "an s"));
  EXPECT_NO_THROW(check_schema(ordered_json::object(), "s", 1, "an s"));
  try {
    check_schema({{"schema", "t"}}, "s", 1, "an s");
    ADD_FAILURE() << "another schema was taken";
  } catch (const JsonFieldError& e) {
    EXPECT_EQ(e.path(), "schema");
    EXPECT_EQ(e.reason(), "'t' is not an s (s)");
  }
  EXPECT_THROW(check_schema({{"schema_version", 3}}, "s", 2, "an s"), JsonFieldError);
}

TEST(EnumNames, OneTableGivesNameViewAndParse) {
  EXPECT_EQ(enum_name_view(kShades, Shade::dark), "dark");
  EXPECT_EQ(enum_name_view(kShades, static_cast<Shade>(7)), "?");
  EXPECT_EQ(find_enum(kShades, "light"), Shade::light);
  EXPECT_FALSE(find_enum(kShades, "Light"));
  try {
    (void)parse_enum(kShades, "dim", "shade", "palette");
    ADD_FAILURE() << "a bad name was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(e.library(), "palette");
    EXPECT_EQ(std::string(e.what()), "palette: unknown shade 'dim' (expected light or dark)");
  }
}

}  // namespace
}  // namespace ptxbench
