// Test support: an RS256 JSON Web Token checked the way GitHub checks a GitHub App's JWT,
// with OpenSSL's EVP interface directly (not through the code under test): the compact
// form's three parts, the header {"alg":"RS256","typ":"JWT"}, the signature against the
// app's public key (PEM file), and the claims iat, exp and iss. Header-only; a target that
// includes it links OpenSSL::Crypto.
#pragma once

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <boost/json.hpp>

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace kport::testing {

// Base64url without padding, decoded; nullopt when it is not.
inline std::optional<std::string> base64url_decode(std::string_view in) {
  std::string s(in);
  for (char& c : s) {
    if (c == '-')
      c = '+';
    else if (c == '_')
      c = '/';
    else if (c == '=' || c == '+' || c == '/')
      return std::nullopt;
  }
  const std::size_t pad = (4 - s.size() % 4) % 4;
  if (pad == 3) return std::nullopt;
  s.append(pad, '=');
  std::string out(s.size() / 4 * 3 + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
  if (n < 0) return std::nullopt;
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

struct JwtCheck {
  std::string error;  // empty: valid
  boost::json::object header, claims;
  bool ok() const { return error.empty(); }
};

// Checks `jwt` as GitHub does at `now_s` (Unix seconds): signed RS256 by the private key
// of `public_key_file`, iat not in the future (60 s of drift allowed), exp after now and
// at most 10 minutes after now, and iss equal to `app_id` (a string or a number).
inline JwtCheck check_app_jwt(std::string_view jwt, const std::string& public_key_file, std::int64_t app_id,
                              std::int64_t now_s) {
  JwtCheck out;
  const auto dot1 = jwt.find('.');
  const auto dot2 = dot1 == std::string_view::npos ? dot1 : jwt.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || jwt.find('.', dot2 + 1) != std::string_view::npos) {
    out.error = "not a JWT in compact form (three parts)";
    return out;
  }
  auto header = base64url_decode(jwt.substr(0, dot1));
  auto claims = base64url_decode(jwt.substr(dot1 + 1, dot2 - dot1 - 1));
  auto sig = base64url_decode(jwt.substr(dot2 + 1));
  if (!header || !claims || !sig) {
    out.error = "a part is not base64url without padding";
    return out;
  }
  boost::system::error_code ec;
  auto h = boost::json::parse(*header, ec);
  if (ec || !h.is_object()) {
    out.error = "the header is not a JSON object";
    return out;
  }
  auto c = boost::json::parse(*claims, ec);
  if (ec || !c.is_object()) {
    out.error = "the claims are not a JSON object";
    return out;
  }
  out.header = h.as_object();
  out.claims = c.as_object();
  const auto* alg = out.header.if_contains("alg");
  if (!alg || !alg->is_string() || alg->as_string() != "RS256") {
    out.error = "alg is not RS256";
    return out;
  }
  std::ifstream in(public_key_file);
  std::stringstream pem;
  pem << in.rdbuf();
  const std::string key_text = pem.str();
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(key_text.data(), static_cast<int>(key_text.size())),
                                                &BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr),
                                                          &EVP_PKEY_free);
  if (!key) {
    out.error = "cannot read the public key " + public_key_file;
    return out;
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  const std::string_view input = jwt.substr(0, dot2);
  const bool verified = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) == 1 &&
                        EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig->data()), sig->size(),
                                         reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  ERR_clear_error();
  if (!verified) {
    out.error = "the signature does not verify with the app's public key";
    return out;
  }
  const auto* iat = out.claims.if_contains("iat");
  const auto* exp = out.claims.if_contains("exp");
  const auto* iss = out.claims.if_contains("iss");
  if (!iat || !iat->is_int64() || !exp || !exp->is_int64() || !iss) {
    out.error = "iat, exp (integers) and iss are required";
    return out;
  }
  if (iat->as_int64() > now_s + 60) {
    out.error = "iat is in the future";
    return out;
  }
  if (exp->as_int64() <= now_s) {
    out.error = "exp is in the past";
    return out;
  }
  if (exp->as_int64() > now_s + 600) {
    out.error = "exp is too far in the future (10 minutes at most)";
    return out;
  }
  const bool iss_ok = (iss->is_string() && iss->as_string() == std::to_string(app_id)) ||
                      (iss->is_int64() && iss->as_int64() == app_id);
  if (!iss_ok) out.error = "iss is not the app's id";
  return out;
}

}  // namespace kport::testing
