// `scalecast describe`: what a platform, model, calibration database or unit means to scalecast.

#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "cli/describe.hpp"

namespace scalecast::cli {

void add_describe_command(CLI::App& app, Action& action) {
  CLI::App* sub = app.add_subcommand(
      "describe", "Explain a platform, model, calibration database or the accepted units");
  sub->require_subcommand(1);

  CLI::App* units = sub->add_subcommand("units", "List every accepted unit suffix with an example");
  units->callback([&action] { action = [] { return describe_units(); }; });

  auto platform = std::make_shared<std::string>();
  auto schema = std::make_shared<bool>(false);
  CLI::App* p = sub->add_subcommand(
      "platform", "Summarize a machine (nodes, GPUs, links, network, storage) and its YAML schema");
  p->add_option("name", *platform,
                "Platform name (platforms/NAME.yaml) or path to a platform file");
  p->add_flag("--schema", *schema, "Print only the documented schema of platform files");
  auto nodes = std::make_shared<long>(0);
  auto partition = std::make_shared<std::string>();
  CLI::Option* nodes_opt =
      p->add_option("--nodes", *nodes,
                    "Show the machine grown or shrunk to this many nodes by its topology rule "
                    "(what a scenario's cluster.nodes builds)");
  p->add_option("--partition", *partition,
                "With --nodes: the partition that grows (default: the largest)");
  p->callback([platform, schema, nodes, partition, nodes_opt, &action] {
    // Given or not, not a sentinel value: --nodes 0 and --nodes -5 are errors, not "absent".
    const std::optional<long> n =
        nodes_opt->count() > 0 ? std::optional<long>(*nodes) : std::nullopt;
    action = [platform, schema, n, partition] {
      return describe_platform(*platform, *schema, n, *partition);
    };
  });

  auto model = std::make_shared<DescribeModelOptions>();
  CLI::App* m =
      sub->add_subcommand("model", "Per-layer table (shapes, params, FLOPs, bytes) and totals");
  m->add_option("name", model->name, "Zoo model name (e.g. resnet50) or path to a model YAML file")
      ->required();
  CLI::Option* batch = m->add_option("-b,--batch", model->batch, "Samples per GPU")
                           ->check(CLI::Range(1, 1000000))
                           ->capture_default_str();
  CLI::Option* precision =
      m->add_option("--precision", model->precision, "fp32, fp16 (mixed), bf16 or tf32")
          ->check(CLI::IsMember({"fp32", "fp16", "bf16", "tf32"}))
          ->capture_default_str();
  m->add_option("--seq-len", model->seq_len, "Sequence length for transformers (0: model default)")
      ->check(CLI::Range(0, 1073741824));
  m->add_flag("--yaml", model->yaml,
              "Print the model in the description format (a starting point for your own)");
  m->callback([model, batch, precision, &action] {
    model->batch_given = batch->count() > 0;
    model->precision_given = precision->count() > 0;
    action = [model] { return describe_model(*model); };
  });

  auto calib = std::make_shared<std::string>();
  CLI::App* c =
      sub->add_subcommand("calibration", "Coverage and fitted curves of a calibration database");
  c->add_option("file", *calib, "Calibration database file")->required()->check(CLI::ExistingFile);
  c->callback([calib, &action] { action = [calib] { return describe_calibration(*calib); }; });
}

}  // namespace scalecast::cli
