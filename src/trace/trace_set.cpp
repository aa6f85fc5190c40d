#include "trace/trace_set.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <set>
#include <thread>

namespace stepscope::trace {

namespace fs = std::filesystem;

namespace {

bool looks_like_json_file(const std::string& name) {
  return name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".gz");
}

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

std::string base_name(const std::string& path) { return fs::path(path).filename().string(); }

}  // namespace

std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::string& error) {
  std::vector<std::string> files;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(in, ec)) {
        if (entry.is_regular_file(ec) && looks_like_json_file(entry.path().filename().string()))
          found.push_back(entry.path().string());
      }
      if (ec) {
        error = in + ": cannot list folder: " + ec.message();
        return {};
      }
      if (found.empty()) {
        error = in + ": folder holds no .json or .json.gz files";
        return {};
      }
      files.insert(files.end(), found.begin(), found.end());
    } else if (has_glob_chars(in) && !fs::exists(in, ec)) {
      glob_t g{};
      int rc = ::glob(in.c_str(), 0, nullptr, &g);
      if (rc != 0) {
        globfree(&g);
        error = in + ": no file matches this pattern";
        return {};
      }
      for (size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
      globfree(&g);
    } else {
      if (!fs::exists(in, ec)) {
        error = in + ": no such file or folder";
        return {};
      }
      files.push_back(in);
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  if (files.empty()) error = "no input files";
  return files;
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
  std::string error;
  std::vector<std::string> files = expand_inputs(inputs, error);
  if (files.empty()) {
    result.error = error;
    return result;
  }
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
      stores[i] = std::make_unique<EventStore>();
      outcomes[i] = read_trace_file(files[i], *stores[i], per_file);
      if (!outcomes[i].ok) stores[i].reset();  // free a failed rank's memory at once
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();

  TraceSet& set = result.set;
  std::string first_error;  // of a rank dropped under salvage
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
      return result;
    }
    if (o.salvaged) set.warnings.push_back("salvaged " + o.error);
    set.ranks.push_back(std::move(stores[i]));
  }
  if (set.ranks.empty()) {
    result.error = !first_error.empty() ? first_error
                   : n == 1             ? files[0] + ": not a trace"
                                        : "no trace files among " + std::to_string(n) + " inputs";
    return result;
  }

  // Ranks: distributedInfo, then the file name, then the order of the files.
  std::set<int64_t> used;
  std::vector<EventStore*> unresolved;
  for (auto& s : set.ranks) {
    int64_t r = -1;
    if (s->meta.rank && *s->meta.rank >= 0) {
      r = *s->meta.rank;
      s->rank_source = "distributedInfo";
    } else if ((r = rank_from_file_name(s->source_path)) >= 0) {
      s->rank_source = "file name";
    }
    if (r >= 0 && used.count(r)) {
      set.warnings.push_back(s->source_path + ": rank " + std::to_string(r) +
                             " already taken by another file; numbered by order instead");
      r = -1;
    }
    if (r < 0) {
      unresolved.push_back(s.get());
      continue;
    }
    s->rank = r;
    used.insert(r);
  }
  int64_t candidate = 0;
  for (EventStore* s : unresolved) {
    while (used.count(candidate)) ++candidate;
    s->rank = candidate;
    s->rank_source = "order";
    used.insert(candidate);
  }
  std::sort(set.ranks.begin(), set.ranks.end(),
            [](const auto& a, const auto& b) { return a->rank < b->rank; });
  result.ok = true;
  return result;
}

}  // namespace stepscope::trace
