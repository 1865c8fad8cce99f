// Serves the dashboard's static files from a directory: "/" is index.html, everything
// else under "/static/". The files are read and hashed (ETag) once, when the routes are
// added; requests are answered from memory. Paths that leave the directory are 404. Every
// response carries a Content-Security-Policy that allows only same-origin scripts.
#pragma once

#include <string>

#include "kport/http/router.h"

namespace kport::coordinator {

void add_static_routes(http::Router& router, const std::string& dir);
// The dashboard's directory when none is given: share/kport/web beside the binary (an
// install), else the checkout's web/; a directory counts only if it holds index.html.
// Empty when neither does.
std::string find_dashboard();
// Answers "/" when no dashboard is served: a 404 that names the places looked in and
// how to serve one (an HTML page for a browser, the JSON error otherwise).
void add_missing_dashboard_route(http::Router& router);
// The policy sent with dashboard pages.
extern const char* const k_content_security_policy;

}  // namespace kport::coordinator
