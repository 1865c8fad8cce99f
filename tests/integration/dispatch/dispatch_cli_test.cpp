// kport-dispatch on a snapshot downloaded from a real coordinator: check and lookup
// answer as /api/v1/best does, and a corrupt, stale or wrong-commit snapshot is refused
// with a message and exit status 1, never answered from.
#include <chrono>
#include <fstream>
#include <thread>

#include "dispatch_fixture.h"

namespace kport::testing {
namespace json = boost::json;

class DispatchCliTest : public DispatchTest {
 protected:
  void SetUp() override {
    DispatchTest::SetUp();
    seed();
    auto reply = snapshot();
    ASSERT_EQ(reply.status, 200) << reply.raw;
    m_snapshot_text = reply.raw;
    m_file = (dir.path() / "snap.json").string();
    write(m_file, m_snapshot_text);
  }

  static void write(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }

  int cli(const std::vector<std::string>& args, std::string& out) { return run_to_exit(KPORT_DISPATCH_BIN, args, out); }

  std::string m_snapshot_text, m_file;
};

TEST_F(DispatchCliTest, CheckSummarizesAValidSnapshot) {
  std::string out;
  ASSERT_EQ(
      cli({"check", "--snapshot", m_file, "--max-age", "3600", "--commit", commit_sha(2).substr(0, 12), "--json"}, out),
      0)
      << out;
  auto doc = json::parse(out);
  EXPECT_EQ(doc.at("ok").as_bool(), true);
  EXPECT_EQ(doc.at("gpu_model").as_string(), "NVIDIA H200");
  EXPECT_EQ(doc.at("commits").at(0).as_string(), commit_sha(2));
  EXPECT_EQ(doc.at("tables").as_array().size(), 6u);  // gemm bf16/fp16, attention, rmsnorm, softmax fp32/fp16
  ASSERT_EQ(cli({"check", "--snapshot", m_file}, out), 0) << out;
  EXPECT_NE(out.find("snapshot of NVIDIA H200"), std::string::npos) << out;
}

TEST_F(DispatchCliTest, LookupPrintsTheApisBest) {
  const std::string shape = "m=3000,n=5000,k=2000";
  auto api = get("/api/v1/best?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=" + shape);
  ASSERT_EQ(api.status, 200) << api.raw;
  ASSERT_EQ(api.body.at("kind").as_string(), "measured") << api.raw;
  std::string out;
  ASSERT_EQ(cli({"lookup", "--snapshot", m_file, "--op", "gemm", "--dtype", "bf16", "--shape", shape, "--json"}, out),
            0)
      << out;
  auto doc = json::parse(out);
  EXPECT_EQ(doc.at("status").as_string(), "nearest");
  EXPECT_EQ(doc.at("instance"), api.body.at("best"));
  EXPECT_EQ(doc.at("matched_shape"), api.body.at("matched_shape"));
  ASSERT_EQ(cli({"lookup", "--snapshot", m_file, "--op", "gemm", "--dtype", "bf16", "--shape", shape}, out), 0) << out;
  EXPECT_EQ(out.substr(0, out.find('\n')), std::string(api.body.at("best").as_string())) << out;
}

TEST_F(DispatchCliTest, LookupSaysPlainlyWhenKportDoesNotKnow) {
  std::string out;
  EXPECT_EQ(
      cli({"lookup", "--snapshot", m_file, "--op", "gemm", "--dtype", "fp32", "--shape", "m=1,n=1,k=1", "--json"}, out),
      3)
      << out;
  EXPECT_EQ(json::parse(out.substr(0, out.find('\n'))).at("status").as_string(), "unknown") << out;
  EXPECT_EQ(
      cli({"lookup", "--snapshot", m_file, "--op", "softmax", "--dtype", "fp16", "--shape", "rows=1,cols=1024"}, out),
      3)
      << out;
  EXPECT_NE(out.find("no_best"), std::string::npos) << out;
  EXPECT_EQ(cli({"lookup", "--snapshot", m_file, "--op", "gemm", "--dtype", "bf16", "--shape", "m=1;n=2"}, out), 2)
      << out;
  EXPECT_NE(out.find("not key=value"), std::string::npos) << out;
}

TEST_F(DispatchCliTest, ACorruptSnapshotIsRefused) {
  const std::string truncated = (dir.path() / "truncated.json").string();
  write(truncated, m_snapshot_text.substr(0, m_snapshot_text.size() - 100));
  std::string out;
  EXPECT_EQ(
      cli({"lookup", "--snapshot", truncated, "--op", "gemm", "--dtype", "bf16", "--shape", "m=1,n=1024,k=1024"}, out),
      1)
      << out;
  EXPECT_NE(out.find("snapshot refused (bad_json)"), std::string::npos) << out;

  // A figure edited by hand: valid JSON, a different answer, the checksum no longer holds.
  std::string edited = m_snapshot_text;
  auto at = edited.find("\"median_us\":");
  ASSERT_NE(at, std::string::npos);
  edited.insert(at + 12, "1");
  const std::string tampered = (dir.path() / "tampered.json").string();
  write(tampered, edited);
  EXPECT_EQ(cli({"check", "--snapshot", tampered}, out), 1) << out;
  EXPECT_NE(out.find("checksum mismatch"), std::string::npos) << out;

  auto doc = json::parse(m_snapshot_text).as_object();
  doc["schema_version"] = 99;
  const std::string future = (dir.path() / "future.json").string();
  write(future, json::serialize(doc));
  EXPECT_EQ(cli({"check", "--snapshot", future, "--json"}, out), 1) << out;
  EXPECT_EQ(json::parse(out.substr(0, out.find('\n'))).at("error").as_string(), "schema_version") << out;
  EXPECT_EQ(cli({"check", "--snapshot", (dir.path() / "absent.json").string()}, out), 1) << out;
  EXPECT_NE(out.find("cannot open"), std::string::npos) << out;
}

TEST_F(DispatchCliTest, AStaleOrWrongCommitSnapshotIsRefused) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  std::string out;
  EXPECT_EQ(cli({"lookup", "--snapshot", m_file, "--max-age", "0", "--op", "gemm", "--dtype", "bf16", "--shape",
                 "m=1,n=1024,k=1024"},
                out),
            1)
      << out;
  EXPECT_NE(out.find("snapshot refused (stale)"), std::string::npos) << out;
  EXPECT_EQ(cli({"check", "--snapshot", m_file, "--commit", commit_sha(1)}, out), 1) << out;
  EXPECT_NE(out.find("wrong_commit"), std::string::npos) << out;
  EXPECT_NE(out.find(commit_sha(2)), std::string::npos) << out;
  EXPECT_EQ(cli({"check", "--snapshot", m_file, "--gpu", "NVIDIA B200"}, out), 1) << out;
  EXPECT_NE(out.find("wrong_gpu"), std::string::npos) << out;
  EXPECT_EQ(cli({"check", "--snapshot", m_file, "--max-age", "soon"}, out), 2) << out;
  EXPECT_EQ(cli({"frobnicate"}, out), 2) << out;
}

}  // namespace kport::testing
