#include "best_answer.h"

#include <algorithm>

#include "kport/http/uri.h"
#include "kport/porting/op_shape.h"

namespace kport::coordinator {
namespace {

bool simple_token(std::string_view s, std::size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace

Result<BestQuestion> parse_best_question(const http::Request& req, std::shared_ptr<const porting::FamilySet> families) {
  BestQuestion q;
  q.gpu = req.query_or("gpu");
  q.op = req.query_or("op");
  q.dtype = req.query_or("dtype");
  q.shape_text = req.query_or("shape");
  if (q.gpu.empty() || q.op.empty() || q.dtype.empty() || q.shape_text.empty())
    return make_error(
        Errc::invalid_argument,
        "best needs gpu, op, dtype and shape, e.g. ?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=m=4096,n=4096,k=4096");
  q.families = families ? std::move(families) : std::make_shared<const porting::FamilySet>();
  auto family = q.families->family(q.op);
  if (!family.ok())
    return make_error(Errc::invalid_argument, family.error().message + " (GET /api/v1/families lists the families)");
  q.family = *family;
  if (!simple_token(q.dtype, 8))
    return make_error(Errc::invalid_argument, "dtype '" + q.dtype + "' is not a dtype such as bf16, fp16 or fp32");
  if (q.gpu.size() > 256) return make_error(Errc::invalid_argument, "gpu name is longer than 256 bytes");
  // A shape of the family, its left-out dimensions given their defaults: one the family
  // cannot take (a key it lacks, a value out of range, a dimension missing) is the
  // asker's error, not a question nothing answers.
  auto shape = porting::op_shape(*q.family, q.shape_text);
  if (!shape.ok()) return make_error(Errc::invalid_argument, "shape '" + q.shape_text + "': " + shape.error().message);
  q.shape = std::move(shape->shape);
  q.canonical = q.shape.canonical();
  q.op_shape_text = std::move(shape->text);
  // A shape the family's contract rules out for every instance (gemm_fp8's K with block
  // scales): no answer names one that cannot run it.
  if (auto unmet = porting::unmet_requirement(*q.family, q.shape))
    return make_error(Errc::unprocessable, "no " + q.op + " instance runs " + q.op_shape_text + ": " + *unmet);
  q.arch = req.query_or("arch");
  q.target = req.query_or("target");
  q.repo = req.query_or("repo");
  if (q.repo.size() > 128) return make_error(Errc::invalid_argument, "repo name is longer than 128 bytes");
  return q;
}

void write_question_members(JsonText& w, const BestQuestion& q, std::string_view arch, std::string_view target,
                            std::string_view repo, bool measured_exactly, bool known_gpu,
                            std::optional<AskView>& unmeasured) {
  w.next("query").raw('{').key("gpu").str(q.gpu);
  w.next("op").str(q.op).next("dtype").str(q.dtype).next("shape").str(q.canonical);
  w.next("arch").str(arch).next("target").str(target).next("repo").str(repo).raw('}');
  // Not measured at this shape: say how to have it measured (a GPU model kport knows; the
  // shape is its family's, parse_best_question saw to that), and count the question.
  if (measured_exactly || !known_gpu) return;
  {
    unmeasured = AskView{q.gpu, q.op, q.dtype, q.canonical, repo};
    w.next("measure").raw('{').key("requests").str("POST /api/v1/best/requests");
    w.next("body").raw('{').key("gpu").str(q.gpu);
    w.next("op").str(q.op).next("dtype").str(q.dtype).next("shape").str(q.op_shape_text);
    // The request is of the answer's library, named even where the question did not: a
    // request without one is refused once a second library runs the op.
    if (!repo.empty()) w.next("repo").str(repo);
    w.raw('}');
    // Percent-encoded text is unreserved ASCII, which str() would copy as it is.
    w.next("list").raw("\"GET /api/v1/best/requests?gpu=");
    http::percent_encode(q.gpu, w.out());
    if (!repo.empty()) {
      w.raw("&repo=");
      http::percent_encode(repo, w.out());
    }
    w.raw("\"}");
  }
}

std::optional<std::string> measured_answer(const BestIndex::Entry& entry, const BestQuestion& q,
                                           std::optional<AskView>& unmeasured) {
  // One library's evidence only: rows of several, or of another than the one asked
  // about, are picked apart from the store.
  const auto& repos = entry.repos();
  if (repos.size() > 1 || (!q.repo.empty() && (repos.empty() || repos.front() != q.repo))) return std::nullopt;
  const std::string_view repo = repos.empty() ? std::string_view() : std::string_view(repos.front());
  const auto& prepared = entry.prepared();
  auto match = prepared.match(q.shape);
  if (!match) return std::nullopt;
  const BestIndex::ShapeText& text = entry.text(match->shape);
  const std::string_view arch = q.arch.empty() ? std::string_view(prepared.first_arch()) : std::string_view(q.arch);
  std::string body;
  JsonText w(body);
  // What the question's own members take, at most, besides its echoed parameters.
  constexpr std::size_t k_question = 512;
  const std::size_t question = k_question + 3 * (q.gpu.size() + q.op.size() + q.dtype.size() + q.canonical.size()) +
                               q.arch.size() + q.target.size() + q.repo.size() + repos.size() * 128;
  if (match->distance == 0) {
    // At the shape itself every member but the question's is the shape's, serialized once.
    body.reserve(text.exact.size() + question);
    w.raw(text.exact);
    // Measured exactly unless nothing there was timed (an unranked answer).
    const bool exactly = prepared.at(match->shape).kind == porting::Selection::Kind::measured;
    write_question_members(w, q, arch, q.target, repo, exactly, true, unmeasured);
    w.raw('}');
    return body;
  }
  // From another shape the ranking is the figures moved to this one, ranked per question
  // and written from the shape's texts.
  thread_local porting::PreparedSelection::Moved moved;
  if (text.moved && prepared.moved(q.shape, *match, moved)) {
    body.reserve(text.moved->size + moved.places.size() * 64 + q.canonical.size() + question);
    write_moved(w, *text.moved, prepared, match->shape, moved, q.canonical, match->distance);
  } else {
    // Nothing timed there (an unranked answer), or an instance the question is beyond the
    // limits of: the answer whole, its exclusions those of the shape and that instance's.
    const porting::Selection sel = prepared.answer(q.shape, *match);
    body.reserve(text.excluded.size() + 4096 + question);
    w.raw('{');
    write_members(w, sel);
  }
  write_question_members(w, q, arch, q.target, repo, false, true, unmeasured);
  w.raw('}');
  return body;
}

}  // namespace kport::coordinator
