// The library manifest (kport.json): what parses, and that every refusal names the line
// and the key a library's author has to fix.
#include <gtest/gtest.h>

#include <cmath>

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "kport/porting/manifest.h"
#include "kport/porting/op_shape.h"

namespace kport::porting {
namespace {
namespace fs = std::filesystem;

// The error of `text`, which must not parse.
std::string refusal(std::string_view text) {
  auto m = parse_manifest(text);
  if (m.ok()) return "(parsed)";
  EXPECT_EQ(m.error().code, Errc::invalid_argument);
  return m.error().message;
}

constexpr std::string_view k_cmake_library = R"({
  "manifest_version": 1,
  "name": "scale-lib",
  "build": {
    "cmake": {
      "source_dir": "cuda",
      "target": "scale_harness",
      "options": ["-DCMAKE_CUDA_ARCHITECTURES={arch}", "-DTARGET={target}"]
    }
  },
  "targets": ["sm_90a", "sm_100a"],
  "variants": [
    {"name": "v1", "family": "scale", "features": ["simt"], "sources": ["src/ops/scale.cu"]},
    {"name": "tc", "family": "scale", "features": ["tcgen05"]}
  ],
  "families": [
    {"name": "scale", "dims": ["n", {"name": "stride", "default": 1}], "dtypes": ["fp32", "e4m3"],
     "tolerances": {"e4m3": {"normwise": 0.125}}}
  ],
  "shapes": {"scale": {"check": ["n=1", "n=4096,stride=2"], "bench": ["n=1048576"]}},
  "tolerances": {"fp32": {"normwise": 1e-6, "max_abs_rel": 2e-6}},
  "env": {"SCALE_ARCH": "{arch}", "EMPTY": ""}
})";

TEST(Manifest, ACMakeLibraryParsesWithEverySection) {
  auto m = parse_manifest(k_cmake_library);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->name, "scale-lib");
  ASSERT_TRUE(m->cmake);
  EXPECT_FALSE(m->command);
  EXPECT_EQ(m->cmake->source_dir, "cuda");
  EXPECT_EQ(m->cmake->target, "scale_harness");
  EXPECT_EQ(m->cmake->options.size(), 2u);
  EXPECT_TRUE(m->cmake->variants_from.empty());
  EXPECT_EQ(m->targets, (std::vector<std::string>{"sm_90a", "sm_100a"}));
  EXPECT_TRUE(m->builds_target("sm_100a"));
  EXPECT_FALSE(m->builds_target("sm_80"));
  ASSERT_TRUE(m->variants);
  ASSERT_EQ(m->variants->size(), 2u);
  EXPECT_EQ((*m->variants)[0].id(), "scale.v1");
  EXPECT_EQ((*m->variants)[0].sources, (std::vector<std::string>{"src/ops/scale.cu"}));
  EXPECT_EQ((*m->variants)[1].features, (std::vector<std::string>{"tcgen05"}));
  EXPECT_EQ((*m->variants)[1].line, 14);
  const auto* scale = m->family("scale");
  ASSERT_NE(scale, nullptr);
  ASSERT_EQ(scale->dims.size(), 2u);
  EXPECT_EQ(scale->dims[1].name, "stride");
  EXPECT_EQ(scale->dims[1].default_value, 1);
  EXPECT_EQ(scale->dtypes, (std::vector<std::string>{"fp32", "e4m3"}));
  EXPECT_DOUBLE_EQ(scale->tolerances.at("e4m3").normwise, 0.125);
  EXPECT_EQ(m->shapes.at("scale").check.size(), 2u);
  EXPECT_EQ(m->shapes.count("gemm"), 0u);
  EXPECT_DOUBLE_EQ(m->tolerances.at("fp32").normwise, 1e-6);
  EXPECT_DOUBLE_EQ(*m->tolerances.at("fp32").max_abs_rel, 2e-6);
  EXPECT_FALSE(m->tolerances.at("fp32").lse_abs);
  EXPECT_EQ(m->env.at("SCALE_ARCH"), "{arch}");
  EXPECT_EQ(m->env.at("EMPTY"), "");
}

TEST(Manifest, ACommandLibraryNeedsItsHarness) {
  auto m = parse_manifest(R"({"manifest_version": 1, "name": "triton.lib",
    "build": {"command": ["python3", "build.py", "--out", "{build_dir}/h"], "harness": "{build_dir}/h"},
    "targets": "all"})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(m->command);
  EXPECT_EQ(m->command->argv.size(), 4u);
  EXPECT_EQ(m->command->harness, "{build_dir}/h");
  EXPECT_TRUE(m->all_targets);
  EXPECT_TRUE(m->builds_target("sm_120"));
  EXPECT_FALSE(m->variants) << "absent: the harness's list names them";

  EXPECT_EQ(refusal(R"({"manifest_version": 1, "name": "x",
    "build": {"command": ["make"]}, "targets": "all"})"),
            "kport.json:2: key 'build' needs 'harness' (the program 'build.command' writes)");
  EXPECT_EQ(refusal(R"({"manifest_version": 1, "name": "x",
    "build": {"command": []}, "targets": "all"})"),
            "kport.json:2: key 'build.command' must be a non-empty array of strings (the program and its arguments)");
}

TEST(Manifest, ASyntaxErrorNamesItsLine) {
  EXPECT_EQ(refusal("{\n  \"manifest_version\": 1,\n  \"name\": \"x\"\n  \"build\": {}\n}"),
            "kport.json:4: invalid JSON: expected ',' or '}' after the value of 'name', found '\"'");
  EXPECT_EQ(refusal("{\n  \"manifest_version\": 1,\n  \"targets\": [\"sm_90a\",]\n}"),
            "kport.json:3: invalid JSON: expected a value, found ']'");
  EXPECT_EQ(refusal("{\n  \"name\": \"unterminated\n}"),
            "kport.json:2: invalid JSON: a string is not closed on its line (a line break inside it)");
  EXPECT_EQ(refusal("{\"manifest_version\": 01}"), "kport.json:1: invalid JSON: a number has a leading zero");
  EXPECT_EQ(refusal("{}\n\n{}"), "kport.json:3: invalid JSON: unexpected '{' after the document");
  EXPECT_EQ(refusal("{\"name\": \"\\q\"}"), "kport.json:1: invalid JSON: unknown escape '\\q' in a string");
  EXPECT_EQ(refusal("{\n"), "kport.json:2: invalid JSON: expected a key in double quotes, found the end of the file");
  EXPECT_EQ(refusal("{\"name\": \"\xff\"}"), "kport.json:1: invalid JSON: the file is not valid UTF-8");
  auto other = parse_manifest("[", "libs/fast/kport.json");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().message.rfind("libs/fast/kport.json:1: invalid JSON", 0), 0u) << other.error().message;
}

TEST(Manifest, UnknownKeysAreRefusedByName) {
  EXPECT_EQ(refusal("{\n  \"manifest_version\": 1,\n  \"buld\": {}\n}"),
            "kport.json:3: unknown key 'buld' (the manifest takes manifest_version, name, build, targets, variants, "
            "families, shapes, tolerances, env)");
  EXPECT_EQ(refusal(R"({"manifest_version": 1, "name": "x",
    "build": {"cmake": {"target": "h",
                        "tagret": "h"}}, "targets": "all"})"),
            "kport.json:3: unknown key 'build.cmake.tagret' (build.cmake takes source_dir, target, options, harness, "
            "variants_from)");
  EXPECT_EQ(refusal(R"({"manifest_version": 1, "name": "x", "build": {"cmake": {"target": "h"}}, "targets": "all",
    "variants": [{"name": "a", "family": "f", "feature": ["simt"]}]})"),
            "kport.json:2: unknown key 'variants[0].feature' (variants[0] takes name, family, features, sources)");
}

TEST(Manifest, AMissingBuildTargetIsNamed) {
  EXPECT_EQ(refusal("{\n  \"manifest_version\": 1,\n  \"name\": \"x\",\n  \"build\": {\n    \"cmake\": {\n"
                    "      \"source_dir\": \".\"\n    }\n  },\n  \"targets\": \"all\"\n}"),
            "kport.json:5: key 'build.cmake' needs 'target' (the CMake target that builds the harness)");
  EXPECT_EQ(refusal(R"({"manifest_version": 1, "name": "x", "targets": "all"})"),
            "kport.json:1: the manifest needs 'build' (how to build the harness of one target)");
  EXPECT_EQ(refusal(R"({"manifest_version": 1, "name": "x", "build": {}, "targets": "all"})"),
            "kport.json:1: key 'build' needs 'cmake' (a CMake project and target) or 'command' (argv) with 'harness'");
  EXPECT_EQ(
      refusal(
          R"({"manifest_version": 1, "name": "x", "build": {"cmake": {"target": "h"}, "command": ["m"]}, "targets": "all"})"),
      "kport.json:1: key 'build' takes either 'cmake' or 'command', not both");
}

TEST(Manifest, AValueOfTheWrongTypeNamesItsKeyPath) {
  EXPECT_EQ(refusal("{\n  \"manifest_version\": 1,\n  \"name\": \"x\",\n  \"build\": {\"cmake\": {\n"
                    "    \"target\": 12\n  }},\n  \"targets\": \"all\"\n}"),
            "kport.json:5: key 'build.cmake.target' must be a string, not a number");
  EXPECT_EQ(refusal(R"({"manifest_version": 1, "name": "x", "build": {"cmake": {"target": "h", "options": ["-DA", 3]}},
    "targets": "all"})"),
            "kport.json:1: key 'build.cmake.options[1]' must be a string, not a number");
  EXPECT_EQ(refusal(R"({"manifest_version": "1"})"), "kport.json:1: key 'manifest_version' must be an integer");
  EXPECT_EQ(refusal(R"({"manifest_version": 2})"),
            "kport.json:1: manifest_version 2 is not one this kport reads (it reads 1)");
  EXPECT_EQ(refusal(R"({"name": "x"})"), "kport.json:1: the manifest needs 'manifest_version' (1)");
  EXPECT_EQ(refusal("[1]"), "kport.json:1: the manifest must be a JSON object, not an array");
  EXPECT_EQ(refusal(R"({"manifest_version": 1, "name": "x y"})"),
            "kport.json:1: key 'name': 'x y' must be letters, digits, '-', '_' and '.' (128 at most)");
}

TEST(Manifest, DuplicatesAreRefused) {
  EXPECT_EQ(refusal(R"({"manifest_version": 1, "name": "x", "build": {"cmake": {"target": "h"}}, "targets": "all",
  "variants": [
    {"name": "v1", "family": "scale"},
    {"name": "v2", "family": "scale"},
    {"name": "v1", "family": "scale", "features": ["simt"]}
  ]})"),
            "kport.json:5: key 'variants[2]': variant 'scale.v1' is declared twice (first at line 3)");
  EXPECT_EQ(refusal("{\"manifest_version\": 1,\n \"name\": \"a\",\n \"name\": \"b\"}"),
            "kport.json:3: key 'name' is given twice in one object (first at line 2)");
  EXPECT_EQ(refusal(R"({"manifest_version": 1, "name": "x", "build": {"cmake": {"target": "h"}},
    "targets": ["sm_90a", "sm_90a"]})"),
            "kport.json:2: key 'targets[1]': 'sm_90a' is listed twice");
  EXPECT_EQ(refusal(R"({"manifest_version": 1, "name": "x", "build": {"cmake": {"target": "h"}}, "targets": "all",
    "families": [{"name": "f", "dims": ["n"], "dtypes": ["fp32"]}, {"name": "f", "dims": ["n"], "dtypes": ["fp32"]}]})"),
            "kport.json:2: key 'families[1]': family 'f' is declared twice (first at line 2)");
}

TEST(Manifest, TargetsPlaceholdersAndPathsAreChecked) {
  const std::string head = R"({"manifest_version": 1, "name": "x", )";
  EXPECT_EQ(refusal(head + R"("build": {"cmake": {"target": "h"}}, "targets": ["sm90"]})"),
            "kport.json:1: key 'targets[0]': 'sm90' is not an nvcc target (sm_<number>[a|f], such as sm_90a)");
  EXPECT_EQ(refusal(head + R"("build": {"cmake": {"target": "h"}}, "targets": []})"),
            "kport.json:1: key 'targets' must be \"all\" or a non-empty array of nvcc targets such as [\"sm_90a\"]");
  EXPECT_EQ(refusal(head + R"("build": {"cmake": {"target": "h-{gpu}"}}, "targets": "all"})"),
            "kport.json:1: key 'build.cmake.target': unknown placeholder '{gpu}' (known: {target}, {arch}, "
            "{build_dir}, {source_dir})");
  EXPECT_EQ(refusal(head + R"("build": {"cmake": {"target": "h", "source_dir": "../other"}}, "targets": "all"})"),
            "kport.json:1: key 'build.cmake.source_dir' must be a path inside the library, relative to kport.json");
  EXPECT_EQ(refusal(head + R"("build": {"cmake": {"target": "h", "variants_from": "cmake"}}, "targets": "all"})"),
            "kport.json:1: key 'build.cmake.variants_from' must be \"kport_kernel_variant\" (the one CMake helper "
            "whose calls kport reads), not \"cmake\"");
  EXPECT_EQ(refusal(head + R"("build": {"cmake": {"target": "h", "variants_from": "kport_kernel_variant"}},
    "targets": "all", "variants": []})"),
            "kport.json:2: key 'variants': the variants come from the kport_kernel_variant calls "
            "(build.cmake.variants_from); leave one of the two out");
  EXPECT_EQ(refusal(head + R"("build": {"cmake": {"target": "h"}}, "targets": "all", "env": {"1X": "a"}})"),
            "kport.json:1: key 'env.1X': '1X' is not an environment variable name");
  EXPECT_EQ(refusal(head + R"("build": {"cmake": {"target": "h"}}, "targets": "all", "env": {"X": 1}})"),
            "kport.json:1: key 'env.X' must be a string, not a number");
}

TEST(Manifest, FamiliesShapesAndTolerancesAreValidated) {
  const std::string head =
      R"({"manifest_version": 1, "name": "x", "build": {"cmake": {"target": "h"}}, "targets": "all", )";
  const std::string fam = R"("families": [{"name": "rope", "dims": ["t", "d"], "dtypes": ["bf16"]}], )";
  EXPECT_EQ(refusal(head + fam + R"("shapes": {"rope": {"check": ["t=4"]}}})"),
            "kport.json:1: key 'shapes.rope.check[0]': 't=4' lacks 'd'");
  EXPECT_EQ(refusal(head + fam + R"("shapes": {"rope": {"check": ["t=4,d=x"]}}})"),
            "kport.json:1: key 'shapes.rope.check[0]': 't=4,d=x' is not key=integer,... (at 'd=x')");
  EXPECT_EQ(refusal(head + fam + R"("shapes": {"rope": {"check": ["t=4,d=8,q=1"]}}})"),
            "kport.json:1: key 'shapes.rope.check[0]': 'q' is not a dimension of rope");
  EXPECT_EQ(refusal(head + fam + R"("shapes": {"swiglu": {"check": ["n=1"]}}})"),
            "kport.json:1: unknown key 'shapes.swiglu': no family 'swiglu' is declared in 'families' (a library "
            "declares each family it runs)");
  EXPECT_EQ(refusal(head + R"("shapes": {"gemm": {"bench": ["m=1,n=1"]}}})"),
            "kport.json:1: unknown key 'shapes.gemm': no family 'gemm' is declared in 'families' (a library "
            "declares each family it runs)")
      << "kport's own families are data too: a library that runs gemm declares it";
  EXPECT_EQ(refusal(head + R"("families": [{"name": "f", "dims": ["n"], "dtypes": ["fp8"]}]})"),
            "kport.json:1: key 'families[0].dtypes[0]': 'fp8' is not a dtype kport knows (bf16, fp16, fp32, fp64, "
            "e4m3, e5m2, int8)");
  EXPECT_EQ(refusal(head + R"("families": [{"name": "f", "dtypes": ["fp32"]}]})"),
            "kport.json:1: key 'families[0]' needs 'dims' (the shape's keys, such as [\"m\", \"n\", \"k\"])");
  EXPECT_EQ(refusal(head + R"("families": [{"name": "f", "dims": ["n"], "dtypes": ["fp32"],
    "tolerances": {"bf16": {"normwise": 1}}}]})"),
            "kport.json:2: unknown key 'families[0].tolerances.bf16': not a dtype of families[0].tolerances (fp32)");
  EXPECT_EQ(refusal(head + R"("tolerances": {"fp32": {"normwise": 0}}})"),
            "kport.json:1: key 'tolerances.fp32.normwise' must be greater than 0");
  EXPECT_EQ(refusal(head + R"("tolerances": {"fp32": {"max_abs_rel": 1}}})"),
            "kport.json:1: key 'tolerances.fp32' needs 'normwise' (the largest normwise relative error)");
  EXPECT_EQ(refusal(head + R"("tolerances": {"fp32": {"normwise": 1, "atol": 1}}})"),
            "kport.json:1: unknown key 'tolerances.fp32.atol' (tolerances.fp32 takes normwise, max_abs_rel, lse_abs)");
}

TEST(Manifest, AFamilyStatesHowItCountsItsWorkAndTheRangeOfItsDims) {
  const std::string head =
      R"({"manifest_version": 1, "name": "norm-lib", "build": {"cmake": {"target": "h"}}, "targets": "all", )";
  auto m = parse_manifest(head + R"("families": [{"name": "layernorm", "dims": ["rows", "cols",
      {"name": "groups", "default": 1, "min": 1, "max": 64}], "dtypes": ["bf16", "e4m3"],
      "bytes": "2*rows*cols*bytes_per_elem", "flops": "8*rows*cols", "bound": "memory",
      "example": "rows=4096,cols=8192"}]})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  const ManifestFamily& f = m->families.at(0);
  EXPECT_EQ(f.bytes, "2*rows*cols*bytes_per_elem");
  EXPECT_EQ(f.flops, "8*rows*cols");
  EXPECT_EQ(f.bound, "memory");
  EXPECT_EQ(f.example, "rows=4096,cols=8192");
  EXPECT_EQ(f.dims[2].max, 64);
  const OpFamily of = to_op_family(f, m->name, "norm");
  EXPECT_EQ(of.bound(), Bound::memory) << "the hint wins over the flops stated";
  EXPECT_EQ(of.library, "norm-lib");
  EXPECT_EQ(of.repo, "norm");
  EXPECT_TRUE(check_family(of).ok());

  const std::string fam = R"("families": [{"name": "ln", "dims": ["rows", "cols"], "dtypes": ["bf16"], )";
  EXPECT_EQ(refusal(head + fam + R"("flops": "2*rows*k"}]})"),
            "kport.json:1: key 'families[0].flops': '2*rows*k' at column 8: unknown name 'k' (the names are rows, "
            "cols, bytes_per_elem)");
  EXPECT_EQ(refusal(head + fam + R"("bytes": "rows*(cols"}]})"),
            "kport.json:1: key 'families[0].bytes': 'rows*(cols' at column 11: expected ')'");
  EXPECT_EQ(refusal(head + fam + R"("bytes": 4}]})"),
            "kport.json:1: key 'families[0].bytes' must be a string, not a number");
  EXPECT_EQ(refusal(head + fam + R"("bound": "io"}]})"),
            "kport.json:1: key 'families[0].bound' must be \"memory\" or \"compute\", not \"io\"");
  EXPECT_EQ(refusal(head + fam + R"("example": "rows=1"}]})"),
            "kport.json:1: key 'families[0].example': 'rows=1' lacks 'cols'");
  EXPECT_EQ(
      refusal(head +
              R"("families": [{"name": "ln", "dims": [{"name": "g", "min": 4, "max": 2}], "dtypes": ["bf16"]}]})"),
      "kport.json:1: key 'families[0].dims[0]': 'min' 4 is above 'max' 2");
  EXPECT_EQ(
      refusal(head + R"("families": [{"name": "ln", "dims": [{"name": "g", "default": 0}], "dtypes": ["bf16"]}]})"),
      "kport.json:1: key 'families[0].dims[0].default': 0 is outside 1 .. 1073741824");
  EXPECT_EQ(
      refusal(head +
              R"("families": [{"name": "ln", "dims": [{"name": "g", "omit_default": true}], "dtypes": ["bf16"]}]})"),
      "kport.json:1: key 'families[0].dims[0].omit_default': a dimension left out at its default needs a 'default'");
  EXPECT_EQ(
      refusal(
          head +
          R"("families": [{"name": "ln", "dims": [{"name": "g", "default": 1, "omit_default": 1}], "dtypes": ["bf16"]}]})"),
      "kport.json:1: key 'families[0].dims[0].omit_default' must be true or false, not a number");
  EXPECT_EQ(
      refusal(head +
              R"("families": [{"name": "ln", "dims": ["m", {"name": "g", "full_at": "m"}], "dtypes": ["bf16"]}]})"),
      "kport.json:1: key 'families[0].dims[1].full_at': a dimension whose value at another's means its default "
      "needs a 'default'");
  EXPECT_EQ(refusal(head + R"("families": [{"name": "ln", "dims": ["bytes_per_elem"], "dtypes": ["bf16"]}]})"),
            "kport.json:1: key 'families[0].dims[0]': 'bytes_per_elem' is the dtype's element size in work "
            "expressions, not a dimension");
}

TEST(Manifest, StringsAndNumbersReadAsJsonSays) {
  auto m = parse_manifest(
      R"({"manifest_version": 1e0, "name": "x", "build": {"cmake": {"target": "h\u00e9\ud83d\ude00\t"}}, "targets": "all"})");
  ASSERT_FALSE(m.ok()) << "1e0 is a number but not an integer";
  m = parse_manifest(
      R"({"manifest_version": 1, "name": "x", "build": {"cmake": {"target": "h\u00e9\ud83d\ude00\t{{x}}"}}, "targets": "all",
          "tolerances": {"bf16": {"normwise": 1.5E-2}}})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->cmake->target, "h\xc3\xa9\xf0\x9f\x98\x80\t{{x}}");
  EXPECT_DOUBLE_EQ(m->tolerances.at("bf16").normwise, 0.015);
}

TEST(Manifest, PlaceholdersExpand) {
  Placeholders p{"sm_90a", cuda_arch_of("sm_90a"), "/work/b", "/src"};
  EXPECT_EQ(p.arch, "90a");
  EXPECT_EQ(*expand("-DCMAKE_CUDA_ARCHITECTURES={arch} -o {build_dir}/h-{target} {source_dir}", p),
            "-DCMAKE_CUDA_ARCHITECTURES=90a -o /work/b/h-sm_90a /src");
  EXPECT_EQ(*expand("{{\"a\": 1}}", p), "{\"a\": 1}");
  EXPECT_FALSE(expand("{target", p).ok());
  EXPECT_FALSE(expand("target}", p).ok());
  EXPECT_EQ(expand("{nope}", p).error().message,
            "unknown placeholder '{nope}' (known: {target}, {arch}, {build_dir}, {source_dir})");
}

// A family says which of its dims must match exactly and how near two values of the others
// are, by dimension names kport never uses; the rules travel with the family, and a rule
// that does not hold names its line and key.
TEST(Manifest, AFamilyDeclaresItsExactDimensionsWeightsAndAlignments) {
  const std::string head =
      R"({"manifest_version": 1, "name": "rope-lib", "build": {"cmake": {"target": "h"}}, "targets": "all",
  "families": [{"name": "rope", "dtypes": ["bf16"], "dims": [
    {"name": "tokens", "weight": 2, "align": [{"multiple": 16, "penalty": 0.5}]},
    "heads",
    )";
  auto m = parse_manifest(head + R"({"name": "rotary_dim", "exact": true}]}]})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  const OpFamily of = to_op_family(m->families.at(0), m->name);
  EXPECT_TRUE(check_family(of).ok());
  const ShapeRules rules = of.shape_rules();
  EXPECT_EQ(rules.dims().size(), 2u) << "heads is plain";
  EXPECT_TRUE(rules.exact("rotary_dim"));
  EXPECT_EQ(rules.rule("tokens"), (Shape::DimRule{2.0, {{16, 0.5}}, false}));
  auto q = *Shape::parse("tokens=4096,heads=32,rotary_dim=64");
  EXPECT_TRUE(std::isinf(q.distance(*Shape::parse("tokens=4096,heads=32,rotary_dim=128"), rules)));

  EXPECT_EQ(refusal(head + R"({"name": "rotary_dim", "exact": 1}]}]})"),
            "kport.json:5: key 'families[0].dims[2].exact' must be true or false, not a number");
  EXPECT_EQ(refusal(head + R"({"name": "rotary_dim", "exact": true, "weight": 2}]}]})"),
            "kport.json:5: key 'families[0].dims[2].exact': an exact dimension is never near another value: give it "
            "no weight or align");
  EXPECT_EQ(refusal(head + R"({"name": "rotary_dim", "weight": -1}]}]})"),
            "kport.json:5: key 'families[0].dims[2].weight': must be a number above 0 and at most 100");
  EXPECT_EQ(refusal(head + R"({"name": "rotary_dim", "align": [{"multiple": 1, "penalty": 1}]}]}]})"),
            "kport.json:5: key 'families[0].dims[2].align[0].multiple': must be an integer in 2 .. 2^30");
  EXPECT_EQ(refusal(head + R"({"name": "rotary_dim", "align": [{"multiple": 8}]}]}]})"),
            "kport.json:5: key 'families[0].dims[2].align[0]' needs 'multiple' and 'penalty'");
  EXPECT_EQ(refusal(head + R"({"name": "rotary_dim", "exactly": true}]}]})"),
            "kport.json:5: unknown key 'families[0].dims[2].exactly' (families[0].dims[2] takes name, default, min, "
            "max, exact, weight, align, omit_default, full_at)");
}

// A family says which of its instances' config keys tile which of its dims, so that the
// selection moves its figures to unmeasured shapes by waves; a declaration that does not
// hold names its line and key.
TEST(Manifest, AFamilyDeclaresWhichConfigKeysGiveItsGeometry) {
  const std::string head =
      R"({"manifest_version": 1, "name": "norm-lib", "build": {"cmake": {"target": "h"}}, "targets": "all",
  "families": [{"name": "layernorm", "dims": ["rows", "cols"], "dtypes": ["bf16"],
    "geometry": )";
  auto m = parse_manifest(head + R"({
      "rows": {"tile": "rows_per_cta"},
      "cols": {"step": ["cols_per_step", "vec_cols"], "max_bytes": "max_cols_bytes"}}}]})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  const GeometryKeys& g = m->families.at(0).geometry;
  ASSERT_EQ(g.dims.size(), 2u);
  EXPECT_EQ(g.dims[0].dim, "rows");
  EXPECT_EQ(g.dims[0].tile, (std::vector<std::string>{"rows_per_cta"}));
  EXPECT_EQ(g.dims[1].step, (std::vector<std::string>{"cols_per_step", "vec_cols"}));
  EXPECT_EQ(g.dims[1].max_bytes, (std::vector<std::string>{"max_cols_bytes"}));
  EXPECT_TRUE(g.dims[1].split.empty());
  const OpFamily of = to_op_family(m->families.at(0), m->name);
  EXPECT_EQ(of.geometry, g);
  EXPECT_TRUE(check_family(of).ok());

  EXPECT_EQ(refusal(head + R"({"rowz": {"tile": "r"}}}]})"),
            "kport.json:3: key 'families[0].geometry.rowz': 'rowz' is not a dimension of the family (rows, cols)");
  EXPECT_EQ(refusal(head + R"({"rows": {"tile": 4}}}]})"),
            "kport.json:3: key 'families[0].geometry.rows.tile' must be a config key (a string) or an array of "
            "them, not a number");
  EXPECT_EQ(refusal(head + R"({"rows": {"tile": []}}}]})"),
            "kport.json:3: key 'families[0].geometry.rows.tile' must name at least one config key");
  EXPECT_EQ(refusal(head + R"({"rows": {"tile": ["a", 1]}}}]})"),
            "kport.json:3: key 'families[0].geometry.rows.tile[1]' must be a string, not a number");
  EXPECT_EQ(refusal(head + R"({"rows": {"tiles": "a"}}}]})"),
            "kport.json:3: unknown key 'families[0].geometry.rows.tiles' (families[0].geometry.rows takes tile, "
            "step, split, max_bytes, align_bytes, max, run_min_bytes, run_max_bytes, run_align_bytes, run_multiple)");
  EXPECT_EQ(refusal(head + R"(["rows"]}]})"),
            "kport.json:3: key 'families[0].geometry' must be an object, not an array");
  EXPECT_EQ(refusal(head + R"({"rows": "rows_per_cta"}}]})"),
            "kport.json:3: key 'families[0].geometry.rows' must be an object, not a string");
  EXPECT_EQ(refusal(head + R"({
      "rows": {"tile": "r"},
      "cols": {"split": "s"}}}]})"),
            "kport.json:5: key 'families[0].geometry.cols.split': a split shares the steps along 'cols' among "
            "blocks: declare its 'step' too");
  EXPECT_EQ(refusal(head + R"({"rows": {"tile": "rows-per-cta"}}}]})"),
            "kport.json:3: key 'families[0].geometry.rows.tile': 'rows-per-cta' is not a config key (letters, "
            "digits and '_', 64 at most)");
}

TEST(Manifest, AFamilyDeclaresWhatAShapeNeedsForAnyInstanceToRunIt) {
  const std::string head =
      R"({"manifest_version": 1, "name": "norm-lib", "build": {"cmake": {"target": "h"}}, "targets": "all",
  "families": [{"name": "layernorm", "dims": ["rows", "cols", {"name": "mode", "default": 0, "min": 0, "max": 1}],
    "dtypes": ["bf16"],
    "requires": )";
  auto m = parse_manifest(head + R"([
      {"dim": "cols", "multiple": 8, "why": "rows are read 16 bytes at a time"},
      {"dim": "cols", "multiple": 256, "when": {"mode": 1}}]}]})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  const auto& r = m->families.at(0).requirements;
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].dim, "cols");
  EXPECT_EQ(r[0].multiple, 8);
  EXPECT_TRUE(r[0].when.empty());
  EXPECT_EQ(r[0].why, "rows are read 16 bytes at a time");
  EXPECT_EQ(r[1].when, (std::vector<std::pair<std::string, std::int64_t>>{{"mode", 1}}));
  const OpFamily of = to_op_family(m->families.at(0), m->name);
  ASSERT_TRUE(check_family(of).ok());
  auto shape = op_shape(of, "rows=4,cols=264,mode=1");
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(unmet_requirement(of, shape->shape),
            "cols=264 is not a multiple of 256, which layernorm needs when mode=1");

  EXPECT_EQ(refusal(head + R"([{"dim": "colz", "multiple": 8}]}]})"),
            "kport.json:4: key 'families[0].requires[0].dim': 'colz' is not one of the family's dims");
  EXPECT_EQ(refusal(head + R"([{"dim": "cols"}]}]})"), "kport.json:4: key 'families[0].requires[0]' needs 'multiple'");
  EXPECT_EQ(refusal(head + R"([{"dim": "cols", "multiple": 8.5}]}]})"),
            "kport.json:4: key 'families[0].requires[0].multiple' must be an integer, not a number");
  EXPECT_EQ(refusal(head + R"([{"dim": "cols", "multiple": 8,
      "when": {"cols": 1}}]}]})"),
            "kport.json:5: key 'families[0].requires[0].when.cols': a requirement of 'cols' cannot depend on it");
  EXPECT_EQ(refusal(head + R"([{"dim": "cols", "multiple": 8, "if": {}}]}]})"),
            "kport.json:4: unknown key 'families[0].requires[0].if' (families[0].requires[0] takes dim, multiple, "
            "when, why)");
}

// kernels/kport.json describes kport's own build, and its families are the ones the
// harness's shape contract (op_shape.h) knows, with the same dimensions.
TEST(Manifest, KportsOwnKernelsManifestMatchesTheHarness) {
  auto m = load_manifest(fs::path(KPORT_KERNELS_DIR) / "kport.json", "kernels/kport.json");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->name, "kport-kernels");
  ASSERT_TRUE(m->cmake);
  EXPECT_EQ(m->cmake->variants_from, "kport_kernel_variant");
  EXPECT_EQ(m->cmake->target, "kport-harness-{target}");
  EXPECT_EQ(m->cmake->harness, "bin/kport-harness-{target}");
  EXPECT_EQ(m->cmake->options, (std::vector<std::string>{"-DKPORT_CUDA_TARGETS={target}"}));
  EXPECT_TRUE(m->all_targets);
  std::vector<std::string> names;
  for (const auto& f : m->families) {
    names.push_back(f.name);
    std::string shape;
    for (const auto& d : f.dims)
      if (!d.default_value) shape += (shape.empty() ? "" : ",") + d.name + "=7";
    auto parsed = op_shape(to_op_family(f, m->name), shape);
    EXPECT_TRUE(parsed.ok()) << f.name << ": " << parsed.error().message;
    EXPECT_TRUE(check_family(to_op_family(f, m->name)).ok()) << f.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"gemm", "attention", "gemm_fp8", "grouped_gemm", "grouped_gemm_fp8",
                                             "rmsnorm", "softmax"}));
  // Each declares the config keys its instances publish their geometry under.
  for (const auto& f : m->families) EXPECT_FALSE(f.geometry.empty()) << f.name;
  // The figures' units and the work counts are the harness's (kernels/harness/shapes.cpp).
  const FamilySet known(op_families_of(*m));
  EXPECT_EQ(known.find("gemm")->bound(), Bound::compute);
  EXPECT_EQ(known.find("attention")->bound(), Bound::compute);
  EXPECT_EQ(known.find("rmsnorm")->bound(), Bound::memory);
  EXPECT_EQ(known.find("softmax")->bound(), Bound::memory);
  EXPECT_EQ(known.find("gemm_fp8")->bound(), Bound::compute);
  EXPECT_EQ(known.find("gemm")->library, "kport-kernels");
  // fp8 A and B read, bf16 D written: the harness's byte_count.
  EXPECT_DOUBLE_EQ(*known.find("gemm_fp8")->bytes_at(*Shape::parse("m=2,n=3,k=128,scale=2"), "e4m3"),
                   (2 * 128 + 3 * 128) * 1.0 + 2 * 3 * 2.0);
  // grouped_gemm: every group's A, B and D once, as the gemm family counts one gemm's.
  EXPECT_EQ(known.find("grouped_gemm")->bound(), Bound::compute);
  EXPECT_DOUBLE_EQ(*known.find("grouped_gemm")->flops_at(*Shape::parse("g=3,m=128,n=8,k=16"), "bf16"),
                   2.0 * 3 * 128 * 8 * 16);
  EXPECT_DOUBLE_EQ(*known.find("grouped_gemm")->bytes_at(*Shape::parse("g=3,m=128,n=8,k=16"), "bf16"),
                   3 * (128 * 16 + 16 * 8 + 128 * 8) * 2.0);
  // grouped_gemm_fp8: every group's fp8 A and B read and its bf16 D written, as gemm_fp8 counts one.
  EXPECT_EQ(known.find("grouped_gemm_fp8")->bound(), Bound::compute);
  EXPECT_DOUBLE_EQ(*known.find("grouped_gemm_fp8")->flops_at(*Shape::parse("g=3,m=128,n=8,k=16,scale=1"), "e4m3"),
                   2.0 * 3 * 128 * 8 * 16);
  EXPECT_DOUBLE_EQ(*known.find("grouped_gemm_fp8")->bytes_at(*Shape::parse("g=3,m=128,n=8,k=16,scale=1"), "e5m2"),
                   3 * ((128 * 16 + 8 * 16) * 1.0 + 2.0 * 128 * 8));
  EXPECT_DOUBLE_EQ(*known.find("rmsnorm")->bytes_at(*Shape::parse("rows=2,cols=4"), "fp16"), (16 + 4) * 2.0);
  EXPECT_EQ(op_shape(*known.find("attention"), "b=1,h=1,l=1,d=64,causal=2").error().message,
            "shape value 2 of 'causal' is out of range (0 or 1)");
  // The tolerances are kernels/harness/tolerance.cpp's.
  EXPECT_DOUBLE_EQ(m->tolerances.at("fp32").normwise, 5e-5);
  EXPECT_DOUBLE_EQ(*m->tolerances.at("bf16").max_abs_rel, 3e-2);
  EXPECT_DOUBLE_EQ(*m->family("attention")->tolerances.at("fp16").lse_abs, 2e-3);
}

class TempTree : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "kport-manifest-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void touch(const fs::path& p) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "{}\n";
  }
  fs::path root;
};

TEST_F(TempTree, TheLibraryIsFoundAtTheRootThenInKernels) {
  auto none = find_library(root);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, Errc::not_found);
  EXPECT_NE(none.error().message.find("no kport.json at its root"), std::string::npos) << none.error().message;
  touch(root / "kernels" / "cmake" / "kport_kernels.cmake");
  EXPECT_EQ(*find_library(root), root / "kernels") << "a legacy kernels tree";
  touch(root / "kport.json");
  EXPECT_EQ(*find_library(root), root) << "a manifest at the root comes first";
  fs::remove(root / "kport.json");
  fs::remove_all(root / "kernels" / "cmake");
  touch(root / "kernels" / "kport.json");
  EXPECT_EQ(*find_library(root), root / "kernels");
  EXPECT_EQ(*find_library(root, "libs/fast"), root / "libs/fast") << "a job's kernels_dir wins";
}

TEST_F(TempTree, LoadNamesTheFileItWasGiven) {
  std::ofstream(root / "kport.json") << "{\n  \"manifest_version\": 1,\n  \"nmae\": \"x\"\n}\n";
  auto m = load_manifest(root / "kport.json", "kport.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message.rfind("kport.json:3: unknown key 'nmae'", 0), 0u) << m.error().message;
  EXPECT_EQ(load_manifest(root / "absent.json").error().code, Errc::not_found);
}

TEST(HarnessList, VariantsAreReadFromTheListDocument) {
  auto v = parse_list_variants(R"({"target": "sm_90a", "variants": [
    {"variant": "scale.v1", "features": "simt,ldmatrix", "status": "built", "instances": []},
    {"variant": "scale.tc", "features": ["tcgen05"], "status": "not_applicable", "reason": "needs tcgen05"},
    {"variant": "norm.x"}]})");
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->size(), 3u);
  EXPECT_EQ((*v)[0].spec.id(), "scale.v1");
  EXPECT_EQ((*v)[0].spec.features, (std::vector<std::string>{"simt", "ldmatrix"}));
  EXPECT_EQ((*v)[0].status, "built");
  EXPECT_EQ((*v)[1].spec.features, (std::vector<std::string>{"tcgen05"}));
  EXPECT_EQ((*v)[1].reason, "needs tcgen05");
  EXPECT_EQ((*v)[2].status, "built") << "a variant without a status is one the harness holds";
  EXPECT_EQ(parse_list_variants("{\"error\": {}}").error().message, "`list` printed no 'variants' array");
  EXPECT_EQ(parse_list_variants("not json").error().message, "`list` did not print a JSON object");
  EXPECT_EQ(parse_list_variants(R"({"variants": [{"variant": "plain"}]})").error().message,
            "`list` variants[0]: 'plain' is not family.variant");
  EXPECT_EQ(parse_list_variants(R"({"variants": [{"variant": "a.b"}, {"variant": "a.b"}]})").error().message,
            "`list` variants[1]: variant 'a.b' is listed twice");
  EXPECT_EQ(
      parse_list_variants(R"({"variants": [{"variant": "a.b", "instances": [{"name": "a.b.x", "variant": "b"}]}]})")
          .error()
          .message,
      "`list` variants[0].instances[0] has no string 'family'");
  EXPECT_EQ(parse_list_variants(R"({"variants": [{"variant": "a.b", "instances": {}}]})").error().message,
            "`list` variants[0]: 'instances' is not an array");
}

}  // namespace
}  // namespace kport::porting
