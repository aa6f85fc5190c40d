// Writes one rank's trace file: the header, every host record of every step
// (first pass), every device record (second pass, the same simulation
// replayed from the same seed), the metadata records and the footer, in the
// order Kineto writes them. Nothing but one step's records is held in memory.
#pragma once

#include <string>

#include "synthetic/kineto_writer.h"
#include "synthetic/synthetic_spec.h"

namespace stepscope::synth {

struct RankFile {
  std::string path;
  RankTally tally;
  std::string error;  // empty on success
};

// File name of `rank` inside the output folder (rank0.json.gz, ...).
std::string rank_file_name(const SyntheticSpec& spec, int rank);

// Steps per rank that bring the whole set to about spec.target_bytes of JSON
// (measured on a dry run of two steps); at least 1.
int steps_for_target(const SyntheticSpec& spec);

// Writes rank `rank` with `steps` steps into folder `dir` (which must exist).
RankFile write_rank(const SyntheticSpec& spec, int rank, int steps, const std::string& dir);

}  // namespace stepscope::synth
