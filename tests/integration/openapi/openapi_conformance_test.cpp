// The served OpenAPI document against what the same coordinator answers: a seeded
// coordinator (targets, kernels, a build and a check through the runner protocol, a
// push, measure requests, a revalidation) is asked every documented operation, and
// every answer is validated against the schema the document gives its status and
// media type. Response schemas admit no undocumented field and require what is always
// there, so a handler that adds, drops or retypes a field fails here until the
// document follows. Every documented JSON success answer must have been seen once.
#include <filesystem>
#include <fstream>
#include <thread>

#include "kport/common/crypto.h"
#include "openapi_fixture.h"
#include "test_pki.h"

namespace kport::testing {
namespace json = boost::json;
namespace {

const std::string k_gpu = "NVIDIA%20H200";

// A result upload as the protocol test writes it, naming its harness.
json::object result_with_harness(const std::string& instance, const std::string& shape, double median_us,
                                 const std::string& status = "passed") {
  json::object r = gemm_upload(instance, shape, median_us, status);
  r["env"] = json::object{{"reproduce", json::object{{"harness_sha256", std::string(64, 'b')}}}};
  return r;
}

TEST_F(OpenApiConformance, EveryAnswerMatchesItsDocumentedSchema) {
  const std::string sha1 = commit_sha(1), sha2 = commit_sha(2);
  // ---- probes ----
  ask("get", "/healthz", "/healthz");
  ask("get", "/readyz", "/readyz");
  ask("get", "/metrics", "/metrics");
  ask("get", "/api/v1/openapi.json", "/api/v1/openapi.json");
  ask("get", "/api/v1/queue", "/api/v1/queue");
  {
    const std::string head = event_stream_head();
    EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
    EXPECT_NE(head.find("Content-Type: text/event-stream"), std::string::npos) << head;
    const auto& events = schema->document().at("paths").at("/api/v1/events").at("get").at("responses").at("200");
    EXPECT_TRUE(events.at("content").as_object().contains("text/event-stream"));
  }
  // ---- catalog ----
  auto t =
      ask_json("put", "/api/v1/targets/{target}", "/api/v1/targets/sm_90a",
               json::object{{"arch", "9.0"}, {"features", json::array{"wgmma", "tma"}}, {"toolkit", "13.0"}}, k_admin);
  ASSERT_EQ(t.status, 201) << t.raw;
  EXPECT_EQ(ask_json("put", "/api/v1/targets/{target}", "/api/v1/targets/sm_90a",
                     json::object{{"arch", "9.0"}, {"features", json::array{"wgmma", "tma"}}}, k_admin)
                .status,
            200);
  EXPECT_EQ(ask_json("put", "/api/v1/targets/{target}", "/api/v1/targets/sm_100a",
                     json::object{{"arch", "10.0"}, {"features", json::array{"tcgen05"}}}, k_admin)
                .status,
            201);
  ask("get", "/api/v1/targets", "/api/v1/targets");
  ask("get", "/api/v1/targets/{target}", "/api/v1/targets/sm_90a");
  ask("get", "/api/v1/targets/{target}", "/api/v1/targets/sm_999");
  json::array kernels;
  for (auto [name, features] : {std::pair{"gemm.wgmma_tma.128x256", json::array{"wgmma", "tma"}},
                                std::pair{"gemm.mma_sync.128x128", json::array{"mma_sync"}}}) {
    std::string n = name;
    kernels.push_back(json::object{{"name", n},
                                   {"family", "gemm"},
                                   {"variant", n.substr(5, n.rfind('.') - 5)},
                                   {"features", features},
                                   {"config", json::object{{"tile", "128x256"}}},
                                   {"dtypes", json::array{"bf16"}}});
  }
  json::array variants{
      json::object{{"family", "gemm"}, {"variant", "wgmma_tma"}, {"features", json::array{"wgmma", "tma"}}},
      json::object{{"family", "gemm"}, {"variant", "mma_sync"}, {"features", json::array{"mma_sync"}}}};
  EXPECT_EQ(ask_json("put", "/api/v1/kernels", "/api/v1/kernels",
                     json::object{{"instances", kernels}, {"variants", variants}}, k_admin)
                .status,
            200);
  ask("get", "/api/v1/kernels", "/api/v1/kernels?family=gemm");
  // A library's families, declared with the catalog, and the families known.
  json::object layernorm{{"name", "layernorm"},
                         {"description", "per-row layer norm"},
                         {"dims", json::array{json::object{{"name", "rows"}},
                                              json::object{{"name", "groups"}, {"default", 1}, {"min", 1}, {"max", 8}},
                                              json::object{{"name", "cols"}}}},
                         {"dtypes", json::array{"bf16", "e4m3"}},
                         {"bytes", "2*rows*cols*bytes_per_elem"},
                         {"bound", "memory"},
                         {"example", "rows=4096,cols=8192"}};
  EXPECT_EQ(
      ask_json("put", "/api/v1/kernels", "/api/v1/kernels",
               json::object{{"library", json::object{{"library", "norm-lib"}, {"families", json::array{layernorm}}}}},
               k_admin)
          .status,
      200);
  layernorm["flops"] = "rows*(cols";
  EXPECT_EQ(
      ask_json("put", "/api/v1/kernels", "/api/v1/kernels",
               json::object{{"library", json::object{{"library", "norm-lib"}, {"families", json::array{layernorm}}}}},
               k_admin)
          .status,
      400);
  ask("get", "/api/v1/families", "/api/v1/families");
  EXPECT_EQ(ask_json("post", "/api/v1/repositories", "/api/v1/repositories",
                     json::object{{"name", "org/kernels"}, {"url", "https://example.com/org/kernels.git"}}, k_admin)
                .status,
            201);
  ask("get", "/api/v1/repositories", "/api/v1/repositories");
  // ---- bisections: a real three-commit repository on a target and GPU of their own,
  // driven to its end before anything else is queued (bisect.* below) ----
  {
    const std::string src = (dir.path() / "bisect-src").string(), bare = (dir.path() / "bisect.git").string();
    auto sh = [&](const std::string& cmd) {
      const std::string full =
          "GIT_AUTHOR_NAME=Dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=Dev "
          "GIT_COMMITTER_EMAIL=dev@example.com sh -c '" +
          cmd + "' > " + (dir.path() / "git.out").string() + " 2>&1";
      EXPECT_EQ(std::system(full.c_str()), 0) << cmd;
      std::ifstream in(dir.path() / "git.out");
      std::string line;
      std::getline(in, line);
      return line;
    };
    sh("git init -q --bare " + bare + " && mkdir -p " + src + " && cd " + src + " && git init -q -b main");
    std::vector<std::string> c;
    for (int i = 0; i < 4; ++i)
      c.push_back(sh("cd " + src + " && echo " + std::to_string(i) + " > f && git add f && git commit -q -m c" +
                     std::to_string(i) + " && git rev-parse HEAD"));
    sh("cd " + src + " && git push -q " + bare + " main");
    EXPECT_EQ(post("/api/v1/repositories", json::object{{"name", "local/bisect"}, {"url", bare}}, k_admin).status, 201);
    for (int i = 0; i < 4; ++i) {
      json::object commit{{"sha", c[i]}, {"repo", "local/bisect"}};
      if (i > 0) commit["parent"] = c[i - 1];
      EXPECT_EQ(post("/api/v1/commits", commit, k_admin).status, 201);
    }
    EXPECT_EQ(
        put("/api/v1/targets/sm_120a", json::object{{"arch", "12.0"}, {"features", json::array{}}}, k_admin).status,
        201);
    const json::object caps{{"toolkit", "13.0"}, {"arch", "12.0"},      {"gpu_model", "NVIDIA RTX PRO 6000"},
                            {"driver", "580.1"}, {"gpu_uuid", "GPU-9"}, {"targets", json::array{"sm_120a"}}};
    auto bb = post("/api/v1/runners/register",
                   json::object{{"name", "bisect-build"}, {"role", "build"}, {"capabilities", caps}}, k_registration);
    auto bg = post("/api/v1/runners/register",
                   json::object{{"name", "bisect-gpu"}, {"role", "gpu"}, {"capabilities", caps}}, k_registration);
    ASSERT_EQ(bb.status, 201) << bb.raw;
    ASSERT_EQ(bg.status, 201) << bg.raw;
    const std::string b_tok(bb.body.at("token").as_string()), g_tok(bg.body.at("token").as_string());
    // Plays one build and its check: commits 1 and 2 fail the case's numerics.
    auto serve = [&](bool complete_check) -> std::string {
      auto job = post("/api/v1/runners/claim?wait=1", json::object{}, b_tok).body.at("job");
      if (!job.is_object()) return "";
      const std::string id = std::to_string(job.at("id").as_int64()), sha(job.at("commit").as_string());
      json::object rec{{"family", "gemm"}, {"variant", "probe"}, {"status", "ok"}};
      post("/api/v1/jobs/" + id + "/builds", json::object{{"attempt", 1}, {"records", json::array{rec}}}, b_tok);
      post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}}, b_tok);
      auto check = post("/api/v1/runners/claim?wait=1", json::object{}, g_tok).body.at("job");
      if (!check.is_object()) return sha;
      const std::string cid = std::to_string(check.at("id").as_int64());
      json::object r = result_with_harness("gemm.probe.x", "m=64,n=64,k=64", 10.0, sha == c[0] ? "passed" : "failed");
      r["target"] = "sm_120a";
      r["gpu_model"] = "NVIDIA RTX PRO 6000";
      r["arch"] = "12.0";
      r["gpu_uuid"] = "GPU-9";
      // Each commit's own harness: the same harness passing and failing would be a flake.
      r["env"] = json::object{{"reproduce", json::object{{"harness_sha256", crypto::sha256_hex(sha)}}}};
      EXPECT_EQ(
          post("/api/v1/jobs/" + cid + "/results", json::object{{"attempt", 1}, {"results", json::array{r}}}, g_tok)
              .status,
          200);
      if (complete_check) post("/api/v1/jobs/" + cid + "/complete", json::object{{"attempt", 1}}, g_tok);
      return sha + ":" + cid;
    };
    auto pipeline = [&](const std::string& sha) {
      EXPECT_EQ(
          post(
              "/api/v1/pipelines",
              json::object{
                  {"commit", sha}, {"repo", "local/bisect"}, {"reason", "manual"}, {"targets", json::array{"sm_120a"}}},
              k_admin)
              .status,
          201);
    };
    pipeline(c[0]);
    serve(true);
    pipeline(c[2]);
    const std::string held = serve(false);  // its check still running: the bisection below is the first
    const json::object by_hand{
        {"kind", "numerics_failure"}, {"target", "sm_120a"}, {"gpu_model", "NVIDIA RTX PRO 6000"}, {"bad", c[2]}};
    auto opened = ask_json("post", "/api/v1/bisections", "/api/v1/bisections", by_hand, k_admin);
    EXPECT_EQ(opened.status, 201) << opened.raw;
    post("/api/v1/jobs/" + held.substr(held.find(':') + 1) + "/complete", json::object{{"attempt", 1}}, g_tok);
    EXPECT_EQ(ask_json("post", "/api/v1/bisections", "/api/v1/bisections", by_hand, k_admin).status, 200);
    json::object wrong = by_hand;
    wrong["kind"] = "slow";
    ask_json("post", "/api/v1/bisections", "/api/v1/bisections", wrong, k_admin);
    for (int i = 0; i < 8 && !serve(true).empty(); ++i) {}
    if (opened.status == 201) {
      auto b = ask("get", "/api/v1/bisections/{id}",
                   "/api/v1/bisections/" + std::to_string(opened.body.at("id").as_int64()));
      EXPECT_EQ(b.body.at("state").as_string(), "done") << b.raw;
      EXPECT_EQ(b.body.at("first_bad").as_string(), c[1]) << b.raw;
    }
    // Commit 3 fails too: bisected by hand from commit 0, then cancelled by hand with its
    // open probes.
    pipeline(c[3]);
    serve(true);
    json::object from_start = by_hand;
    from_start["bad"] = c[3];
    from_start["good"] = c[0];
    from_start["cases"] = json::array{"gemm.probe.x bf16 m=64,n=64,k=64"};
    auto running = post("/api/v1/bisections", from_start, k_admin);
    ASSERT_TRUE(running.status == 201 || running.status == 200) << running.raw;
    ASSERT_EQ(running.body.at("state").as_string(), "running") << running.raw;
    const std::string cancel_path =
        "/api/v1/bisections/" + std::to_string(running.body.at("id").as_int64()) + "/cancel";
    auto cancelled = ask_json("post", "/api/v1/bisections/{id}/cancel", cancel_path,
                              json::object{{"reason", "not needed"}}, k_admin);
    EXPECT_EQ(cancelled.status, 200) << cancelled.raw;
    if (cancelled.status == 200) {
      EXPECT_EQ(cancelled.body.at("state").as_string(), "cancelled") << cancelled.raw;
      EXPECT_NE(std::string(cancelled.body.at("summary").as_string()).find("not needed"), std::string::npos);
      for (const auto& p : cancelled.body.at("probes").as_array())
        EXPECT_EQ(p.at("status").as_string(), "cancelled") << cancelled.raw;
    }
    EXPECT_EQ(ask_json("post", "/api/v1/bisections/{id}/cancel", cancel_path, json::object{}, k_admin).status, 409);
    EXPECT_EQ(
        ask_json("post", "/api/v1/bisections/{id}/cancel", "/api/v1/bisections/999/cancel", json::object{}, k_admin)
            .status,
        404);
    ask("get", "/api/v1/bisections", "/api/v1/bisections?state=cancelled");
    ask("get", "/api/v1/bisections/{id}", "/api/v1/bisections/999");
    ask("get", "/api/v1/bisections", "/api/v1/bisections?commit=" + c[2]);
    ask("get", "/api/v1/bisections", "/api/v1/bisections?state=later");
  }
  // ---- forge connections (the forge is a closed port: its deliveries stay pending) ----
  std::ofstream(dir.path() / "forge-token") << "token\n";
  std::filesystem::permissions(dir.path() / "forge-token",
                               std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const json::object forge{{"kind", "gitea"},
                           {"api_url", "http://127.0.0.1:1/api/v1"},
                           {"project", "org/kernels"},
                           {"token_file", (dir.path() / "forge-token").string()}};
  EXPECT_EQ(
      ask_json("put", "/api/v1/repositories/{name}/forge", "/api/v1/repositories/org%2Fkernels/forge", forge, k_admin)
          .status,
      200);
  EXPECT_EQ(
      ask_json("put", "/api/v1/repositories/{name}/forge", "/api/v1/repositories/nope/forge", forge, k_admin).status,
      404);
  json::object unreadable = forge;
  unreadable["token_file"] = (dir.path() / "missing").string();
  EXPECT_EQ(ask_json("put", "/api/v1/repositories/{name}/forge", "/api/v1/repositories/org%2Fkernels/forge", unreadable,
                     k_admin)
                .status,
            422);
  ask("get", "/api/v1/forges", "/api/v1/forges");
  // A GitHub App's connection answers its ids, its key file and auth github_app; then the
  // token connection again.
  ASSERT_EQ(make_rsa_key(dir.path() / "app", "app"), "");
  const json::object app{{"kind", "github"},         {"api_url", "http://127.0.0.1:1"},
                         {"project", "org/kernels"}, {"app_id", 42},
                         {"installation_id", 4242},  {"private_key_file", (dir.path() / "app" / "app.pem").string()}};
  auto as_app =
      ask_json("put", "/api/v1/repositories/{name}/forge", "/api/v1/repositories/org%2Fkernels/forge", app, k_admin);
  EXPECT_EQ(as_app.status, 200) << as_app.raw;
  ask("get", "/api/v1/forges", "/api/v1/forges");
  json::object both = app;
  both["token_file"] = (dir.path() / "forge-token").string();
  EXPECT_EQ(
      ask_json("put", "/api/v1/repositories/{name}/forge", "/api/v1/repositories/org%2Fkernels/forge", both, k_admin)
          .status,
      400);
  json::object no_key = app;
  no_key["private_key_file"] = (dir.path() / "missing.pem").string();
  EXPECT_EQ(
      ask_json("put", "/api/v1/repositories/{name}/forge", "/api/v1/repositories/org%2Fkernels/forge", no_key, k_admin)
          .status,
      422);
  EXPECT_EQ(
      ask_json("put", "/api/v1/repositories/{name}/forge", "/api/v1/repositories/org%2Fkernels/forge", forge, k_admin)
          .status,
      200);
  EXPECT_EQ(
      ask_json(
          "post", "/api/v1/commits", "/api/v1/commits",
          json::object{
              {"sha", sha1}, {"repo", "org/kernels"}, {"message", "gemm"}, {"author", "a"}, {"time_ms", 1764000000000}},
          k_admin)
          .status,
      201);
  EXPECT_EQ(ask_json("post", "/api/v1/commits", "/api/v1/commits",
                     json::object{{"sha", sha2}, {"repo", "org/kernels"}, {"parent", sha1}, {"time_ms", 1764000100000}},
                     k_admin)
                .status,
            201);
  // ---- runners ----
  json::object build_caps{{"toolkit", "13.0"}, {"targets", json::array{"sm_90a", "sm_100a"}}, {"cores", 2}};
  auto reg =
      ask_json("post", "/api/v1/runners/register", "/api/v1/runners/register",
               json::object{{"name", "builder-1"}, {"role", "build"}, {"capabilities", build_caps}}, k_registration);
  ASSERT_EQ(reg.status, 201) << reg.raw;
  const std::string builder(reg.body.at("token").as_string());
  json::object gpu_caps{{"toolkit", "13.0"}, {"arch", "9.0"},       {"gpu_model", "NVIDIA H200"},
                        {"driver", "580.1"}, {"gpu_uuid", "GPU-1"}, {"extra", json::object{{"sms", 132}}}};
  reg = ask_json("post", "/api/v1/runners/register", "/api/v1/runners/register",
                 json::object{{"name", "gpu-1"}, {"role", "gpu"}, {"capabilities", gpu_caps}}, k_registration);
  ASSERT_EQ(reg.status, 201) << reg.raw;
  const std::string gpu(reg.body.at("token").as_string());
  const std::string gpu_id = std::to_string(reg.body.at("runner").at("id").as_int64());
  ask("post", "/api/v1/runners/register", "/api/v1/runners/register", "{}", "wrong-token");
  ask("get", "/api/v1/runners", "/api/v1/runners?all=true");
  ask("get", "/api/v1/runners/{id}", "/api/v1/runners/" + gpu_id);
  ask("get", "/api/v1/runners/{id}", "/api/v1/runners/999");
  // ---- a pipeline through the protocol ----
  auto p = ask_json("post", "/api/v1/pipelines", "/api/v1/pipelines",
                    json::object{{"commit", sha1},
                                 {"repo", "org/kernels"},
                                 {"ref", "refs/heads/main"},
                                 {"targets", json::array{"sm_90a"}},
                                 {"note", "first"}},
                    k_admin);
  ASSERT_EQ(p.status, 201) << p.raw;
  const std::string pipeline = std::to_string(p.body.at("id").as_int64());
  auto none = ask("post", "/api/v1/runners/claim", "/api/v1/runners/claim?wait=0", "", gpu);
  EXPECT_TRUE(none.body.at("job").is_null()) << none.raw;
  auto claimed = ask("post", "/api/v1/runners/claim", "/api/v1/runners/claim?wait=0", "", builder);
  ASSERT_TRUE(claimed.body.at("job").is_object()) << claimed.raw;
  const std::string job = std::to_string(claimed.body.at("job").at("id").as_int64());
  ask_json("post", "/api/v1/runners/heartbeat", "/api/v1/runners/heartbeat",
           json::object{{"job", std::stoll(job)}, {"attempt", 1}}, builder);
  ask_json("post", "/api/v1/runners/heartbeat", "/api/v1/runners/heartbeat",
           json::object{{"job", std::stoll(job)}, {"attempt", 1}}, k_admin);
  const std::string blob = "harness bytes";
  const std::string blob_sha = crypto::sha256_hex(blob);
  auto up = ask("put", "/api/v1/artifacts/{sha256}",
                "/api/v1/artifacts/" + blob_sha + "?name=kport-harness-sm_90a&kind=harness&job=" + job + "&attempt=1",
                blob, builder, {}, "application/octet-stream");
  EXPECT_EQ(up.status, 201) << up.raw;
  ask("put", "/api/v1/artifacts/{sha256}", "/api/v1/artifacts/" + blob_sha + "?job=" + job + "&attempt=2", blob,
      builder, {}, "application/octet-stream");
  json::object record{
      {"target", "sm_90a"},     {"family", "gemm"},           {"variant", "wgmma_tma"},
      {"status", "ok"},         {"registers", 168},           {"spill_stores_bytes", 0},
      {"spill_loads_bytes", 0}, {"shared_mem_bytes", 196608}, {"instruction_audit", json::object{{"wgmma", 24}}},
      {"artifact", blob_sha}};
  json::object failed_record{
      {"family", "gemm"}, {"variant", "mma_sync"}, {"status", "compile_error"}, {"message", "error"}};
  auto built = ask_json("post", "/api/v1/jobs/{id}/builds", "/api/v1/jobs/" + job + "/builds",
                        json::object{{"attempt", 1}, {"records", json::array{record, failed_record}}}, builder);
  ASSERT_EQ(built.status, 200) << built.raw;
  const std::string build_id = std::to_string(built.body.at("ids").as_array()[0].as_int64());
  EXPECT_EQ(ask_json("post", "/api/v1/jobs/{id}/log", "/api/v1/jobs/" + job + "/log",
                     json::object{{"attempt", 1}, {"text", "nvcc ok\n"}}, builder)
                .status,
            200);
  ask_json("post", "/api/v1/jobs/{id}/log", "/api/v1/jobs/" + job + "/log", json::object{{"attempt", 2}, {"text", "x"}},
           builder);
  ask_json("post", "/api/v1/jobs/{id}/log", "/api/v1/jobs/999/log", json::object{{"attempt", 1}, {"text", "x"}},
           builder);
  auto done = ask_json("post", "/api/v1/jobs/{id}/complete", "/api/v1/jobs/" + job + "/complete",
                       json::object{{"attempt", 1}, {"status", "succeeded"}}, builder);
  ASSERT_EQ(done.status, 200) << done.raw;
  ask_json("post", "/api/v1/jobs/{id}/complete", "/api/v1/jobs/" + job + "/complete", json::object{{"attempt", 1}},
           gpu);
  auto check = ask("post", "/api/v1/runners/claim", "/api/v1/runners/claim?wait=1", "", gpu);
  ASSERT_TRUE(check.body.at("job").is_object()) << check.raw;
  const std::string check_job = std::to_string(check.body.at("job").at("id").as_int64());
  json::array results{result_with_harness("gemm.wgmma_tma.128x256", "m=4096,n=4096,k=4096", 210.0),
                      result_with_harness("gemm.mma_sync.128x128", "m=4096,n=4096,k=4096", 300.0),
                      result_with_harness("gemm.mma_sync.128x128", "m=1024,n=1024,k=1024", 30.0, "failed")};
  auto stored = ask_json("post", "/api/v1/jobs/{id}/results", "/api/v1/jobs/" + check_job + "/results",
                         json::object{{"attempt", 1}, {"results", results}}, gpu);
  ASSERT_EQ(stored.status, 200) << stored.raw;
  const std::string result_id = std::to_string(stored.body.at("ids").as_array()[0].as_int64());
  ask_json("post", "/api/v1/jobs/{id}/results", "/api/v1/jobs/" + check_job + "/results",
           json::object{{"attempt", 1}, {"results", json::array{}}}, gpu);
  ask_json("post", "/api/v1/jobs/{id}/builds", "/api/v1/jobs/" + check_job + "/builds",
           json::object{{"attempt", 1}, {"records", json::array{record}}}, builder);
  EXPECT_EQ(ask_json("post", "/api/v1/jobs/{id}/complete", "/api/v1/jobs/" + check_job + "/complete",
                     json::object{{"attempt", 1}}, gpu)
                .status,
            200);
  ask_json("post", "/api/v1/runners/heartbeat", "/api/v1/runners/heartbeat", json::object{}, gpu);
  // The holder rule's answers: an ended attempt, a job that does not exist.
  const json::object one_result{{"attempt", 1}, {"results", json::array{results[0]}}};
  EXPECT_EQ(
      ask_json("post", "/api/v1/jobs/{id}/results", "/api/v1/jobs/" + check_job + "/results", one_result, gpu).status,
      409);
  EXPECT_EQ(ask_json("post", "/api/v1/jobs/{id}/results", "/api/v1/jobs/999/results", one_result, gpu).status, 404);
  EXPECT_EQ(ask_json("post", "/api/v1/jobs/{id}/builds", "/api/v1/jobs/999/builds",
                     json::object{{"attempt", 1}, {"records", json::array{record}}}, builder)
                .status,
            404);
  EXPECT_EQ(
      ask_json("post", "/api/v1/jobs/{id}/complete", "/api/v1/jobs/999/complete", json::object{{"attempt", 1}}, gpu)
          .status,
      404);
  ask_json("post", "/api/v1/runners/heartbeat", "/api/v1/runners/heartbeat", json::object{{"job", 999}, {"attempt", 1}},
           gpu);
  ask_json("post", "/api/v1/runners/heartbeat", "/api/v1/runners/heartbeat",
           json::object{{"job", std::stoll(check_job)}, {"attempt", 1}}, gpu);
  ask("post", "/api/v1/jobs/{id}/cancel", "/api/v1/jobs/999/cancel", "", k_admin);
  ask("post", "/api/v1/pipelines/{id}/cancel", "/api/v1/pipelines/999/cancel", "", k_admin);
  ask_json("post", "/api/v1/admin/registration-token", "/api/v1/admin/registration-token",
           json::object{{"expires_in_s", 0}}, k_admin);
  // ---- reads over what was recorded ----
  ask("get", "/api/v1/pipelines", "/api/v1/pipelines?limit=5&reason=manual");
  ask("get", "/api/v1/pipelines", "/api/v1/pipelines?limit=0");
  ask("get", "/api/v1/pipelines/{id}", "/api/v1/pipelines/" + pipeline);
  ask("get", "/api/v1/pipelines/{id}", "/api/v1/pipelines/999");
  ask("get", "/api/v1/jobs", "/api/v1/jobs?kind=check");
  ask("get", "/api/v1/jobs", "/api/v1/jobs?status=nope");
  ask("get", "/api/v1/jobs/{id}", "/api/v1/jobs/" + job);
  ask("get", "/api/v1/jobs/{id}", "/api/v1/jobs/0");
  ask("get", "/api/v1/jobs/{id}/log", "/api/v1/jobs/" + job + "/log");
  ask("get", "/api/v1/jobs/{id}/log", "/api/v1/jobs/" + job + "/log?format=text");
  ask("get", "/api/v1/commits/{sha}", "/api/v1/commits/" + sha1);
  ask("get", "/api/v1/commits/{sha}", "/api/v1/commits/" + commit_sha(9));
  ask("get", "/api/v1/commits/{sha}/verdict", "/api/v1/commits/" + sha1 + "/verdict");
  ask("get", "/api/v1/commits/{sha}/verdict", "/api/v1/commits/" + commit_sha(9) + "/verdict");
  ask("get", "/api/v1/gpus", "/api/v1/gpus");
  ask("get", "/api/v1/gpus/agreement", "/api/v1/gpus/agreement?gpu=NVIDIA%20H200");
  ask("get", "/api/v1/gpus/agreement", "/api/v1/gpus/agreement");
  ask("get", "/api/v1/results", "/api/v1/results?commit=" + sha1 + "&status=passed&limit=10");
  ask("get", "/api/v1/results/{id}", "/api/v1/results/" + result_id);
  ask("get", "/api/v1/results/{id}", "/api/v1/results/999");
  ask("get", "/api/v1/builds", "/api/v1/builds?target=sm_90a&job=" + job);
  ask("get", "/api/v1/builds/{id}", "/api/v1/builds/" + build_id);
  ask("get", "/api/v1/builds/{id}", "/api/v1/builds/999999");
  ask("get", "/api/v1/targets/{target}/bringup", "/api/v1/targets/sm_90a/bringup");
  ask("get", "/api/v1/targets/{target}/bringup", "/api/v1/targets/sm_100a/bringup");
  ask("get", "/api/v1/targets/{target}/bringup", "/api/v1/targets/sm_999/bringup");
  ask("get", "/api/v1/artifacts/{sha256}", "/api/v1/artifacts/" + blob_sha);
  ask("get", "/api/v1/artifacts/{sha256}", "/api/v1/artifacts/" + blob_sha + "?meta=1");
  ask("get", "/api/v1/artifacts/{sha256}", "/api/v1/artifacts/" + std::string(64, 'c'));
  // ---- best answers: measured, nearest shape, provisional, errors ----
  auto best =
      ask("get", "/api/v1/best", "/api/v1/best?gpu=" + k_gpu + "&op=gemm&dtype=bf16&shape=m=4096,n=4096,k=4096");
  EXPECT_EQ(best.body.at("kind").as_string(), "measured") << best.raw;
  ask("get", "/api/v1/best", "/api/v1/best?gpu=" + k_gpu + "&op=gemm&dtype=bf16&shape=m=2048,n=4096,k=4096");
  ask("get", "/api/v1/best", "/api/v1/best?gpu=NVIDIA%20B200&op=gemm&dtype=bf16&shape=m=4096,n=4096,k=4096&arch=10.0");
  ask("get", "/api/v1/best", "/api/v1/best?gpu=NVIDIA%20X&op=gemm&dtype=bf16&shape=m=1,n=1,k=1");
  ask("get", "/api/v1/best", "/api/v1/best?gpu=" + k_gpu + "&op=gemm&dtype=fp8&shape=m=4096,n=4096,k=4096");
  ask("get", "/api/v1/best", "/api/v1/best?op=gemm");
  // Two libraries run gemm here (org/kernels and local/bisect): a request names one.
  auto measure = [](const std::string& shape) {
    return json::object{
        {"gpu", "NVIDIA H200"}, {"op", "gemm"}, {"dtype", "bf16"}, {"shape", shape}, {"repo", "org/kernels"}};
  };
  auto mr =
      ask_json("post", "/api/v1/best/requests", "/api/v1/best/requests", measure("m=2048,n=4096,k=4096"), k_admin);
  EXPECT_EQ(mr.status, 201) << mr.raw;
  EXPECT_EQ(ask_json("post", "/api/v1/best/requests", "/api/v1/best/requests", measure("m=2048,n=4096,k=4096"), k_admin)
                .status,
            200);
  EXPECT_EQ(ask_json("post", "/api/v1/best/requests", "/api/v1/best/requests", measure("m=4096,n=4096,k=4096"), k_admin)
                .status,
            200);
  EXPECT_EQ(ask_json("post", "/api/v1/best/requests", "/api/v1/best/requests",
                     json::object{
                         {"gpu", "NVIDIA H200"}, {"op", "gemm"}, {"dtype", "bf16"}, {"shape", "m=2048,n=4096,k=4096"}},
                     k_admin)
                .status,
            400);
  ask_json("post", "/api/v1/best/requests", "/api/v1/best/requests",
           json::object{{"gpu", "NVIDIA X"}, {"op", "gemm"}, {"dtype", "bf16"}, {"shape", "m=1,n=1,k=1"}}, k_admin);
  ask("get", "/api/v1/best/requests", "/api/v1/best/requests?gpu=" + k_gpu);
  ask("get", "/api/v1/best/requests", "/api/v1/best/requests?repo=org%2Fkernels");
  EXPECT_EQ(ask("get", "/api/v1/best/requests", "/api/v1/best/requests?repo=no-such-library").status, 404);
  if (mr.status == 201)
    ask("get", "/api/v1/best/requests/{id}", "/api/v1/best/requests/" + std::to_string(mr.body.at("id").as_int64()));
  ask("get", "/api/v1/best/requests/{id}", "/api/v1/best/requests/999");
  ask("get", "/api/v1/dispatch/snapshot", "/api/v1/dispatch/snapshot?gpu=" + k_gpu);
  ask("get", "/api/v1/dispatch/snapshot", "/api/v1/dispatch/snapshot?gpu=NVIDIA%20X");
  // ---- verdicts, revalidations, pushes ----
  gpu_caps["driver"] = "590.2";
  gpu_caps["gpu_uuid"] = "GPU-2";
  ASSERT_EQ(ask_json("post", "/api/v1/runners/register", "/api/v1/runners/register",
                     json::object{{"name", "gpu-2"}, {"role", "gpu"}, {"capabilities", gpu_caps}}, k_registration)
                .status,
            201);
  auto rv = ask_json("post", "/api/v1/revalidations", "/api/v1/revalidations",
                     json::object{{"gpu_model", "NVIDIA H200"}, {"driver", "590.2"}}, k_admin);
  EXPECT_EQ(rv.status, 201) << rv.raw;
  EXPECT_EQ(ask_json("post", "/api/v1/revalidations", "/api/v1/revalidations",
                     json::object{{"gpu_model", "NVIDIA H200"}, {"driver", "590.2"}}, k_admin)
                .status,
            200);
  ask("get", "/api/v1/revalidations", "/api/v1/revalidations");
  ask("get", "/api/v1/series", "/api/v1/series?gpu=" + k_gpu);
  ask("get", "/api/v1/series", "/api/v1/series?gpu=" + k_gpu + "&dtype=bf16&shape=m=4096,n=4096,k=4096");
  ask("get", "/api/v1/series", "/api/v1/series");
  ask("get", "/api/v1/flakes", "/api/v1/flakes");
  ask("get", "/api/v1/flakes", "/api/v1/flakes?state=all&gpu=" + k_gpu);
  ask("get", "/api/v1/flakes", "/api/v1/flakes?state=sometimes");
  const std::string zero(40, '0');
  const std::string push = push_body("org/kernels", "refs/heads/main", zero, commit_sha(3));
  auto hook = [&](const std::string& body, const std::string& event, const std::string& delivery) {
    return ask("post", "/api/v1/hooks/push", "/api/v1/hooks/push", body, "",
               {{"X-GitHub-Event", event},
                {"X-GitHub-Delivery", delivery},
                {"X-Hub-Signature-256", "sha256=" + hmac_hex(k_hook_secret, body)}});
  };
  EXPECT_EQ(hook(push, "push", "d-1").status, 201);
  EXPECT_EQ(hook(push, "push", "d-1").status, 200);
  EXPECT_EQ(hook(push_body("org/kernels", "refs/tags/v1", zero, commit_sha(4)), "push", "d-2").status, 202);
  EXPECT_EQ(hook("{\"zen\":\"hi\"}", "ping", "d-3").status, 202);
  ask("post", "/api/v1/hooks/push", "/api/v1/hooks/push", push, "",
      {{"X-GitHub-Event", "push"}, {"X-GitHub-Delivery", "d-4"}});
  // The push's report is queued by the coordinator's sender within a poll (a second).
  for (int i = 0; i < 100 && get("/api/v1/deliveries").body.at("items").as_array().empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling an HTTP API: no event to wait on
  EXPECT_FALSE(ask("get", "/api/v1/deliveries", "/api/v1/deliveries?limit=10").body.at("items").as_array().empty());
  ask("get", "/api/v1/deliveries", "/api/v1/deliveries?state=pending&kind=commit_status&repo=org%2Fkernels");
  // ---- dashboard ----
  ask("get", "/api/v1/dashboard/overview", "/api/v1/dashboard/overview");
  ask("get", "/api/v1/dashboard/targets/{target}", "/api/v1/dashboard/targets/sm_90a");
  ask("get", "/api/v1/dashboard/targets/{target}", "/api/v1/dashboard/targets/sm_999");
  ask("get", "/api/v1/dashboard/commits/{sha}", "/api/v1/dashboard/commits/" + sha1);
  ask("get", "/api/v1/dashboard/commits/{sha}", "/api/v1/dashboard/commits/" + sha2);
  ask("get", "/api/v1/dashboard/commits/{sha}", "/api/v1/dashboard/commits/" + commit_sha(9));
  ask("get", "/api/v1/dashboard/kernels/{instance}", "/api/v1/dashboard/kernels/gemm.wgmma_tma.128x256");
  ask("get", "/api/v1/dashboard/kernels/{instance}", "/api/v1/dashboard/kernels/gemm.none");
  ask("get", "/api/v1/dashboard/kernels/{instance}",
      "/api/v1/dashboard/kernels/gemm.wgmma_tma.128x256?repo=org%2Fkernels");
  EXPECT_EQ(ask("get", "/api/v1/dashboard/kernels/{instance}",
                "/api/v1/dashboard/kernels/gemm.wgmma_tma.128x256?repo=no-such-library")
                .status,
            404);
  ask("get", "/api/v1/dashboard/runners", "/api/v1/dashboard/runners?all=1");
  // ---- cancellations and credentials ----
  auto p2 = ask_json(
      "post", "/api/v1/pipelines", "/api/v1/pipelines",
      json::object{{"commit", sha2}, {"repo", "org/kernels"}, {"reason", "push"}, {"targets", json::array{"sm_90a"}}},
      k_admin);
  EXPECT_EQ(p2.status, 201) << p2.raw;
  ask_json(
      "post", "/api/v1/pipelines", "/api/v1/pipelines",
      json::object{{"commit", sha2}, {"repo", "org/kernels"}, {"reason", "push"}, {"targets", json::array{"sm_90a"}}},
      k_admin);
  ask_json("post", "/api/v1/pipelines", "/api/v1/pipelines", json::object{{"commit", "xyz"}}, k_admin);
  ask_json("post", "/api/v1/pipelines", "/api/v1/pipelines",
           json::object{{"commit", sha2}, {"repo", "org/kernels"}, {"targets", json::array{"sm_999"}}}, k_admin);
  ask_json("post", "/api/v1/pipelines", "/api/v1/pipelines", json::object{{"commit", sha2}, {"reason", "new_driver"}},
           k_admin);
  ask_json("post", "/api/v1/commits", "/api/v1/commits", json::object{{"sha", commit_sha(7)}, {"repo", "nowhere"}},
           k_admin);
  ask_json("post", "/api/v1/revalidations", "/api/v1/revalidations",
           json::object{{"gpu_model", "NVIDIA X"}, {"driver", "1.0"}}, k_admin);
  ask("put", "/api/v1/artifacts/{sha256}", "/api/v1/artifacts/" + std::string(64, 'd'), "not those bytes", k_admin, {},
      "application/octet-stream");
  ask_json("post", "/api/v1/pipelines", "/api/v1/pipelines", json::object{{"commit", sha2}}, builder);
  ask_json("post", "/api/v1/pipelines", "/api/v1/pipelines", json::object{{"commit", sha2}}, "");
  if (p2.status == 201) {
    const std::string id2 = std::to_string(p2.body.at("id").as_int64());
    ask("post", "/api/v1/jobs/{id}/cancel",
        "/api/v1/jobs/" + std::to_string(p2.body.at("jobs").as_array()[0].at("id").as_int64()) + "/cancel", "",
        k_admin);
    ask("post", "/api/v1/pipelines/{id}/cancel", "/api/v1/pipelines/" + id2 + "/cancel", "", k_admin);
    // The pipeline and job pages, and the re-runs of what was cancelled.
    const std::string job2 = std::to_string(p2.body.at("jobs").as_array()[0].at("id").as_int64());
    ask("get", "/api/v1/dashboard/pipelines/{id}", "/api/v1/dashboard/pipelines/" + id2);
    ask("get", "/api/v1/dashboard/pipelines/{id}", "/api/v1/dashboard/pipelines/999");
    ask("get", "/api/v1/dashboard/jobs/{id}", "/api/v1/dashboard/jobs/" + job2);
    ask("get", "/api/v1/dashboard/jobs/{id}", "/api/v1/dashboard/jobs/999");
    ask("post", "/api/v1/jobs/{id}/rerun", "/api/v1/jobs/" + job2 + "/rerun", "", k_admin);
    ask("post", "/api/v1/jobs/{id}/rerun", "/api/v1/jobs/" + job2 + "/rerun", "", k_admin);  // queued now: 409
    ask("get", "/api/v1/dashboard/jobs/{id}", "/api/v1/dashboard/jobs/" + job2);             // it waits
    ask("post", "/api/v1/jobs/{id}/rerun", "/api/v1/jobs/999/rerun", "", k_admin);
    ask("post", "/api/v1/pipelines/{id}/cancel", "/api/v1/pipelines/" + id2 + "/cancel", "", k_admin);
    ask("post", "/api/v1/pipelines/{id}/rerun", "/api/v1/pipelines/" + id2 + "/rerun", "", k_admin);
    ask("post", "/api/v1/pipelines/{id}/rerun", "/api/v1/pipelines/999/rerun", "", k_admin);
  }
  ask_json("post", "/api/v1/admin/registration-token", "/api/v1/admin/registration-token",
           json::object{{"expires_in_s", 3600}}, k_admin);
  ask("post", "/api/v1/runners/deregister", "/api/v1/runners/deregister", "", builder);
  ask("delete", "/api/v1/runners/{id}/token", "/api/v1/runners/" + gpu_id + "/token", "", k_admin);
  ask("delete", "/api/v1/runners/{id}/token", "/api/v1/runners/999/token", "", k_admin);
  ask("post", "/api/v1/runners/claim", "/api/v1/runners/claim", "", gpu);

  // Every documented JSON success answer was provoked and validated at least once; the
  // error answers not provoked are listed.
  std::string unprovoked;
  for (const auto& [path, item] : schema->document().at("paths").as_object())
    for (const auto& [method, op] : item.as_object())
      for (const auto& [status, answer] : op.at("responses").as_object()) {
        const auto* content = answer.as_object().if_contains("content");
        if (!content || !content->as_object().contains("application/json")) continue;
        const std::string key = std::string(method) + " " + std::string(path) + " " + std::string(status);
        if (status.empty() || status[0] != '2') {
          if (status != "default" && !validated.count(key)) unprovoked += "  " + key + "\n";
          continue;
        }
        EXPECT_TRUE(validated.count(key)) << key << " is documented but no answer of it was validated";
      }
  std::cout << validated.size() << " answers validated; error answers documented but not provoked:\n" << unprovoked;
}

}  // namespace
}  // namespace kport::testing
