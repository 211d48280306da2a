#pragma once
// One streamed POST /v1/completions (vLLM's OpenAI-compatible API,
// adapters/http/openai_protocol.hpp) that another thread can stop: vLLM
// aborts a request whose connection closes, and the ids received until then
// are exactly its partial output (docs/serve.md, "vLLM"). cpp-httplib.
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "adapters/http/sglang_protocol.hpp"

namespace httplib {
class Client;
}

namespace april::live {

// The stop of one stream, shared by the thread that reads it and the one
// that aborts it. cancel() closes the connection if it is open and keeps a
// later try from opening one; a cancel that comes while the connection is
// being opened is caught by the next cancel() (callers repeat it until the
// stream has answered, as an SGLang abort is repeated).
class StreamCancel {
 public:
  void cancel();
  [[nodiscard]] bool cancelled() const;
  // The reading thread's: the client whose connection cancel() closes, or
  // none; false when cancelled already (then nothing is to be opened).
  bool attach(httplib::Client* client);

 private:
  mutable std::mutex mu_;
  httplib::Client* client_ = nullptr;
  bool cancelled_ = false;
};

// POSTs `body` (stream true; its "request_id" set) to url + /v1/completions
// and reads the stream to its end. Returns the reply: its ids, log-probs and
// finish reason, or, once `cancel` stopped it, the ids received with finish
// Abort (a stream that finished before the cancel keeps its own reason).
// Tried again, with a request_id of its own, when it got no reply at all
// (kGenerateTries in all, as SGLang's /generate: a connection refused or
// cut). Throws NoReply and TimedOut (no byte for read_s) as post_or_throw
// does, and a runtime_error naming the URL for an HTTP error, an error
// event or a stream that cannot be read.
http::GenerateReply completion_stream(const std::string& url, nlohmann::json body, double connect_s, double read_s, StreamCancel& cancel);

}  // namespace april::live
