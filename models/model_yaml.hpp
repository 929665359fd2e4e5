#pragma once
// The model description format: a user's network as YAML, built from the same layer types as the
// zoo (format in models/README.md). Loading checks every key and value and then runs shape
// inference, so a malformed file fails with a ConfigError at the offending line before anything
// is simulated. to_yaml() writes any model (zoo ones included) back in the same format.

#include <string>

#include "common/config_node.hpp"
#include "models/model.hpp"

namespace scalecast::models {

Model load_model_file(const std::string& path);
Model load_model_string(const std::string& text, const std::string& name);
Model parse_model(const common::ConfigNode& root);

// The model as a description file that load_model_string() reads back into an equal model.
std::string to_yaml(const Model& model);

}  // namespace scalecast::models
