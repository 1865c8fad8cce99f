// The op families libraries declared (migration 0019): a library's report replaces what it
// declared before, in its order; the earliest report is listed first; other libraries and
// repositories are untouched; a definition that is not JSON stores nothing.
#include "test_support.h"

namespace kport::db::test {

using FamiliesStoreTest = StoreTest;

namespace {
FamilyRecord family(const std::string& name, const std::string& dims = R"(["rows","cols"])") {
  return FamilyRecord{"", "", name, R"({"name":")" + name + R"(","dims":)" + dims + "}", 0};
}
}  // namespace

TEST_F(FamiliesStoreTest, AReportReplacesTheLibrarysEarlierOneAndTheNewestComesLast) {
  EXPECT_TRUE(ok(m_store->list_families()).empty()) << "a fresh database knows no reported family";
  ok(m_store->put_families("norm", "norm-lib", {family("layernorm"), family("rmsnorm_fused")}));
  *m_now += 1000;
  ok(m_store->put_families("rope", "rope-lib", {family("rope", R"(["t","d"])")}));
  auto all = ok(m_store->list_families());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].name, "layernorm");
  EXPECT_EQ(all[0].repo, "norm");
  EXPECT_EQ(all[0].library, "norm-lib");
  EXPECT_EQ(all[0].definition_json, R"({"name":"layernorm","dims":["rows","cols"]})");
  EXPECT_EQ(all[1].name, "rmsnorm_fused");
  EXPECT_EQ(all[2].name, "rope");
  EXPECT_EQ(all[2].updated_ms, 1'001'000);

  // The library's next build declares one family: the other is forgotten.
  *m_now += 1000;
  ok(m_store->put_families("norm", "norm-lib", {family("layernorm", R"(["rows","cols","groups"])")}));
  all = ok(m_store->list_families());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "rope");
  EXPECT_EQ(all[1].name, "layernorm");
  EXPECT_EQ(all[1].definition_json, R"({"name":"layernorm","dims":["rows","cols","groups"]})");
  // An empty report forgets them all.
  ok(m_store->put_families("norm", "norm-lib", {}));
  all = ok(m_store->list_families());
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].name, "rope");
}

TEST_F(FamiliesStoreTest, ARecordWithoutANameOrWithADefinitionThatIsNotJsonStoresNothing) {
  ok(m_store->put_families("norm", "norm-lib", {family("layernorm")}));
  auto st = m_store->put_families("norm", "norm-lib", {family("rope"), FamilyRecord{"", "", "", "{}", 0}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::invalid_argument);
  EXPECT_EQ(st.error().message, "a family of library 'norm-lib' needs a name");
  st = m_store->put_families("norm", "norm-lib", {FamilyRecord{"", "", "rope", "{not json", 0}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::invalid_argument);
  auto all = ok(m_store->list_families());
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].name, "layernorm");
}

}  // namespace kport::db::test
