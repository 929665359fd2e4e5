// The shipped platform files load and say what their sources say (docs/sources.md); the schema is
// documented.

#include <doctest/doctest.h>
#include <fstream>
#include <sstream>
#include <string>

#include "platforms/data_dir.hpp"
#include "platforms/gpu_catalog.hpp"
#include "platforms/platform.hpp"
#include "platforms/schema.hpp"

namespace scalecast::platforms {
namespace {

const NodeType& first_type(const Platform& p) { return p.node_types.at(0); }

TEST_SUITE("unit") {
  TEST_CASE("every shipped platform file loads") {
    for (const char* name : {"summit", "sierra", "dgx1-v100", "dgx2h", "dgx-a100-superpod",
                             "dgx-h100-superpod", "perlmutter", "hetero-v100-a100"}) {
      INFO("platform ", name);
      const Platform p = load_platform(name);
      CHECK(p.name == name);
      CHECK(p.total_nodes() > 0);
    }
  }

  TEST_CASE("gpu catalog holds every gpu of the sources") {
    const auto catalog = GpuCatalog::load_file(find_data_file("platforms/gpus.yaml"));
    for (const char* key : {"k80-gk210", "p100-sxm2", "v100-sxm2", "a100-sxm4-40gb",
                            "a100-sxm4-80gb", "h100-sxm5", "h200-sxm"}) {
      INFO("gpu ", key);
      CHECK(catalog.contains(key));
    }
    const GpuSpec& v100 = catalog.at("v100-sxm2");
    CHECK(v100.fp32_flops == doctest::Approx(15.7e12));
    CHECK(v100.tensor_fp16_flops == doctest::Approx(125e12));
    CHECK(v100.memory_bandwidth == doctest::Approx(900e9));
    // The 32 GB part is the same silicon at the same clocks: priced by the 16 GB part's data.
    CHECK(v100.calibration_device() == "v100-sxm2");
    CHECK(catalog.at("v100-sxm2-32gb").calibration_device() == "v100-sxm2");
    const GpuSpec& h100 = catalog.at("h100-sxm5");
    CHECK(h100.tensor_fp8_flops == doctest::Approx(1978.9e12));
    CHECK(h100.nvlink_links * h100.nvlink_link_bandwidth == doctest::Approx(450e9));
  }

  TEST_CASE("summit node matches the olcf guide") {
    const Platform p = load_platform("summit");
    CHECK(p.total_nodes() == 4608);
    const NodeType& t = first_type(p);
    CHECK(t.gpu_count == 6);
    CHECK(t.cpu.sockets == 2);
    CHECK(t.socket_of_gpu == std::vector<int>{0, 0, 0, 1, 1, 1});
    CHECK(t.nic_of_gpu == std::vector<int>{0, 0, 0, 1, 1, 1});
    CHECK(t.nic_of_socket == std::vector<int>{0, 1});
    CHECK(t.nvme.read_Bps == doctest::Approx(5.5e9));
    CHECK(p.pfs.read_bandwidth_Bps == doctest::Approx(2.5e12));
    // GPU0 -> GPU4 crosses sockets: NVLink, X-Bus, NVLink.
    const NodeRoutes r = compute_node_routes(t);
    const auto& route = r.route(t.vertex(VertexKind::kGpu, 0), t.vertex(VertexKind::kGpu, 4));
    REQUIRE(route.size() == 3);
    CHECK(t.links[route[1].link].link_class == "xbus");
  }

  TEST_CASE("dgx1 gpus share a nic per pcie switch") {
    const Platform p = load_platform("dgx1-v100");
    const NodeType& t = first_type(p);
    CHECK(t.nic_of_gpu == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
    int nvlinks = 0;
    for (const auto& l : t.links) nvlinks += l.link_class == "nvlink" ? 1 : 0;
    CHECK(nvlinks == 16);  // 16 linked pairs [nccl#671], [DLPerf]
  }

  TEST_CASE("heterogeneous example mixes v100 and a100 partitions") {
    const Platform p = load_platform("hetero-v100-a100");
    REQUIRE(p.partitions.size() == 2);
    CHECK(p.node_types[p.partitions[0].node_type].gpu.name == "v100-sxm2");
    CHECK(p.node_types[p.partitions[1].node_type].gpu.name == "a100-sxm4-80gb");
  }

  TEST_CASE("the readme example platform parses") {
    std::ifstream in(std::string(SCALECAST_SOURCE_DIR) + "/platforms/README.md");
    std::stringstream text;
    text << in.rdbuf();
    const std::string readme = text.str();
    const auto begin = readme.find("```yaml\n", readme.find("<!-- example-platform -->"));
    const auto end = readme.find("```\n<!-- /example-platform -->");
    REQUIRE(begin != std::string::npos);
    REQUIRE(end != std::string::npos);
    const std::string yaml = readme.substr(begin + 8, end - begin - 8);
    const Platform p =
        parse_platform(yaml, "README.md", std::string(SCALECAST_SOURCE_DIR) + "/platforms");
    CHECK(p.total_nodes() == 16);
    CHECK(p.node_types[0].nic.bandwidth_Bps == doctest::Approx(3.125e9));
  }

  TEST_CASE("schema documents every key in the readme") {
    std::ifstream in(std::string(SCALECAST_SOURCE_DIR) + "/platforms/README.md");
    std::stringstream text;
    text << in.rdbuf();
    const std::string readme = text.str();
    REQUIRE(!readme.empty());
    for (const auto* table : {&platform_schema(), &gpu_catalog_schema()}) {
      for (const auto& f : *table) {
        INFO("key ", f.key);
        std::string quoted(1, '`');
        quoted.append(f.key);
        quoted.push_back('`');
        CHECK(readme.find(quoted) != std::string::npos);
      }
    }
    CHECK(format_schema().find("network.levels[].oversubscription") != std::string::npos);
  }
}

}  // namespace
}  // namespace scalecast::platforms
