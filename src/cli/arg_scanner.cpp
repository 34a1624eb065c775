#include "cli/arg_scanner.hpp"

#include <fmt/format.h>

namespace drover::cli {
namespace {

struct Scanner {
  const std::vector<std::string>& args;
  std::span<const OptionSpec> specs;
  std::string_view program;
  std::size_t next = 0;  // index of the next unread word
  ScanResult out;

  Error fail(const std::string& what) const { return make_error(fmt::format("{}: {}", program, what)); }

  // Exact long-name match, else the unique (by id) prefix match.
  Result<const OptionSpec*> find_long(std::string_view name, std::string_view whole_word) const {
    std::vector<const OptionSpec*> hits;
    for (const auto& s : specs) {
      if (s.long_name.empty()) continue;
      if (s.long_name == name) return &s;
      if (s.long_name.substr(0, name.size()) == name) hits.push_back(&s);
    }
    if (hits.empty()) return fail(fmt::format("unrecognized option '{}'", whole_word));
    bool one_id = true;
    for (const auto* h : hits) one_id = one_id && h->id == hits.front()->id && h->arg == hits.front()->arg;
    if (one_id) return hits.front();
    std::string list;
    for (const auto* h : hits) list += fmt::format(" '--{}'", h->long_name);
    return fail(fmt::format("option '{}' is ambiguous; possibilities:{}", whole_word, list));
  }

  Status long_option(const std::string& word) {
    std::string_view body = std::string_view(word).substr(2);
    auto eq = body.find('=');
    std::string_view name = body.substr(0, eq);
    auto spec = find_long(name, word);
    if (!spec) return spec.error();
    const OptionSpec& s = **spec;
    ScannedOption opt{s.id, fmt::format("--{}", s.long_name), std::nullopt};
    if (eq != std::string_view::npos) {
      if (s.arg == ArgKind::kNone) return fail(fmt::format("option '--{}' doesn't allow an argument", s.long_name));
      opt.value = std::string(body.substr(eq + 1));
    } else if (s.arg == ArgKind::kRequired) {
      if (next >= args.size()) return fail(fmt::format("option '--{}' requires an argument", s.long_name));
      opt.value = args[next++];
    }
    out.options.push_back(std::move(opt));
    return {};
  }

  const OptionSpec* find_short(char c) const {
    for (const auto& s : specs)
      if (s.short_name == c) return &s;
    return nullptr;
  }

  Status short_bundle(const std::string& word) {
    for (std::size_t i = 1; i < word.size(); ++i) {
      const OptionSpec* s = find_short(word[i]);
      if (!s) return fail(fmt::format("invalid option -- '{}'", word[i]));
      ScannedOption opt{s->id, fmt::format("-{}", word[i]), std::nullopt};
      std::string rest = word.substr(i + 1);
      if (s->arg == ArgKind::kNone) {
        out.options.push_back(std::move(opt));
        continue;
      }
      if (!rest.empty()) {
        opt.value = rest;
      } else if (s->arg == ArgKind::kRequired) {
        if (next >= args.size()) return fail(fmt::format("option requires an argument -- '{}'", word[i]));
        opt.value = args[next++];
      }
      out.options.push_back(std::move(opt));
      return {};
    }
    return {};
  }

  Status run(OperandMode mode) {
    while (next < args.size()) {
      const std::string& word = args[next++];
      if (word == "--") {
        out.operands.insert(out.operands.end(), args.begin() + static_cast<long>(next), args.end());
        break;
      }
      bool is_option = word.size() > 1 && word[0] == '-';
      if (!is_option) {
        out.operands.push_back(word);
        if (mode == OperandMode::kStopAtFirst) {
          out.operands.insert(out.operands.end(), args.begin() + static_cast<long>(next), args.end());
          break;
        }
        continue;
      }
      Status st = word[1] == '-' ? long_option(word) : short_bundle(word);
      if (!st) return st;
    }
    return {};
  }
};

}  // namespace

Result<ScanResult> scan_args(const std::vector<std::string>& args, std::span<const OptionSpec> specs,
                             OperandMode mode, std::string_view program) {
  Scanner sc{args, specs, program, 0, {}};
  Status st = sc.run(mode);
  if (!st) return st.error();
  return std::move(sc.out);
}

std::string getopt_error_text(const Error& error, std::string_view program) {
  // Slurm 22.05's sacct and sstat stop at getopt's line; the others add where help is.
  if (program == "sacct" || program == "sstat") return fmt::format("{}\n", error.message);
  return fmt::format("{}\nTry \"{} --help\" for more information\n", error.message, program);
}

}  // namespace drover::cli
