// sbcast: reads the file here and sends it block by block to the controller,
// which has each node of the job write it as the job's user (src/agent/
// file_bcast); the errors and exit status are Slurm 22.05's.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "cli/job_values.hpp"
#include "cli/sbcast.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"
#include "common/hostlist.hpp"

namespace drover::client {
namespace {

std::string absolute(const std::string& dest) {
  if (!dest.empty() && dest[0] == '/') return dest;
  char buf[4096];
  if (!getcwd(buf, sizeof buf)) return dest;
  std::string cwd(buf);
  return cwd + (cwd.ends_with('/') ? "" : "/") + dest;
}

std::string job_label(const cli::SbcastOptions& o) {
  return std::to_string(o.job) + (o.step ? "." + cli::step_id_text(*o.step) : "");
}

// Reads up to `n` bytes at the file's current offset; fewer only at its end.
bool read_block(int fd, std::string& buf, int64_t n) {
  buf.resize(static_cast<size_t>(n));
  size_t got = 0;
  while (got < buf.size()) {
    ssize_t r = read(fd, buf.data() + got, buf.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  buf.resize(got);
  return true;
}

}  // namespace

int sbcast_main(const Args& args) {
  Invocation inv = invocation("sbcast", args);
  auto opts = cli::parse_sbcast_options(inv.args, [](const char* name) { return std::getenv(name); });
  if (!opts) {
    write_out(opts.error().text, stderr);
    return opts.error().exit_code;
  }
  if (auto early = cli::version_or_usage(opts->print_version, opts->print_help, cli::sbcast_usage())) {
    return print_output(*early);
  }
  int fd = open(opts->source.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) {
    std::fprintf(stderr, "sbcast: error: Can't open `%s`: %s\n", opts->source.c_str(), std::strerror(errno));
    return cli::kExitBadOption;
  }
  if (!S_ISREG(st.st_mode)) {
    std::fprintf(stderr, "sbcast: error: Can't read `%s`: not a regular file\n", opts->source.c_str());
    close(fd);
    return cli::kExitBadOption;
  }
  const std::string dest = absolute(opts->dest);
  if (opts->verbose > 0) {
    std::fprintf(stderr, "sbcast: source = %s (%lld bytes, mode %04o)\nsbcast: dest   = %s\nsbcast: jobid  = %s\n",
                 opts->source.c_str(), static_cast<long long>(st.st_size), st.st_mode & 07777, dest.c_str(),
                 job_label(*opts).c_str());
  }
  auto api = connect_or_report(inv);
  if (!api) return 1;
  v1::BroadcastFileRequest req;
  req.set_job_id(opts->job);
  if (opts->step) req.set_step_id(*opts->step);
  v1::FileBlock* b = req.mutable_block();
  b->set_path(dest);
  b->set_force(opts->force);
  b->set_mode(st.st_mode & 07777);
  b->set_preserve(opts->preserve);
  b->set_atime(st.st_atim.tv_sec);
  b->set_mtime(st.st_mtim.tv_sec);
  int rc = 0;
  std::set<std::string> written;
  std::string block;
  for (int64_t offset = 0;; offset += static_cast<int64_t>(block.size())) {
    if (!read_block(fd, block, opts->block_size)) {
      std::fprintf(stderr, "sbcast: error: Can't read `%s`: %s\n", opts->source.c_str(), std::strerror(errno));
      rc = cli::kExitBadOption;
      break;
    }
    b->set_offset(offset);
    b->set_first(offset == 0);
    // The last: the file's size reached, or a short read (it shrank meanwhile).
    b->set_last(offset + static_cast<int64_t>(block.size()) >= st.st_size ||
                block.size() < static_cast<size_t>(opts->block_size));
    b->set_data(block);
    auto reply = api->broadcast_file(req);
    if (!reply) {
      if (reply.error().unreachable) {
        close(fd);
        return report_failure(inv, *api, reply.error());
      }
      // The controller's refusal (an unknown, pending or finished job, another user's).
      std::string why = reply.error().message;
      std::string first = why.substr(0, why.find('\n'));
      std::fprintf(stderr, "sbcast: error: Slurm job %s lookup error: %s\n", job_label(*opts).c_str(), first.c_str());
      if (first != why) print_error_lines("sbcast", why.substr(why.find('\n') + 1));
      close(fd);
      return cli::kExitBadOption;
    }
    if (offset == 0 && opts->verbose > 0) {
      std::vector<std::string> nodes(reply->nodes().begin(), reply->nodes().end());
      std::fprintf(stderr, "sbcast: nodes  = %s\n", hostlist_compress(nodes).c_str());
    }
    for (const auto& n : reply->nodes()) written.insert(n);
    for (const auto& e : reply->errors()) {
      // As Slurm words a node's failure: the request's name, the node, errno's text.
      const std::string text = e.error_number() != 0 ? std::strerror(e.error_number()) : e.error();
      std::fprintf(stderr, "sbcast: error: REQUEST_FILE_BCAST(%s): %s\n", e.node().c_str(), text.c_str());
      if (opts->verbose > 0 && e.error_number() != 0 && !e.error().empty()) {
        std::fprintf(stderr, "sbcast: %s: %s\n", e.node().c_str(), e.error().c_str());
      }
      rc = e.error_number() != 0 ? (e.error_number() & 0xff) : 1;
      req.add_skip_nodes(e.node());
      written.erase(e.node());
    }
    if (b->last() || written.empty()) break;
  }
  close(fd);
  if (opts->verbose > 0 && !written.empty()) {
    std::vector<std::string> nodes(written.begin(), written.end());
    std::fprintf(stderr, "sbcast: written on %s\n", hostlist_compress(nodes).c_str());
  }
  return rc;
}

}  // namespace drover::client
