// What to generate: the shape of the simulated training job and of the files.
// Every choice is derived from `seed`, so the same spec writes the same bytes.
#pragma once

#include <cstdint>
#include <string>

namespace stepscope::synth {

struct SyntheticSpec {
  int ranks = 8;                 // one file per rank, world_size = ranks
  int steps = 0;                 // ProfilerStep#N per rank; 0: derive from target_bytes
  uint64_t target_bytes = 0;     // uncompressed JSON over all ranks (used when steps == 0)
  int layers = 24;               // transformer blocks per step (events per step scale with it)
  int hidden = 4096;             // model width
  int seq = 2048;                // tokens per sample
  int micro_batch = 1;
  int vocab = 32000;
  int bucket_layers = 4;         // layers of gradients per NCCL all-reduce bucket
  uint64_t seed = 1;
  int gzip_level = 1;            // 0: plain .json; 1..3: .json.gz at that ISA-L level
  int first_step = 10;           // ProfilerStep numbering starts here (warm-up skipped)
};

}  // namespace stepscope::synth
