// The local signer: a token for whoever connects, for their own uid and gid.
#include "rpc/local_signer.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rpc/testing.hpp"
#include "rpc/token.hpp"

namespace drover::rpc {
namespace {

ClusterKey test_key() {
  ClusterKey k;
  k.secret = std::string(48, 'k');
  k.id = key_id(k.secret);
  return k;
}

TEST(LocalSigner, GivesEachCallerATokenForTheirOwnUidOnce) {
  auto dir = testing::TempDir::create("signer");
  ASSERT_TRUE(dir);
  const std::string path = dir->file("sub/auth.sock");  // its directory is made
  bool elsewhere = true;
  auto signer = LocalSigner::start(path, test_key(), &elsewhere);
  ASSERT_TRUE(signer) << signer.error().message;
  ASSERT_NE(*signer, nullptr);
  EXPECT_FALSE(elsewhere);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);

  TokenVerifier verifier({test_key()}, TokenPolicy{});
  auto token = fetch_local_token(path);
  ASSERT_TRUE(token) << token.error().message;
  auto verdict = verifier.verify(*token);
  ASSERT_TRUE(verdict.ok()) << verdict.message;
  EXPECT_EQ(verdict.claims.uid, geteuid());
  EXPECT_EQ(verdict.claims.gid, getegid());
  EXPECT_LE(verdict.claims.expires_at_s - verdict.claims.issued_at_s, 60);
  EXPECT_EQ(verifier.verify(*token).failure, TokenFailure::kReplayed);  // good for one request
  auto second = fetch_local_token(path);
  ASSERT_TRUE(second);
  EXPECT_NE(*second, *token);
  EXPECT_TRUE(verifier.verify(*second).ok());
  EXPECT_EQ((*signer)->tokens_given(), 2u);

  // A second signer on the host (another agent) leaves it to the first.
  bool again = false;
  auto other = LocalSigner::start(path, test_key(), &again);
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_EQ(*other, nullptr);
  EXPECT_TRUE(again);

  signer->reset();
  EXPECT_NE(stat(path.c_str(), &st), 0);  // the socket goes with it
  auto gone = fetch_local_token(path);
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.error().message.find(path), std::string::npos) << gone.error().message;
}

// The uid in the token is the one the kernel reports for the caller, not
// anything the caller says.
TEST(LocalSigner, TheTokenCarriesTheCallersUidAsTheKernelTellsIt) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to call as another uid";
  auto dir = testing::TempDir::create("signer");
  ASSERT_TRUE(dir);
  chmod(dir->path().c_str(), 0755);
  const std::string path = dir->file("auth.sock");
  bool elsewhere = false;
  auto signer = LocalSigner::start(path, test_key(), &elsewhere);
  ASSERT_TRUE(signer && *signer);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    if (setgid(4321) != 0 || setuid(1234) != 0) _exit(2);
    auto token = fetch_local_token(path);
    if (!token) _exit(3);
    if (write(pipe_fds[1], token->data(), token->size()) != static_cast<ssize_t>(token->size())) _exit(4);
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string token;
  char buf[512];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;) token.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  TokenVerifier verifier({test_key()}, TokenPolicy{});
  auto verdict = verifier.verify(token);
  ASSERT_TRUE(verdict.ok()) << verdict.message;
  EXPECT_EQ(verdict.claims.uid, 1234u);
  EXPECT_EQ(verdict.claims.gid, 4321u);
}

}  // namespace
}  // namespace drover::rpc
