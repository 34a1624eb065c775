// The PMIx exchange among a step's nodes (srun --mpi=pmix), relayed by srun.
//
// Each node's drover-stepd serves PMIx to its local tasks. What a PMIx server
// cannot answer alone (a fence over ranks on other nodes, another node's
// modex data) goes over one TCP connection from each step daemon to srun's
// stream listener, opened with the line "DROVERPMIX <io_key> <node> <nnodes>\n".
// After it both sides send frames: one header line of space-separated words,
// the last the payload's length in bytes, then the payload:
//
//   F <seq> <nodes> <len>          fence contribution (stepd -> srun) and the
//                                  result, every node's data concatenated in
//                                  node order (srun -> each participant);
//                                  <nodes> is "*" (every node) or "0,2,3"
//   X <seq> <nodes> 0              the fence failed (a participant is gone)
//   D <id> <node> <rank> 0         direct modex: stepd -> srun names the node
//                                  holding <rank>; srun -> that node names the asker
//   R <id> <node> <status> <len>   the answer (status 0: found), routed to <node>
//   A <status> <len>               a task called PMIx_Abort (payload: its
//                                  message); srun sends it to every other node
//
// Fences of the same participant set complete in the order they are called on
// every node (each node numbers them 0, 1, ...), so (<seq>, <nodes>) names one.
// A node's daemon may connect after others have started asking it (launch
// skew): srun holds what is for it until it does.
// FrameReader and Relay are plain data handling, no I/O: srun owns the sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace drover::pmix_wire {

struct Frame {
  std::vector<std::string> words;  // the header without the length
  std::string payload;
};

std::string encode(const std::vector<std::string>& words, std::string_view payload = {});

// The nodes of a participant list ("*" for all of `nnodes`); empty when malformed.
std::vector<int> parse_nodes(const std::string& text, int nnodes);
std::string nodes_text(const std::vector<int>& nodes, int nnodes);  // sorted; "*" when all

class FrameReader {
 public:
  void feed(const char* data, std::size_t n) { buf_.append(data, n); }
  // The next complete frame; false when none is complete yet or the stream is
  // malformed (bad() tells).
  bool next(Frame& out);
  bool bad() const { return bad_; }

 private:
  std::string buf_;
  bool bad_ = false;
};

// srun's side: routes frames among the step daemons of one step.
class Relay {
 public:
  using Send = std::function<void(int node, const std::string& bytes)>;
  Relay(int nnodes, Send send) : nnodes_(nnodes), send_(std::move(send)) {}

  // A node's connection said hello; what was sent to it before goes now.
  void joined(int node);
  // Bytes from a node's connection; false when they are malformed (drop the connection).
  bool feed(int node, const char* data, std::size_t n);
  // The node's connection closed, or srun learnt that its part of the step
  // ended: fences that wait for it fail, its direct modex questions get "not
  // found". Calling it again changes nothing.
  void left(int node);
  int aborts() const { return aborts_; }
  const std::string& abort_message() const { return abort_message_; }

 private:
  void handle(int node, const Frame& f);
  void deliver(int node, const std::string& bytes);  // held until the node joins
  struct Fence {
    std::vector<int> nodes;
    std::map<int, std::string> data;
  };
  int nnodes_;
  Send send_;
  std::set<int> present_, gone_;
  std::map<int, FrameReader> readers_;
  std::map<int, std::string> held_;  // for nodes that have not joined yet
  std::map<std::string, Fence> fences_;  // by "<seq> <nodes>"
  std::map<int, std::set<std::pair<int, std::string>>> asked_;  // direct modex: target -> (asker, id)
  int aborts_ = 0;
  std::string abort_message_;
};

}  // namespace drover::pmix_wire
