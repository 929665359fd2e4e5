#pragma once
// The scenario keys read against the model it names (scenario.cpp calls these): the loader that
// puts a missing platform or model at the key naming it, `seq_len` and `attention`, and the
// check that the model, batch and precision fit every GPU of the platform.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "platforms/platform.hpp"
#include "sim/scenario.hpp"

namespace scalecast::sim {

// Loads the platform or model a scenario key names. When it cannot be found at all (a ConfigError
// with no line of its own, or the zoo's std::invalid_argument for an unknown name) the error is
// the key's, at the key's place; errors inside an existing file keep that file's location.
template <class F>
auto load_named_by(const common::ConfigNode& key, F&& load) {
  try {
    return load();
  } catch (const common::ConfigError& e) {
    if (e.line() > 0) throw;
    // An unlocated error about the file itself (not found, not a regular file): at the key that
    // names it, saying which file.
    key.fail(e.file().empty() || e.file() == key.as_string() ? e.message()
                                                             : e.file() + ": " + e.message());
  } catch (const std::invalid_argument& e) {
    key.fail(e.what());
  }
}

// seq_len: tokens per sequence, only for a model whose input is token ids, and no longer than
// the model allows (BERT's 512-row position table); the model is loaded to check both.
std::int64_t load_seq_len(const common::ConfigNode& n, const common::ConfigNode& model_key,
                          const std::string& model_name);

// attention: fused or unfused, only for a model with attention layers (a key that changes
// nothing would mislead); true for fused.
bool load_attention(const common::ConfigNode& n, const common::ConfigNode& model_key,
                    const std::string& model_name);

// The model, batch and precision must fit every GPU the job can be placed on (each node type of
// the platform): weights, gradients, optimizer state, kept activations, input batches and a
// workspace (models/memory_estimate.hpp), against the GPU catalog's memory. Fails at
// batch_per_gpu (else model) saying by how much.
void check_memory(const common::ConfigNode& root, const Scenario& s,
                  const platforms::Platform& machine);

}  // namespace scalecast::sim
