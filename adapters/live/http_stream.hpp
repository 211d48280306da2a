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
// that aborts it. cancel() marks it cancelled, keeps a later try from opening
// a connection, and closes the connection once the server has answered. It
// never touches a connection still being opened: cpp-httplib opens it under
// the lock Client::stop takes, so a stop then waited for the connect, up to
// its timeout against a server dropping SYNs, and held up every cancel after
// it. A connection that opens after the cancel is closed at its reply's
// headers (vLLM sends them at once), or ends at its connect timeout.
class StreamCancel {
 public:
  void cancel();
  [[nodiscard]] bool cancelled() const;
  // The reading thread's: the client whose connection cancel() closes, or
  // none; false when cancelled already (then nothing is to be opened).
  bool attach(httplib::Client* client);
  // The reading thread's, at the reply's headers: the connection is open,
  // and from now on cancel() closes it. False when cancelled already.
  bool opened();

 private:
  mutable std::mutex mu_;
  httplib::Client* client_ = nullptr;
  bool open_ = false;
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
