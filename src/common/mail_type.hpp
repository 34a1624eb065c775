// --mail-type: Slurm's mail events as a bit set, read from and written as
// its comma list. One table for the commands (which check what users type),
// the stored job (JobDescriptor.mail_type) and the controller (which mails).
#pragma once

#include <string>
#include <string_view>

#include "common/result.hpp"

namespace drover {

enum MailEvent : unsigned {
  kMailNone = 0,
  kMailBegin = 1u << 0,
  kMailEnd = 1u << 1,
  kMailFail = 1u << 2,
  kMailRequeue = 1u << 3,
  kMailInvalidDepend = 1u << 4,
  kMailStageOut = 1u << 5,
  kMailTimeLimit = 1u << 6,
  kMailTimeLimit90 = 1u << 7,
  kMailTimeLimit80 = 1u << 8,
  kMailTimeLimit50 = 1u << 9,
  kMailArrayTasks = 1u << 10,
};

// Comma list of NONE BEGIN END FAIL REQUEUE ALL INVALID_DEPEND STAGE_OUT
// TIME_LIMIT TIME_LIMIT_90/80/50 ARRAY_TASKS (any case). ALL = BEGIN|END|FAIL|
// INVALID_DEPEND|REQUEUE|STAGE_OUT. The error names the unknown item.
Result<unsigned> parse_mail_type(std::string_view s);
// The bit set as the comma list Slurm's scontrol shows ("BEGIN,END,FAIL").
std::string mail_type_text(unsigned bits);

}  // namespace drover
