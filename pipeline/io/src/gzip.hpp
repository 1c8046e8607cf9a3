#pragma once
// Internal: choice of the gzip decompressor behind make_gzip_source (not public API).
//
// Plain gzip streams (one or more members; BGZF that is not the outermost layer included) are
// inflated on a worker thread by ISA-L's igzip when the library was built with it
// (KSIEVE_HAVE_ISAL), else by zlib. Both backends have the same semantics: every member is read,
// zero padding between members is skipped, anything else after a member is "trailing garbage", the
// CRC32 and ISIZE of every member are checked, and truncated or corrupted data ends the stream with
// a source_error after the bytes before it.
#include "detail.hpp"

#include <memory>

namespace ksieve::io::detail
{

enum class gzip_backend
{
    zlib, //!< zlib's inflate
    isal  //!< ISA-L's igzip (where the build found it)
};

// True when ISA-L was found at build time (the isal backend exists).
[[nodiscard]] bool have_isal() noexcept;

// Backend selected by a value of the environment variable KSIEVE_ZLIB (nullptr: unset): zlib when
// the value is non-empty and not "0", else isal if available, else zlib.
[[nodiscard]] gzip_backend gzip_backend_from_env(char const * value) noexcept;

// gzip_backend_from_env(getenv("KSIEVE_ZLIB")), read once per process (thread-safe).
[[nodiscard]] gzip_backend default_gzip_backend() noexcept;

// The gzip stream of `inner` inflated as above by `backend` (isal is zlib when !have_isal()).
std::unique_ptr<byte_source> make_gzip_source(std::unique_ptr<byte_source> inner,
                                              gzip_backend backend = default_gzip_backend());

} // namespace ksieve::io::detail
