// RS256 JSON Web Tokens (RFC 7519 in the compact form of RFC 7515), signed through
// OpenSSL's EVP interface: what a GitHub App presents to exchange for an installation
// access token. The key is PEM text (PKCS#1 "RSA PRIVATE KEY", as GitHub hands it out, or
// PKCS#8 "PRIVATE KEY"), unencrypted; it stays inside OpenSSL for the one call and is
// freed before the call returns. Errors say what the text is instead of an RSA private
// key and never quote it. Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "kport/common/result.h"

namespace kport::http {

// Base64url (RFC 4648 section 5) without padding.
std::string base64url(std::string_view bytes);

// Whether `pem` holds an unencrypted RSA private key; invalid_argument saying what is
// wrong (not PEM, encrypted, another kind of key, too short) otherwise.
Status check_rsa_private_key(std::string_view pem);

// `base64url(header).base64url(claims).base64url(signature)` with the header
// {"alg":"RS256","typ":"JWT"}, `claims_json` being the claims object's JSON text as it
// is to be signed, and the signature RSASSA-PKCS1-v1_5 over SHA-256 with the key in
// `pem`.
Result<std::string> sign_jwt_rs256(std::string_view claims_json, std::string_view pem);

}  // namespace kport::http
