// Job e-mail (sbatch --mail-type/--mail-user), sent as Slurm 22.05's
// slurmctld sends it: `MailProg -s SUBJECT RECIPIENT`, an empty body, and
// the job's facts in SLURM_JOB_* variables. Subjects as captured on the
// anchor cluster: "Slurm Job_id=12 Name=x Began, Queued time 00:00:01",
// "... Ended, Run time 00:00:03, COMPLETED, ExitCode 0", "... Failed, Run
// time 00:00:01, FAILED, ExitCode 3", "... Requeued, Run time 00:00:02",
// "... Reached 50% of time limit, Run time 00:00:54"; an array without
// ARRAY_TASKS mails once for all its elements ("Slurm Array Summary
// Job_id=20_* (20) Name=x Began", "... Ended, FAILED, ExitCode [1-3]",
// "... Ended, Mixed, ExitCode [0-1]"); with ARRAY_TASKS each element mails
// ("Slurm Array Task Job_id=28_2 (28) Name=x Ended, Run time ...").
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/mail_type.hpp"
#include "drover/v1/jobs.pb.h"

namespace drover::ctld {

// The events a job's stored --mail-type (JobDescriptor.mail_type) asks
// for, as common/mail_type.hpp's bits (none if the text does not parse).
unsigned mail_bits(const std::string& mail_type);

struct Mail {
  std::string recipient;
  std::string subject;
  std::vector<std::string> env;  // "K=V"
};

// What a job's event mails, if its --mail-type asks for it. `domain` is
// MailDomain (appended to a recipient without '@'); `cluster` ClusterName.
// `event` is one of the bits above (kMailEnd also covers FAIL: a job that
// failed mails "Failed" when FAIL is set, any other "Ended" when END is).
struct MailContext {
  std::string domain;
  std::string cluster;
};
std::vector<Mail> job_mail(const v1::JobRecord& r, unsigned event, int64_t now, const MailContext& ctx);
// An array's summary mail, for `event` kMailBegin (its first element
// started) or kMailEnd (its last one ended: `elements` are all of them).
std::vector<Mail> array_summary_mail(const std::vector<const v1::JobRecord*>& elements, unsigned event,
                                     const MailContext& ctx);

// Sends mail through MailProg, one message after the other on a thread of
// its own (never on the controller's state thread); a MailProg that does not
// finish within a minute is killed. Failures are logged, each kind once.
class Mailer {
 public:
  using Log = std::function<void(const std::string&)>;
  explicit Mailer(Log log);
  ~Mailer();
  Mailer(const Mailer&) = delete;
  Mailer& operator=(const Mailer&) = delete;
  // Queues the mails for `program` (MailProg as configured now).
  void send(const std::string& program, std::vector<Mail> mails);

 private:
  void run();
  void deliver(const std::string& program, const Mail& m);

  Log log_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, Mail>> queue_;  // (MailProg, mail)
  bool stopping_ = false;
  std::string last_error_;
  std::thread thread_;
};

}  // namespace drover::ctld
