#pragma once
// The `scalecast describe` topics, one file each (describe_<topic>.cpp), so each layer's
// self-description lives next to nothing else. Each prints to stdout and returns the exit code.

#include <optional>
#include <string>

namespace scalecast::cli {

struct DescribeModelOptions {
  std::string name;  // zoo name or path to a model YAML file
  int batch = 1;     // samples per GPU
  std::string precision = "fp32";
  int seq_len = 0;    // transformers: sequence length (0 = model default)
  bool yaml = false;  // print the model description (YAML) instead of the table
  // Given on the command line: a transformer is described per sequence and per token, so
  // neither applies to it (they were silently ignored).
  bool batch_given = false, precision_given = false;
};

int describe_units();
// nodes given: the machine resized to that many nodes (partition: the one that grows, "" =
// largest), as a scenario's cluster.nodes builds it, with its switch-level link counts. Command-
// line misuse throws CLI::ValidationError (exit 2): a count the topology rule cannot build (below
// 1, beyond the limit), an unknown partition, a partition without nodes, schema_only with a name,
// nodes or a partition, and a platform name or path that names no file.
int describe_platform(const std::string& name_or_path, bool schema_only,
                      std::optional<long> nodes = std::nullopt, const std::string& partition = "");
int describe_model(const DescribeModelOptions& options);
int describe_calibration(const std::string& file);

}  // namespace scalecast::cli
