// The op families the coordinator knows: kport's own from kernels/kport.json, then what
// builds reported, stored and read back; a declaration that does not hold stores nothing.
#include "families.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

namespace kport::coordinator {
namespace {
namespace json = boost::json;

api::Family layernorm() {
  api::Family f;
  f.name = "layernorm";
  f.description = "y = (x - mean) / std * w per row";
  f.dims = {api::FamilyDim{"rows", std::nullopt, 1, 1 << 30}, api::FamilyDim{"cols", std::nullopt, 1, 1 << 30}};
  f.dtypes = {"bf16", "e4m3"};
  f.bytes = "2*rows*cols*bytes_per_elem";
  f.bound = "memory";
  f.example = "rows=4096,cols=8192";
  return f;
}

class FamiliesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = std::filesystem::temp_directory_path() / ("kport-families-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(m_dir);
    db::Options o;
    o.path = (m_dir / "kport.db").string();
    auto s = db::Store::open(o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    m_store = std::move(*s);
    auto builtin = Families::load_builtin(KPORT_KERNELS_MANIFEST);
    ASSERT_TRUE(builtin.ok()) << builtin.error().message;
    m_builtin = std::move(*builtin);
  }
  void TearDown() override {
    m_store.reset();
    std::filesystem::remove_all(m_dir);
  }
  std::filesystem::path m_dir;
  std::unique_ptr<db::Store> m_store;
  std::vector<porting::OpFamily> m_builtin;
};

TEST_F(FamiliesTest, AFreshDatabaseKnowsKportsOwnFamilies) {
  Families families(m_builtin);
  ASSERT_TRUE(families.reload(*m_store).ok());
  const auto known = families.current();
  EXPECT_EQ(known->names(), "gemm, attention, gemm_fp8, grouped_gemm, grouped_gemm_fp8, rmsnorm, softmax");
  EXPECT_EQ(known->find("softmax")->bound(), porting::Bound::memory);
  EXPECT_EQ(known->find("gemm")->library, "kport-kernels");
  EXPECT_EQ(known->find("gemm")->repo, "");
}

TEST_F(FamiliesTest, AReportedFamilyIsKnownAfterARestartAndAReportReplacesTheLibrarysEarlierOne) {
  {
    Families families(m_builtin);
    api::LibraryFamilies declared{"norm-lib", 0, {layernorm()}};
    ASSERT_TRUE(families.learn(*m_store, "norm", declared).ok());
    const auto known = families.current();
    ASSERT_NE(known->find("layernorm"), nullptr);
    EXPECT_EQ(known->names(), "gemm, attention, gemm_fp8, grouped_gemm, grouped_gemm_fp8, rmsnorm, softmax, layernorm");
  }
  Families restarted(m_builtin);
  ASSERT_TRUE(restarted.reload(*m_store).ok());
  const porting::OpFamily* ln = restarted.current()->find("layernorm");
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(ln->library, "norm-lib");
  EXPECT_EQ(ln->repo, "norm");
  EXPECT_EQ(ln->dtypes, (std::vector<std::string>{"bf16", "e4m3"}));
  EXPECT_EQ(ln->bound(), porting::Bound::memory);
  EXPECT_EQ(ln->example, "rows=4096,cols=8192");
  EXPECT_EQ(to_api_family(*ln).bytes, "2*rows*cols*bytes_per_elem");

  // The library's next report drops layernorm and declares rope: layernorm is forgotten.
  api::Family rope = layernorm();
  rope.name = "rope";
  rope.example.reset();
  ASSERT_TRUE(restarted.learn(*m_store, "norm", api::LibraryFamilies{"norm-lib", 0, {rope}}).ok());
  EXPECT_EQ(restarted.current()->find("layernorm"), nullptr);
  EXPECT_NE(restarted.current()->find("rope"), nullptr);
}

// A dimension whose default is left out of a shape's text (kport's grouped gemms' `valid`)
// keeps that through a report, the store and a restart, and a shape of it is written without
// it at its default.
TEST_F(FamiliesTest, ADimensionLeftOutAtItsDefaultStaysSoThroughTheStore) {
  const auto builtin = Families(m_builtin).current();
  const porting::OpFamily* grouped = builtin->find("grouped_gemm");
  ASSERT_NE(grouped, nullptr);
  EXPECT_TRUE(grouped->dims.back().omit_default) << "kernels/kport.json's valid";
  EXPECT_EQ(json::serialize(api::to_json(to_api_family(*grouped).dims.back())),
            R"({"name":"valid","min":0,"max":1073741824,"default":1073741824,"omit_default":true,"full_at":"m"})");
  api::Family ln = layernorm();
  ln.dims.push_back(api::FamilyDim{"mode", 0, 0, 3});
  ln.dims.back().omit_default = true;
  {
    Families families(m_builtin);
    ASSERT_TRUE(families.learn(*m_store, "norm", api::LibraryFamilies{"norm-lib", 0, {ln}}).ok());
  }
  Families restarted(m_builtin);
  ASSERT_TRUE(restarted.reload(*m_store).ok());
  const porting::OpFamily* stored = restarted.current()->find("layernorm");
  ASSERT_NE(stored, nullptr);
  ASSERT_EQ(stored->dims.size(), 3u);
  EXPECT_TRUE(stored->dims[2].omit_default);
  auto at_default = porting::op_shape(*stored, "rows=2,cols=8,mode=0");
  ASSERT_TRUE(at_default.ok()) << at_default.error().message;
  EXPECT_EQ(at_default->text, "rows=2,cols=8");
  auto other = porting::op_shape(*stored, "rows=2,cols=8,mode=1");
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ(other->text, "rows=2,cols=8,mode=1");
  api::Family no_default = layernorm();
  no_default.dims[1].omit_default = true;
  auto st = restarted.learn(*m_store, "norm", api::LibraryFamilies{"norm-lib", 0, {no_default}});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("omit_default"), std::string::npos) << st.error().message;
}

TEST_F(FamiliesTest, ADeclarationThatDoesNotHoldIsRefusedNamingItAndStoresNothing) {
  Families families(m_builtin);
  api::Family bad = layernorm();
  bad.flops = "2*rows*k";
  auto st = families.learn(*m_store, "norm", api::LibraryFamilies{"norm-lib", 0, {layernorm(), bad}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::invalid_argument);
  EXPECT_EQ(st.error().message,
            "field 'library.families[1]' of library norm-lib: field 'flops' of family layernorm: '2*rows*k' at column "
            "8: unknown name 'k' (the names are rows, cols, bytes_per_elem)");
  api::Family twice = layernorm();
  st = families.learn(*m_store, "norm", api::LibraryFamilies{"norm-lib", 0, {layernorm(), twice}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "field 'library.families[1]': family 'layernorm' is declared twice");
  api::Family bound = layernorm();
  bound.bound = "io";
  st = families.learn(*m_store, "norm", api::LibraryFamilies{"norm-lib", 0, {bound}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "field 'library.families[0].bound' must be \"memory\" or \"compute\", not \"io\"");
  auto stored = m_store->list_families();
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(stored->empty());
  EXPECT_EQ(families.current()->find("layernorm"), nullptr);
}

TEST_F(FamiliesTest, AFamilysGeometryKeysAreKeptAndAnsweredAndADeclarationThatDoesNotHoldIsRefused) {
  EXPECT_EQ(Families(m_builtin).current()->find("gemm")->geometry.dims.at(2).split, std::vector<std::string>{"split_k"})
      << "kport's own declare theirs in kernels/kport.json";
  api::Family ln = layernorm();
  ln.geometry = {api::FamilyGeometryDim{"rows", {"rows_per_cta"}, {}, {}, {}, {}},
                 api::FamilyGeometryDim{"cols", {}, {"cols_per_step"}, {}, {"max_cols_bytes"}, {"vec_bytes"}}};
  {
    Families families(m_builtin);
    ASSERT_TRUE(families.learn(*m_store, "norm", api::LibraryFamilies{"norm-lib", 0, {ln}}).ok());
  }
  Families restarted(m_builtin);
  ASSERT_TRUE(restarted.reload(*m_store).ok());
  const porting::OpFamily* known = restarted.current()->find("layernorm");
  ASSERT_NE(known, nullptr);
  ASSERT_EQ(known->geometry.dims.size(), 2u);
  EXPECT_EQ(known->geometry.dims[0].tile, std::vector<std::string>{"rows_per_cta"});
  EXPECT_EQ(known->geometry.dims[1].align_bytes, std::vector<std::string>{"vec_bytes"});
  // GET /api/v1/families answers it as it was declared.
  EXPECT_EQ(json::serialize(api::to_json(to_api_family(*known)).at("geometry")),
            R"({"rows":{"tile":"rows_per_cta"},"cols":{"step":"cols_per_step","max_bytes":"max_cols_bytes",)"
            R"("align_bytes":"vec_bytes"}})");

  // The byte limits travel too (a cluster kernel's rows), and the wire's roles are the
  // manifest's, in its order.
  api::Family limited = layernorm();
  limited.name = "layernorm_cluster";
  limited.geometry = {api::FamilyGeometryDim{
      "cols", {}, {}, {}, {}, {}, {}, {"run_min_row_bytes"}, {"run_max_row_bytes"}, {"run_row_align_bytes"}}};
  ASSERT_TRUE(restarted.learn(*m_store, "norm", api::LibraryFamilies{"norm-lib", 0, {ln, limited}}).ok());
  const porting::OpFamily* cluster = restarted.current()->find("layernorm_cluster");
  ASSERT_NE(cluster, nullptr);
  EXPECT_EQ(cluster->geometry.dims.at(0).run_min_bytes, std::vector<std::string>{"run_min_row_bytes"});
  EXPECT_EQ(cluster->geometry.dims.at(0).run_align_bytes, std::vector<std::string>{"run_row_align_bytes"});
  EXPECT_EQ(json::serialize(api::to_json(to_api_family(*cluster)).at("geometry")),
            R"({"cols":{"run_min_bytes":"run_min_row_bytes","run_max_bytes":"run_max_row_bytes",)"
            R"("run_align_bytes":"run_row_align_bytes"}})");
  ASSERT_EQ(std::size(api::k_geometry_roles), std::size(porting::k_dim_roles));
  for (std::size_t i = 0; i < std::size(porting::k_dim_roles); ++i)
    EXPECT_EQ(api::k_geometry_roles[i].first, porting::k_dim_roles[i].first);

  api::Family bad = layernorm();
  bad.geometry = {api::FamilyGeometryDim{"width", {"w"}, {}, {}, {}, {}}};
  auto st = restarted.learn(*m_store, "norm", api::LibraryFamilies{"norm-lib", 0, {bad}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "field 'library.families[0]' of library norm-lib: field 'geometry.width' of family layernorm: 'width' is "
            "not a dimension of the family (rows, cols)");
  EXPECT_EQ(restarted.current()->find("layernorm")->geometry.dims.size(), 2u) << "what was declared before stays";
}

TEST_F(FamiliesTest, ALibraryCannotRedeclareAnotherLibrarysFamily) {
  Families families(m_builtin);
  api::Family softmax = layernorm();
  softmax.name = "softmax";
  softmax.bound = "compute";
  auto st = families.learn(*m_store, "other", api::LibraryFamilies{"other-lib", 0, {layernorm(), softmax}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "field 'library.families[1]': family 'softmax' is declared by library kport-kernels (kport's own); a "
            "library declares only families of its own: give other-lib's another name");
  EXPECT_EQ(families.current()->find("softmax")->library, "kport-kernels");
  EXPECT_EQ(families.current()->find("softmax")->bound(), porting::Bound::memory);
  EXPECT_EQ(families.current()->find("layernorm"), nullptr) << "nothing of a refused report is stored";
  // A family another reported library owns: the same.
  ASSERT_TRUE(families.learn(*m_store, "norm", api::LibraryFamilies{"norm-lib", 0, {layernorm()}}).ok());
  st = families.learn(*m_store, "other", api::LibraryFamilies{"other-lib", 0, {layernorm()}});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("family 'layernorm' is declared by library norm-lib (repository norm)"),
            std::string::npos)
      << st.error().message;
  // kport's own library may change its own families.
  api::Family own = layernorm();
  own.name = "softmax";
  own.bound = "memory";
  own.dtypes = {"bf16"};
  ASSERT_TRUE(families.learn(*m_store, "kernels", api::LibraryFamilies{"kport-kernels", 0, {own}}).ok());
  EXPECT_EQ(families.current()->find("softmax")->dtypes, std::vector<std::string>{"bf16"});
}

TEST(FamiliesFile, AnUnreadableManifestIsAnErrorNamingIt) {
  auto r = Families::load_builtin("/nonexistent/kport.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("kport's own op families (/nonexistent/kport.json)"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace kport::coordinator
