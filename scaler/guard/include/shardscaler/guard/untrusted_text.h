// What a client sent, made fit to repeat in a denial message or a log line: printable ASCII only
// and short. An AdmissionReview can be forged by anyone who reaches the webhook's port, so nothing
// of it is repeated verbatim; it must never grow the text it is put into by more than its bound.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace shardscaler::guard {

// `text` with every byte outside printable ASCII replaced by '?', cut after `max_bytes` with
// "...(N more bytes)".
std::string untrustedText(std::string_view text, std::size_t max_bytes = 64);

}  // namespace shardscaler::guard
