#include "trace/trace_set.h"

#include "trace/process_windows.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <new>
#include <set>
#include <system_error>
#include <thread>

namespace stepscope::trace {

namespace fs = std::filesystem;

namespace {

bool looks_like_json_file(const std::string& name) {
  return name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".gz");
}

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

std::string base_name(const std::string& path) { return fs::path(path).filename().string(); }

// Why `path` cannot be opened as a file, from stat's errno; a link whose
// target is missing says so (and where it points).
std::string why_unusable(const std::string& path, int err) {
  struct stat lst{};
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(path, ec);
    return "broken symbolic link" + (ec ? std::string() : " (to " + target.string() + ")");
  }
  return err == ENOENT ? "no such file or folder" : std::strerror(err);
}

// A file found in a folder or by a pattern: where it is and what it is.
struct Candidate {
  std::string path;
  dev_t dev = 0;
  ino_t ino = 0;
};

// Adds `path` (an entry of a folder or a pattern's match) when it is a
// readable regular file; a broken link or an unreadable file is skipped with
// a warning naming it, so the result never depends on listing order.
void add_listed(const std::string& path, std::vector<Candidate>& out, ExpandedInputs& r) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    r.warnings.push_back("skipped " + path + ": " + why_unusable(path, errno));
    return;
  }
  if (!S_ISREG(st.st_mode)) return;  // a folder named x.json, a device: not a trace
  if (::access(path.c_str(), R_OK) != 0) {
    r.warnings.push_back("skipped " + path + ": " + std::strerror(errno));
    return;
  }
  out.push_back({path, st.st_dev, st.st_ino});
}

// One line for several files without an event: the first three by name.
std::string no_rank_analysable(const std::vector<std::string>& empty) {
  std::string out = "no analysable event in any of the " + std::to_string(empty.size()) + " files: ";
  // Each entry is "<file> (<why>)".
  for (size_t i = 0; i < empty.size() && i < 3; ++i) out += (i ? "; " : "") + empty[i];
  if (empty.size() > 3) out += "; and " + std::to_string(empty.size() - 3) + " more";
  return out;
}

}  // namespace

// Why a file that was read has no event to analyse.
std::string nothing_analysable(const EventStore& store) {
  std::string out = "(no complete 'X' or instant 'i' event kept from traceEvents";
  if (std::string why = import_warning(store.stats); !why.empty()) out += "; " + why;
  if (uint64_t other = store.stats.count(ImportCounter::kUnknownPhase))
    out += "; " + std::to_string(other) + " record" + (other == 1 ? "" : "s") + " of other phases ignored";
  return out + ")";
}

ExpandedInputs expand_input_files(const std::vector<std::string>& inputs) {
  ExpandedInputs r;
  std::vector<Candidate> found;
  for (const auto& in : inputs) {
    struct stat st{};
    const bool exists = ::stat(in.c_str(), &st) == 0;
    const int stat_errno = errno;
    if (exists && S_ISDIR(st.st_mode)) {
      // Names first, sorted, then each looked at: a deterministic order.
      std::vector<std::string> names;
      std::error_code ec;
      fs::directory_iterator it(in, ec), end;
      for (; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (looks_like_json_file(name)) names.push_back(it->path().string());
      }
      if (ec) {
        r.error = in + ": cannot list folder: " + ec.message();
        return r;
      }
      std::sort(names.begin(), names.end());
      const size_t before = found.size(), warned = r.warnings.size();
      for (const auto& name : names) add_listed(name, found, r);
      if (found.size() == before) {
        r.error = in + ": folder holds no .json or .json.gz files";
        if (r.warnings.size() > warned) r.error += " that can be read (" + r.warnings[warned] + ")";
        return r;
      }
    } else if (!exists && has_glob_chars(in)) {
      glob_t g{};
      int rc = ::glob(in.c_str(), 0, nullptr, &g);  // matches come sorted
      if (rc != 0) {
        globfree(&g);
        r.error = in + ": no file matches this pattern";
        return r;
      }
      const size_t before = found.size(), warned = r.warnings.size();
      for (size_t i = 0; i < g.gl_pathc; ++i) add_listed(g.gl_pathv[i], found, r);
      globfree(&g);
      if (found.size() == before) {
        r.error = in + ": no file that can be read matches this pattern";
        if (r.warnings.size() > warned) r.error += " (" + r.warnings[warned] + ")";
        return r;
      }
    } else if (!exists) {
      r.error = in + ": " + why_unusable(in, stat_errno);
      return r;
    } else {
      found.push_back({in, st.st_dev, st.st_ino});
    }
  }
  // One file is one rank however it is named (a.json, ./a.json, a link to
  // it, a folder and the file inside it): identified by device and inode.
  std::stable_sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) { return a.path < b.path; });
  std::map<std::pair<dev_t, ino_t>, std::string> seen;
  for (const auto& c : found) {
    auto [at, fresh] = seen.emplace(std::make_pair(c.dev, c.ino), c.path);
    if (fresh) {
      r.files.push_back(c.path);
    } else if (at->second != c.path &&
               std::find(r.notes.begin(), r.notes.end(), c.path + ": the same file as " + at->second + ", read once") ==
                   r.notes.end()) {
      r.notes.push_back(c.path + ": the same file as " + at->second + ", read once");
    }
  }
  if (r.files.empty()) r.error = "no input files";
  return r;
}

std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::string& error) {
  ExpandedInputs r = expand_input_files(inputs);
  error = r.error;
  if (!r.error.empty()) r.files.clear();
  return r.files;
}

RankClaim rank_claim(const EventStore& store) {
  RankClaim c;
  c.path = store.source_path;
  if (store.meta.rank && *store.meta.rank >= 0) c.declared = store.meta.rank;
  c.from_file_name = rank_from_file_name(store.source_path);
  return c;
}

int64_t rank_from_file_name(const std::string& path) {
  std::string name = base_name(path);
  std::string lower(name.size(), '\0');
  std::transform(name.begin(), name.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view word : {"rank", "worker"}) {
    size_t at = 0;
    while ((at = lower.find(word, at)) != std::string::npos) {
      size_t i = at + word.size();
      if (i < lower.size() && (lower[i] == '-' || lower[i] == '_')) ++i;
      size_t start = i;
      while (i < lower.size() && std::isdigit(static_cast<unsigned char>(lower[i]))) ++i;
      if (i > start && i - start < 10) return std::stoll(lower.substr(start, i - start));
      at += word.size();
    }
  }
  return -1;
}

unsigned reading_threads(unsigned requested) {
  return requested ? requested : std::max(1u, std::thread::hardware_concurrency());
}

LoadResult load_traces(const std::vector<std::string>& inputs, const ReadOptions& options,
                       unsigned threads) {
  LoadResult result;
  ExpandedInputs expanded = expand_input_files(inputs);
  if (!expanded.error.empty()) {
    result.error = expanded.error;
    return result;
  }
  const std::vector<std::string>& files = expanded.files;
  result.set.notes = std::move(expanded.notes);
  result.set.warnings = std::move(expanded.warnings);
  const size_t n = files.size();
  std::vector<std::unique_ptr<EventStore>> stores(n);
  std::vector<ReadOutcome> outcomes(n);
  threads = reading_threads(threads);
  // With at least two cores per file, each file is also read as a pipeline
  // (inflate + tokenize on one thread, parse on another).
  ReadOptions per_file = options;
  if (threads >= 2 * n) per_file.pipeline = true;
  threads = static_cast<unsigned>(std::min<size_t>(threads, n));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      // An exception must not escape a reading thread (std::terminate):
      // it becomes this file's error.
      try {
        stores[i] = std::make_unique<EventStore>();
        outcomes[i] = read_trace_file(files[i], *stores[i], per_file);
      } catch (const std::bad_alloc&) {
        outcomes[i] = ReadOutcome{};
        outcomes[i].error = files[i] + ": out of memory while reading";
      } catch (const std::exception& e) {
        outcomes[i] = ReadOutcome{};
        outcomes[i].error = files[i] + ": " + e.what();
      }
      if (!outcomes[i].ok) stores[i].reset();  // free a failed rank's memory at once
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    // A thread that cannot be started (address-space or process limits)
    // leaves its files to the others: slower, not a failure.
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;
    }
  }
  work();
  for (auto& t : pool) t.join();

  TraceSet& set = result.set;
  std::string first_error;  // of a rank dropped under salvage
  std::vector<std::string> empty;  // "<file> (<why>)" per rank without an analysable event
  std::string only_empty_error;    // the error when it is the only one
  bool from_folder = false;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec) || has_glob_chars(in)) from_folder = true;
  }
  for (size_t i = 0; i < n; ++i) {
    const ReadOutcome& o = outcomes[i];
    set.uncompressed_bytes += o.uncompressed_bytes;
    set.file_bytes += o.file_bytes;
    if (o.not_a_trace && (from_folder || n > 1)) {
      set.notes.push_back("skipped " + o.error);
      continue;
    }
    if (!o.ok && options.salvage && !o.not_a_trace) {
      // Nothing of this rank was readable: analyse the others and say so.
      if (first_error.empty()) first_error = o.error;
      set.warnings.push_back("dropped " + o.error);
      continue;
    }
    if (!o.ok) {
      result.error = o.error;
      result.error_file = files[i];
      result.error_byte = o.error_byte;
      return result;
    }
    if (o.salvaged) set.warnings.push_back("salvaged " + o.error);
    if (stores[i]->events.size() == 0) {
      // Nothing to analyse: among good ranks it is dropped, alone it is the error.
      const std::string why = nothing_analysable(*stores[i]);
      empty.push_back(files[i] + " " + why);
      set.warnings.push_back("dropped " + files[i] + ": no analysable event " + why);
      if (empty.size() == 1) only_empty_error = files[i] + ": no analysable event " + why;
      stores[i].reset();
      continue;
    }
    set.ranks.push_back(std::move(stores[i]));
  }
  if (set.ranks.empty() && !empty.empty()) {
    result.error = empty.size() == 1 ? only_empty_error : no_rank_analysable(empty);
    if (empty.size() == 1 && n == 1) result.error_file = files[0];
    return result;
  }
  if (set.ranks.empty()) {
    result.error = !first_error.empty() ? first_error
                   : n == 1             ? files[0] + ": not a trace"
                                        : "no trace files among " + std::to_string(n) + " inputs";
    if (n == 1) result.error_file = files[0];
    return result;
  }

  // Files of one process (several exported windows) are one rank.
  for (std::string& note : merge_process_windows(set.ranks)) set.notes.push_back(std::move(note));

  // Ranks: distributedInfo, then the file name, then the order of the files.
  std::vector<RankClaim> claims;
  for (const auto& s : set.ranks) claims.push_back(rank_claim(*s));
  const std::vector<NumberedRank> numbered = number_ranks(claims, set.warnings);
  for (size_t i = 0; i < set.ranks.size(); ++i) {
    set.ranks[i]->rank = numbered[i].rank;
    set.ranks[i]->rank_source = numbered[i].source;
  }
  std::sort(set.ranks.begin(), set.ranks.end(),
            [](const auto& a, const auto& b) { return a->rank < b->rank; });
  result.ok = true;
  return result;
}

}  // namespace stepscope::trace
