// RS256 JSON Web Tokens over OpenSSL's EVP (see jwt.h): the key parsed with
// PEM_read_bio_PrivateKey, the signature made by EVP_DigestSign with SHA-256 (an RSA key's
// default padding is PKCS#1 v1.5, which RS256 is), base64 by EVP_EncodeBlock.
#include "kport/http/jwt.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <climits>
#include <memory>
#include <vector>

namespace kport::http {
namespace {

constexpr int k_min_rsa_bits = 2048;  // GitHub's app keys are 2048 bits; shorter ones are refused

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

// OpenSSL's reason for the last failure on this thread ("no start line", "bad decrypt"),
// its error queue emptied.
std::string openssl_reason() {
  std::string why;
  for (unsigned long e = ERR_get_error(); e != 0; e = ERR_get_error())
    if (const char* r = ERR_reason_error_string(e); r && why.empty()) why = r;
  return why.empty() ? "unknown reason" : why;
}

// A password callback that has none to give: an encrypted key fails to load instead of
// OpenSSL asking on the terminal.
int no_password(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*u*/) { return 0; }

Result<Pkey> load_rsa(std::string_view pem) {
  if (pem.find("-----BEGIN") == std::string_view::npos)
    return make_error(Errc::invalid_argument, "it holds no PEM block; give the private key as PEM");
  if (pem.find("ENCRYPTED") != std::string_view::npos)
    return make_error(Errc::invalid_argument,
                      "the key is encrypted; give it unencrypted (openssl rsa -in KEY -out KEY.pem) in a file only "
                      "the coordinator's user reads");
  if (pem.size() > static_cast<std::size_t>(INT_MAX)) return make_error(Errc::invalid_argument, "it is too large");
  ERR_clear_error();
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return make_error(Errc::internal, "OpenSSL could not allocate a buffer: " + openssl_reason());
  Pkey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_password, nullptr));
  if (!key)
    return make_error(Errc::invalid_argument,
                      "it does not parse as a PEM private key (" + openssl_reason() +
                          "); give the RSA private key the GitHub App's settings page generated (.pem)");
  if (EVP_PKEY_base_id(key.get()) != EVP_PKEY_RSA) {
    const char* type = EVP_PKEY_get0_type_name(key.get());
    return make_error(Errc::invalid_argument, std::string("it holds ") + (type ? type : "another kind of") +
                                                  " key, not an RSA key; GitHub Apps sign with RSA (RS256)");
  }
  if (EVP_PKEY_get_bits(key.get()) < k_min_rsa_bits)
    return make_error(Errc::invalid_argument, "its RSA key has " + std::to_string(EVP_PKEY_get_bits(key.get())) +
                                                  " bits; at least " + std::to_string(k_min_rsa_bits) + " are needed");
  return key;
}

}  // namespace

std::string base64url(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return out;
}

Status check_rsa_private_key(std::string_view pem) {
  auto key = load_rsa(pem);
  if (!key.ok()) return std::move(key).error();
  return {};
}

Result<std::string> sign_jwt_rs256(std::string_view claims_json, std::string_view pem) {
  auto key = load_rsa(pem);
  if (!key.ok()) return std::move(key).error();
  const std::string input = base64url(R"({"alg":"RS256","typ":"JWT"})") + "." + base64url(claims_json);
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  std::size_t len = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key->get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
    return make_error(Errc::internal, "cannot sign the JWT: " + openssl_reason());
  std::vector<unsigned char> sig(len);
  if (EVP_DigestSign(ctx.get(), sig.data(), &len, reinterpret_cast<const unsigned char*>(input.data()), input.size()) !=
      1)
    return make_error(Errc::internal, "cannot sign the JWT: " + openssl_reason());
  return input + "." + base64url(std::string_view(reinterpret_cast<const char*>(sig.data()), len));
}

}  // namespace kport::http
