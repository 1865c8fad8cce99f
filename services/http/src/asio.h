// Private: the one place kport::http includes Boost.Asio and Boost.Beast, and through
// Asio's ssl the one place kport includes OpenSSL (services use TLS only through
// kport::http's server and client).
//
// At -O2 and above GCC 12 reports -Wnull-dereference inside inlined Asio internals
// (scheduler, strand and executor comparisons), although these are system headers. GCC
// checks diagnostic pragmas along the inlining chain, so disabling the warning for the
// Boost headers alone silences those reports while kport code keeps the warning.
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
// Asio's fenced blocks use atomic_thread_fence, which ThreadSanitizer builds flag.
#pragma GCC diagnostic ignored "-Wtsan"
#endif
#include <boost/asio/connect.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#pragma GCC diagnostic pop
