// srun --multi-prog: a configuration file that gives each task rank its own
// program and arguments, in Slurm's format:
//
//   # comment
//   4-6       hostname
//   1,7       echo task:%t
//   0,2-3     echo offset:%o 'literal %t'
//   *         ./worker
//
// A line names ranks (a comma list of numbers and ranges, or `*` for every
// rank no other line names), then the program, then its arguments. `%t` is
// the task's rank, `%o` its offset among the line's ranks (for `*`, its
// rank); text in single quotes is taken as it is (quotes removed, no
// substitution). A line ending in `\` continues on the next. The arguments
// given to srun after the file's name are added to every task's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace drover {

struct MultiProgLine {
  int line = 0;                       // 1-based, where the record starts
  bool any = false;                   // `*`
  std::vector<int32_t> ranks;         // in the order written (when not `*`)
  int32_t range_top = -1;             // the highest task id it names ("0-3,5": 5); -1 for "*"
  struct Word {
    std::string text;
    bool literal = false;             // from single quotes: no %t/%o
  };
  std::vector<std::vector<Word>> words;  // each word is pieces, literal or not
};

struct MultiProg {
  std::vector<MultiProgLine> lines;
};

// Reads the file's text. Errors are Slurm's lines ("Duplicate record for
// task 1\nLine 2 of configuration file F invalid"); `file` names it in them.
Result<MultiProg> parse_multi_prog(std::string_view text, const std::string& file);

// Every rank in [0, ntasks) has a record and none names a task beyond
// (Slurm's "Invalid task id, 3 >= ntasks", "Configuration file F invalid,
// no record for task id N").
Status check_multi_prog_ranks(const MultiProg& mp, const std::string& file, int32_t ntasks);

// The task count a file implies when srun is given none: one more than the
// highest task id it names (Slurm 22.05's srun ran "0 ...\n1 ..." as two
// tasks, "0-2 ..." as three); nullopt when it names none ("*" alone).
std::optional<int32_t> multi_prog_tasks(const MultiProg& mp);

// The command of task `rank` (its line's words with %t/%o replaced, then
// `extra`); an error when no line names it.
Result<std::vector<std::string>> multi_prog_argv(const MultiProg& mp, int32_t rank,
                                                 const std::vector<std::string>& extra);

}  // namespace drover
